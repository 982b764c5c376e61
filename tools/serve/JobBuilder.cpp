#include "tools/serve/JobBuilder.h"

#include "tools/serve/ChatPrompt.h"

#include <algorithm>
#include <mutex>
#include <random>

namespace strata::serve {

namespace {

bool fail(ApiError &error, const std::string &param, const std::string &message,
          const char *code) {
  error.status = 400;
  error.type = "invalid_request_error";
  error.param = param;
  error.message = message;
  error.code = code;
  return false;
}

std::string tokens(int64_t n) {
  return std::to_string(n) + (n == 1 ? " token" : " tokens");
}

} // namespace

uint64_t freshRandom() {
  static std::mutex mutex;
  static std::mt19937_64 generator = [] {
    std::random_device device;
    std::seed_seq seq{device(), device(), device(), device()};
    return std::mt19937_64(seq);
  }();
  std::lock_guard<std::mutex> lock(mutex);
  return generator();
}

bool buildJob(const ApiRequest &request, const ServedModel &model,
              ServeJob &job, ApiError &error) {
  if (!request.model.empty() && request.model != model.name)
    return fail(error, "model",
                "the model '" + request.model +
                    "' does not exist; this server serves '" + model.name + "'",
                "model_not_found");
  const std::string field = request.promptField();
  std::vector<int32_t> ids;
  try {
    if (request.endpoint == Endpoint::ChatCompletions) {
      if (!model.chatFormat)
        return fail(error, field, model.noChatFormat,
                    "chat_format_unavailable");
      std::string text;
      if (!chatPromptText(*model.chatFormat, request.messages, text, error))
        return false;
      // The chat text writes the special tokens itself.
      ids = model.tokenizer->encode(text, /*addSpecial=*/false);
    } else if (request.promptIsIds) {
      for (int64_t id : request.promptIds) {
        if (id >= model.vocabSize)
          return fail(error, field,
                      "'prompt': token id " + std::to_string(id) +
                          " is outside the model's vocabulary (ids 0 to " +
                          std::to_string(model.vocabSize - 1) + ")",
                      "invalid_value");
        ids.push_back(int32_t(id));
      }
    } else {
      // As `strata run --prompt`: with what the post-processor adds (BOS).
      ids = model.tokenizer->encode(request.promptText, /*addSpecial=*/true);
    }
  } catch (const tok::TokenizerError &e) {
    return fail(error, field, "'" + field + "' cannot be encoded: " + e.what(),
                "invalid_value");
  }
  if (ids.empty())
    return fail(error, field,
                "'" + field +
                    "': the prompt is empty (it encodes to no "
                    "tokens)",
                "invalid_value");

  // Every position of the prompt and the completion must be within the
  // model's context, and the whole request must fit the KV pool at once
  // (the engine refuses a request larger than the pool).
  const int64_t prompt = int64_t(ids.size());
  if (prompt >= model.contextLength)
    return fail(error, field,
                "'" + field + "': this model's maximum context length is " +
                    tokens(model.contextLength) + ", and the prompt has " +
                    tokens(prompt) +
                    " (at least one position must be left for the "
                    "completion)",
                "context_length_exceeded");
  if (prompt >= model.poolTokens)
    return fail(error, field,
                "'" + field + "': the prompt has " + tokens(prompt) +
                    "; this server's KV pool holds at most " +
                    tokens(model.poolTokens) +
                    " per request (--kv-blocks), one of which must be left "
                    "for the completion",
                "context_length_exceeded");
  const int64_t room = std::min(model.contextLength, model.poolTokens) - prompt;
  int64_t maxNew = room;
  if (request.maxTokens) {
    maxNew = *request.maxTokens;
    const std::string &name = request.maxTokensField;
    const std::string asked = "the prompt (" + tokens(prompt) + ") and '" +
                              name + "' (" + std::to_string(maxNew) +
                              ") make " + tokens(prompt + maxNew);
    if (prompt + maxNew > model.contextLength)
      return fail(error, name,
                  asked +
                      ", more than this model's maximum context length "
                      "of " +
                      tokens(model.contextLength),
                  "context_length_exceeded");
    if (prompt + maxNew > model.poolTokens)
      return fail(error, name,
                  asked +
                      ", more than this server's KV pool holds for a "
                      "request (" +
                      tokens(model.poolTokens) + ", --kv-blocks)",
                  "context_length_exceeded");
  } else if (request.endpoint == Endpoint::Completions) {
    maxNew = std::min(maxNew, kDefaultCompletionTokens);
  }

  job.request.prompt = std::move(ids);
  job.request.maxNewTokens = maxNew;
  job.request.sampling = request.sampling;
  // Draws depend on the seed and the token index only, so requests
  // without a seed each get their own; with one they are reproducible.
  if (!request.seeded)
    job.request.sampling.seed = freshRandom() >> 1;
  if (!request.ignoreEos)
    job.request.stopTokens = model.eosIds;
  job.stops = request.stop;
  return true;
}

} // namespace strata::serve

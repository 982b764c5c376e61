// From a request body, read (OpenAiRequest.h), to the engine's request:
// the prompt's ids (text encoded with the model's tokenizer, a chat
// written in its chat format), the token budget checked against the
// model's context and the KV pool, the sampling (a fresh seed when none was
// given), the EOS ids and the stop strings.
#ifndef STRATA_TOOLS_SERVE_JOBBUILDER_H
#define STRATA_TOOLS_SERVE_JOBBUILDER_H

#include "runtime/tokenizer/ChatFormat.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "tools/serve/EngineLoop.h"
#include "tools/serve/OpenAiRequest.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::serve {

/// What the server knows of the model it serves.
struct ServedModel {
  /// The name requests must give in "model" (or leave out).
  std::string name;
  /// When the server started (Unix seconds), for GET /v1/models.
  int64_t created = 0;
  /// Positions a sequence may take: the prompt and the generated tokens.
  int64_t contextLength = 0;
  /// Tokens one request may hold in the KV pool (the pool's blocks times
  /// their size; the context length for a model without a cache).
  int64_t poolTokens = 0;
  int64_t vocabSize = 0;
  const tok::Tokenizer *tokenizer = nullptr;
  /// The chat format; when there is none, `noChatFormat` says why chat
  /// requests are refused.
  std::optional<tok::ChatFormat> chatFormat;
  std::string noChatFormat;
  std::vector<int32_t> eosIds;
};

/// Completions without max_tokens generate OpenAI's default of 16 tokens
/// (fewer when the context or the pool ends first); chat completions
/// without it may run to the end of the context.
constexpr int64_t kDefaultCompletionTokens = 16;

/// Fills `job` (all but its channel and arrival) for `request`. False with
/// `error` (status 400, naming the field) when the model is not the one
/// served, the prompt does not encode or is empty, a token id is outside
/// the vocabulary, the conversation has another shape than the chat format
/// takes, or the prompt and token budget do not fit the context or the
/// pool.
bool buildJob(const ApiRequest &request, const ServedModel &model,
              ServeJob &job, ApiError &error);

/// A random 64-bit number: the seed of a request that gives none, and
/// response ids.
uint64_t freshRandom();

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_JOBBUILDER_H

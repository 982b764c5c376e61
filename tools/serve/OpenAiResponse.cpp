#include "tools/serve/OpenAiResponse.h"

#include <nlohmann/json.hpp>

namespace strata::serve {

namespace {

using Json = nlohmann::ordered_json;

// Generated text is valid UTF-8 (the decoder writes U+FFFD for bytes that
// are not), but a JSON writer must never throw on the way out.
std::string dump(const Json &json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json nullOr(const std::string &text) {
  return text.empty() ? Json(nullptr) : Json(text);
}

Json usageJson(const Usage &usage) {
  return Json{{"prompt_tokens", usage.promptTokens},
              {"completion_tokens", usage.completionTokens},
              {"total_tokens", usage.promptTokens + usage.completionTokens}};
}

bool isChat(const ResponseMeta &meta) {
  return meta.endpoint == Endpoint::ChatCompletions;
}

Json envelope(const ResponseMeta &meta, bool chunk) {
  const char *object =
      isChat(meta) ? (chunk ? "chat.completion.chunk" : "chat.completion")
                   : "text_completion";
  return Json{{"id", meta.id},
              {"object", object},
              {"created", meta.created},
              {"model", meta.model}};
}

} // namespace

const char *finishReasonName(FinishReason reason) {
  return reason == FinishReason::Length ? "length" : "stop";
}

std::string errorJson(const ApiError &error) {
  return dump(Json{{"error", Json{{"message", error.message},
                                  {"type", error.type},
                                  {"param", nullOr(error.param)},
                                  {"code", nullOr(error.code)}}}});
}

std::string completionJson(const ResponseMeta &meta, const std::string &text,
                           FinishReason finish, const Usage &usage) {
  Json choice{{"index", 0}};
  if (isChat(meta))
    choice["message"] = Json{{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finishReasonName(finish);
  Json body = envelope(meta, false);
  body["choices"] = Json::array({choice});
  body["usage"] = usageJson(usage);
  return dump(body);
}

std::string chunkEvent(const ResponseMeta &meta, const std::string &text,
                       const char *finish, bool roleChunk, bool usageNull) {
  Json choice{{"index", 0}};
  if (isChat(meta)) {
    Json delta = Json::object();
    if (roleChunk) {
      delta["role"] = "assistant";
      delta["content"] = "";
    } else if (!finish) {
      delta["content"] = text;
    }
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish ? Json(finish) : Json(nullptr);
  Json body = envelope(meta, true);
  body["choices"] = Json::array({choice});
  if (usageNull)
    body["usage"] = nullptr;
  return "data: " + dump(body) + "\n\n";
}

std::string usageEvent(const ResponseMeta &meta, const Usage &usage) {
  Json body = envelope(meta, true);
  body["choices"] = Json::array();
  body["usage"] = usageJson(usage);
  return "data: " + dump(body) + "\n\n";
}

std::string errorEvent(const ApiError &error) {
  return "data: " + errorJson(error) + "\n\n";
}

std::string modelJson(const std::string &name, int64_t created,
                      int64_t contextLength, bool one) {
  Json model{{"id", name},
             {"object", "model"},
             {"created", created},
             {"owned_by", "strata"},
             {"max_model_len", contextLength}};
  if (one)
    return dump(model);
  return dump(Json{{"object", "list"}, {"data", Json::array({model})}});
}

} // namespace strata::serve

// The bodies of POST /v1/completions and /v1/chat/completions, read and
// checked field by field (docs/serving.md lists every field). A field
// strata does not implement and that would change the answer (n > 1,
// logprobs, tools, ...) is refused, naming it, rather than ignored; so is
// a field nobody knows. The prompt is not tokenized here (ServeJob.h).
#ifndef STRATA_TOOLS_SERVE_OPENAIREQUEST_H
#define STRATA_TOOLS_SERVE_OPENAIREQUEST_H

#include "runtime/Sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::serve {

/// An OpenAI-style error: {"error": {"message", "type", "param", "code"}}
/// answered with `status`.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  /// The field at fault ("max_tokens", "messages[2].role"); empty: null.
  std::string param;
  /// A short machine-readable reason; empty: null.
  std::string code;
};

enum class Endpoint : uint8_t { Completions, ChatCompletions };

struct ChatMessage {
  /// "system", "user" or "assistant" ("developer" is read as "system").
  std::string role;
  std::string content;
};

struct ApiRequest {
  Endpoint endpoint = Endpoint::Completions;
  /// Empty when the request names no model.
  std::string model;
  /// Completions: the prompt as text, or as token ids.
  std::string promptText;
  std::vector<int64_t> promptIds;
  bool promptIsIds = false;
  /// Chat completions.
  std::vector<ChatMessage> messages;
  /// The token budget, and the field that gave it (max_tokens, or
  /// max_completion_tokens in a chat), for messages.
  std::optional<int64_t> maxTokens;
  std::string maxTokensField = "max_tokens";
  /// OpenAI's defaults: temperature 1, top_p 1; top_k off.
  SamplingParams sampling = defaultSampling();
  /// Whether `seed` was given (else each request gets a fresh one).
  bool seeded = false;
  std::vector<std::string> stop;
  bool stream = false;
  /// stream_options.include_usage: a last chunk with the usage.
  bool includeUsage = false;
  /// Go on after the model's EOS ids (vLLM's extension).
  bool ignoreEos = false;

  static SamplingParams defaultSampling() {
    SamplingParams s;
    s.temperature = 1.0;
    return s;
  }
  /// "prompt" or "messages": the field the prompt came from.
  const char *promptField() const {
    return endpoint == Endpoint::Completions ? "prompt" : "messages";
  }
};

/// Reads `body` for `endpoint`. False with `error` (status 400) when the
/// body is not JSON, not an object, a field has the wrong type or value,
/// or a field is unsupported or unknown.
bool parseApiRequest(Endpoint endpoint, std::string_view body, ApiRequest &out,
                     ApiError &error);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_OPENAIREQUEST_H

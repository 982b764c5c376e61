// The JSON the server answers with, in OpenAI's shapes: whole completions
// and chat completions, the chunks of a stream (Server-Sent Events), the
// model list and error objects.
#ifndef STRATA_TOOLS_SERVE_OPENAIRESPONSE_H
#define STRATA_TOOLS_SERVE_OPENAIRESPONSE_H

#include "runtime/Engine.h"
#include "tools/serve/OpenAiRequest.h"

#include <cstdint>
#include <optional>
#include <string>

namespace strata::serve {

/// What every response and chunk of one request repeats.
struct ResponseMeta {
  Endpoint endpoint = Endpoint::Completions;
  std::string id; ///< "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
};

struct Usage {
  int64_t promptTokens = 0, completionTokens = 0;
};

/// "stop" (an EOS id or a stop string) or "length" (the token budget).
const char *finishReasonName(FinishReason reason);

/// {"error": {"message", "type", "param", "code"}}.
std::string errorJson(const ApiError &error);

/// The whole answer of a request that was not streamed.
std::string completionJson(const ResponseMeta &meta, const std::string &text,
                           FinishReason finish, const Usage &usage);

/// One Server-Sent Event ("data: JSON\n\n") of a stream: the chat's first
/// chunk (`roleChunk`: the assistant role, no text), a chunk of new text,
/// or the last chunk (`finish` set, no text). With include_usage every
/// chunk carries "usage": null.
std::string chunkEvent(const ResponseMeta &meta, const std::string &text,
                       const char *finish, bool roleChunk, bool usageNull);
/// The chunk after the last one with include_usage: no choices, the usage.
std::string usageEvent(const ResponseMeta &meta, const Usage &usage);
/// An error in the middle of a stream (the status line has been sent).
std::string errorEvent(const ApiError &error);
/// The end of every stream.
inline constexpr const char *kDoneEvent = "data: [DONE]\n\n";

/// GET /v1/models (`one` false) or /v1/models/ID (`one` true).
std::string modelJson(const std::string &name, int64_t created,
                      int64_t contextLength, bool one);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_OPENAIRESPONSE_H

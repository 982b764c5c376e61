// The HTTP routes of `strata serve` on a cpp-httplib server:
//   POST /v1/completions, POST /v1/chat/completions (whole, or streamed as
//   Server-Sent Events with "stream": true), GET /v1/models,
//   GET /v1/models/ID, GET /health, GET /metrics; anything else is a 404
//   with an error object. A handler reads and checks the request, queues it
//   on the engine loop and answers from the request's channel; a streaming
//   handler whose client goes away cancels its request.
#ifndef STRATA_TOOLS_SERVE_HTTPROUTES_H
#define STRATA_TOOLS_SERVE_HTTPROUTES_H

#include "tools/serve/EngineLoop.h"
#include "tools/serve/JobBuilder.h"
#include "tools/serve/ServeMetrics.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace httplib {
class Server;
} // namespace httplib

namespace strata::serve {

/// The largest request body read (larger: 413). A prompt longer than this
/// would not fit any context.
constexpr size_t kMaxBodyBytes = 64u << 20;

/// Registers the routes; `model`, `loop`, `metrics` and `open` must outlive
/// the server. `open` counts the completions being answered (a handler
/// waiting for its request, or a stream not yet written to its end), so
/// that shutting down can let them end before the server stops.
void addRoutes(httplib::Server &server, const ServedModel &model,
               EngineLoop &loop, ServeMetrics &metrics,
               std::atomic<int64_t> &open);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_HTTPROUTES_H

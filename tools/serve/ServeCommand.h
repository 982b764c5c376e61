// `strata serve MODEL`: an OpenAI-compatible HTTP server (docs/serving.md)
// over the engine's continuous-batching loop. Runtime only: the command
// takes a plan, compiled from a model file or read from a plan file by the
// front end.
#ifndef STRATA_TOOLS_SERVE_SERVECOMMAND_H
#define STRATA_TOOLS_SERVE_SERVECOMMAND_H

#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include <string>

namespace strata::serve {

/// --host, --port, --device, --no-graphs, --weights, --tokenizer,
/// --kv-blocks, --kv-memory, --no-prefix-cache, --max-running, --step-tokens, --max-queue, --model-name,
/// --chat-format.
void addServeOptions(tools::ArgParser &parser);

/// Serves `plan` (`source`: the model or plan file, for messages) until
/// SIGINT or SIGTERM; prints "listening on http://HOST:PORT" on stdout
/// once it accepts connections. Returns the exit code: 0 after a signal,
/// 2 for a bad option, 1 when the tokenizer, the weights, the KV pool or
/// the address fail.
int runServer(const std::string &tool, const tools::ArgParser &parser,
              plan::Plan plan, const std::string &source);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_SERVECOMMAND_H

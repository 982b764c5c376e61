// `strata bench-serve --vocab N [options]`: the load generator of
// tools/serve/BenchServe.h against a running OpenAI-compatible server
// (`strata serve`, vLLM, ...): throughput and TTFT / TPOT / ITL / end-to-end
// latency under a chosen load. strata-bench --serve URL runs the same.
#include "tools/serve/BenchServe.h"
#include "tools/strata/Commands.h"

#include <cstdio>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::tools {

int runBenchServeCommand(const std::vector<std::string> &args) {
  const char *tool = "strata bench-serve";
  ArgParser parser;
  serve::addBenchServeOptions(parser, /*withUrl=*/true);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  auto usageError = [&](const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\nrun '%s --help' for usage\n", tool,
                 message.c_str(), tool);
    return kExitUsage;
  };
  if (!parser.parse(args))
    return usageError(parser.error());
  if (parser.has("help")) {
    std::printf(
        "usage: strata bench-serve --vocab N [--url http://HOST:PORT] "
        "[options]\n\n"
        "Measures a running OpenAI-compatible server (strata serve, vLLM): "
        "sends\nstreamed completions of random token ids at a request rate "
        "and/or\nconcurrency, and reports throughput and TTFT, TPOT, ITL and "
        "end-to-end\nlatency (mean, median, p99; docs/serving.md).\n\n"
        "options:\n%s",
        parser.helpText().c_str());
    return kExitOk;
  }
  if (!parser.positionals().empty())
    return usageError("unexpected argument '" + parser.positionals().front() +
                      "' (the server is given with --url)");
  serve::BenchServeSettings settings;
  if (int code = serve::parseBenchServeSettings(tool, parser, "url", settings))
    return code;
  return serve::runBenchServe(settings, tool, STRATA_VERSION);
}

} // namespace strata::tools

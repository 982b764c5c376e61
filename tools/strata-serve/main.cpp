// strata-serve: `strata serve` for a compiled plan, linking no MLIR, so a
// machine that has only the CUDA runtime (and cpp-httplib) can serve:
// `strata compile MODEL.yaml -o MODEL.splan` elsewhere, then
// `strata-serve MODEL.splan --device cuda`. Options and behaviour are
// strata serve's (tools/serve/, docs/serving.md).
#include "runtime/plan/PlanFile.h"
#include "tools/common/ArgParser.h"
#include "tools/common/RunCommand.h"
#include "tools/serve/ServeCommand.h"

#include <cstdio>
#include <string>
#include <vector>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  strata::tools::ArgParser parser;
  strata::serve::addServeOptions(parser);
  parser.addFlag("version", "print the version and exit");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(std::vector<std::string>(argv + 1, argv + argc)))
    return strata::tools::usageError("strata-serve", parser.error());
  if (parser.has("help") || argc == 1) {
    std::printf("usage: strata-serve PLAN.splan [--host 127.0.0.1] "
                "[--port 8000] [options]\n\n"
                "Serves the compiled plan over HTTP with OpenAI's API, as "
                "'strata serve' does\n(docs/serving.md). SIGINT or SIGTERM "
                "stops the server.\n\noptions:\n%s",
                parser.helpText().c_str());
    return argc == 1 ? 2 : 0;
  }
  if (parser.has("version")) {
    std::printf("strata-serve %s\n", STRATA_VERSION);
    return 0;
  }
  if (parser.positionals().size() != 1)
    return strata::tools::usageError("strata-serve", "expected one plan file");
  const std::string &path = parser.positionals().front();
  strata::plan::Plan plan;
  std::string error;
  if (!strata::plan::readPlanFile(path, plan, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  return strata::serve::runServer("strata-serve", parser, std::move(plan),
                                  path);
}

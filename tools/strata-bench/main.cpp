// strata-bench: the runtime-only benchmark front end. It links no MLIR, so
// it runs on the GPU machine: it reads a compiled plan (`strata compile
// MODEL.yaml --emit=fused -o MODEL.splan`) and measures prefill and decode
// throughput with it (tools/common/BenchCommand.h).
#include "runtime/plan/PlanFile.h"
#include "tools/common/ArgParser.h"
#include "tools/common/BenchCommand.h"

#include <cstdio>
#include <string>
#include <vector>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  using namespace strata::tools;
  ArgParser parser;
  addBenchOptions(parser);
  parser.addFlag("version", "print the version and exit");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr,
                 "strata-bench: error: %s\nrun 'strata-bench --help' for "
                 "usage\n",
                 parser.error().c_str());
    return 2;
  }
  if (parser.has("help") || argc == 1) {
    std::printf("usage: strata-bench MODEL.splan [options]\n\n"
                "Measures prefill (ppN) and decode (tgN) tokens/s of a "
                "compiled plan\nat each batch size, and the decode steps' "
                "fraction of the memory\nroofline.\n\noptions:\n%s",
                parser.helpText().c_str());
    return argc == 1 ? 2 : 0;
  }
  if (parser.has("version")) {
    std::printf("strata-bench %s\n", STRATA_VERSION);
    return 0;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata-bench: error: expected one plan file\nrun "
                         "'strata-bench --help' for usage\n");
    return 2;
  }
  BenchSettings settings;
  if (int code = parseBenchSettings("strata-bench", parser, settings))
    return code;
  const std::string &path = parser.positionals().front();
  strata::plan::Plan plan;
  std::string error;
  if (!strata::plan::readPlanFile(path, plan, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  BenchSource source;
  source.tool = "strata-bench";
  source.version = STRATA_VERSION;
  source.planSource = "file " + path;
  return runBench(settings, source, std::move(plan));
}

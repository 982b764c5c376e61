// `strata bench MODEL.yaml`: compile the model's fused phase programs to a
// plan in memory (what `strata compile --emit=fused -o M.splan` writes) and
// benchmark it with the code `strata-bench` runs (tools/common/BenchCommand.h).
#include "tools/common/BenchCommand.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

#include <algorithm>
#include <cstdio>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::tools {

int runBenchmark(const std::vector<std::string> &args) {
  ArgParser parser;
  addBenchOptions(parser);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(
        stderr,
        "strata bench: error: %s\nrun 'strata bench --help' for usage\n",
        parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf("usage: strata bench MODEL.yaml [options]\n\n"
                "Compiles the model's fused plan and measures prefill (ppN) "
                "and decode\n(tgN) tokens/s at each batch size, and the "
                "decode steps' fraction of\nthe memory roofline.\n\n"
                "options:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata bench: error: expected one model file\n"
                         "run 'strata bench --help' for usage\n");
    return kExitUsage;
  }
  BenchSettings settings;
  if (int code = parseBenchSettings("strata bench", parser, settings))
    return code;

  const std::string &modelPath = parser.positionals().front();
  // The compile defaults, raised where the largest batch needs more.
  PlanLoweringOptions planOptions;
  planOptions.maxBatch = std::max(planOptions.maxBatch, settings.maxBatch());
  planOptions.maxTokens = std::max(planOptions.maxTokens, planOptions.maxBatch);
  plan::Plan plan;
  if (int code = compileModelPlan(modelPath, /*fused=*/true, planOptions, plan))
    return code;

  BenchSource source;
  source.tool = "strata bench";
  source.version = STRATA_VERSION;
  source.planSource = "compiled from " + modelPath + " (--emit=fused)";
  return runBench(settings, source, std::move(plan));
}

} // namespace strata::tools

// `strata run MODEL.yaml --prompt TEXT` (or --prompt-ids 1,2,3): compile the
// model to a plan in memory and generate with it: the generic forward on the
// CPU backend (the reference), the fused phase programs with --device cuda.
#include "tools/common/RunCommand.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

#include <cstdio>

namespace strata::tools {

int runRun(const std::vector<std::string> &args) {
  ArgParser parser;
  addRunOptions(parser);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(stderr,
                 "strata run: error: %s\nrun 'strata run --help' for usage\n",
                 parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf("usage: strata run MODEL.yaml --prompt TEXT [options]\n"
                "       strata run MODEL.yaml --prompt-ids IDS [options]\n\n"
                "Compiles the model and generates tokens with the model's "
                "weights\n(random, or safetensors from the model file or "
                "--weights): the\ngeneric forward on the CPU, the fused "
                "programs with --device cuda.\n\noptions:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata run: error: expected one model file\n"
                         "run 'strata run --help' for usage\n");
    return kExitUsage;
  }
  // The CUDA backend runs fused programs only; the CPU runs the generic
  // forward, the reference.
  const bool fused = parser.has("device") && parser.get("device") == "cuda";
  plan::Plan plan;
  if (int code = compileModelPlan(parser.positionals().front(), fused,
                                  PlanLoweringOptions{}, plan))
    return code;
  return runGeneration("strata run", parser, std::move(plan),
                       parser.positionals().front());
}

} // namespace strata::tools

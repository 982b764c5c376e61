// `strata run MODEL.yaml --prompt TEXT` (or --prompt-ids 1,2,3): compile the
// model to a plan in memory and generate with it: the generic forward on the
// CPU backend (the reference), the fused phase programs with --device cuda.
#include "tools/common/RunCommand.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

#include "runtime/plan/PlanFile.h"

namespace strata::tools {

int loadDraftModel(const std::string &path, plan::Plan &out) {
  if (plan::hasPlanSignature(path))
    return readDraftPlan(path, out);
  return compileModelPlan(path, FusionPipelineConfig{}, PlanLoweringOptions{},
                          out, BuildOptions{});
}

int runRun(const std::vector<std::string> &args) {
  setDraftPlanLoader(loadDraftModel);
  return runCompiledModel(
      "strata run", args, addRunOptions,
      "usage: strata run MODEL.yaml --prompt TEXT [options]\n"
      "       strata run MODEL.yaml --prompt-ids IDS [options]\n\n"
      "Compiles the model and generates with the model's weights (random, "
      "or\nsafetensors from the model file or --weights): the generic "
      "forward on the\nCPU, the fused programs with --device cuda.\n",
      runGeneration);
}

} // namespace strata::tools

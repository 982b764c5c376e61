// MODEL.yaml to an executable plan in memory, for the commands that run a
// model straight from its file (`strata run`, `strata bench`).
#ifndef STRATA_TOOLS_STRATA_MODELPLAN_H
#define STRATA_TOOLS_STRATA_MODELPLAN_H

#include "codegen/PlanLowering.h"
#include "runtime/plan/Plan.h"

#include <string>

namespace strata::tools {

struct ModelPlan {
  plan::Plan plan;
  /// The safetensors checkpoint the model file names (resolved against its
  /// folder); empty for random weights.
  std::string checkpoint;
};

/// Imports `path`, builds its generic forward, runs the fusion pipeline when
/// `fused` (the phase programs the CUDA backend runs) and lowers the result
/// with `options`. On failure the error is printed ("FILE: error: ...") and
/// the exit code (kExitBadInput) returned; 0 on success.
int compileModelPlan(const std::string &path, bool fused,
                     const PlanLoweringOptions &options, ModelPlan &out);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_MODELPLAN_H

// MODEL.yaml to verified IR (`strata compile`) and to an executable plan in
// memory, for the commands that run a model straight from its file
// (`strata run`, `strata bench`).
#ifndef STRATA_TOOLS_STRATA_MODELPLAN_H
#define STRATA_TOOLS_STRATA_MODELPLAN_H

#include "codegen/PlanLowering.h"
#include "ir/ModelBuilder.h"
#include "models/ModelSpec.h"
#include "runtime/plan/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace strata::tools {

struct ModelPlan {
  plan::Plan plan;
  /// The safetensors checkpoint the model file names (resolved against its
  /// folder); empty for random weights.
  std::string checkpoint;
};

/// Imports `path` and builds its verified generic forward in `context`
/// (the strata dialect is registered and loaded there); `spec` receives the
/// imported model. On failure the error is printed ("FILE: error: ...") and
/// the module is null.
mlir::OwningOpRef<mlir::ModuleOp>
buildModelModule(const std::string &path, mlir::MLIRContext &context,
                 const BuildOptions &options, ModelSpec &spec);

/// Imports `path`, builds its generic forward, runs the fusion pipeline when
/// `fused` (the phase programs the CUDA backend runs) and lowers the result
/// with `options`. On failure the error is printed ("FILE: error: ...") and
/// the exit code (kExitBadInput) returned; 0 on success.
int compileModelPlan(const std::string &path, bool fused,
                     const PlanLoweringOptions &options, ModelPlan &out);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_MODELPLAN_H

#include "tools/strata/ModelPlan.h"

#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "passes/Passes.h"
#include "tools/strata/Commands.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>

namespace strata::tools {

int compileModelPlan(const std::string &path, bool fused,
                     const PlanLoweringOptions &options, ModelPlan &out) {
  ImportResult imported = importModelFile(path);
  if (!imported.ok) {
    std::fprintf(stderr, "%s\n", imported.diag.str().c_str());
    return kExitBadInput;
  }
  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  auto module = buildForwardModule(context, imported.spec);
  if (mlir::failed(module) || mlir::failed(mlir::verify(**module))) {
    std::fprintf(stderr, "%s: error: could not build the model's IR\n",
                 path.c_str());
    return kExitBadInput;
  }
  if (fused) {
    mlir::PassManager pm(&context);
    pm.enableVerifier(true);
    buildFusionPipeline(pm, FusionPipelineConfig{});
    if (mlir::failed(pm.run(**module))) {
      std::fprintf(stderr, "%s: error: the pass pipeline failed\n",
                   path.c_str());
      return kExitBadInput;
    }
  }
  auto plan = lowerToPlan(**module, options);
  if (mlir::failed(plan)) {
    std::fprintf(stderr, "%s: error: could not lower the model to a plan\n",
                 path.c_str());
    return kExitBadInput;
  }
  out.plan = std::move(*plan);
  out.checkpoint.clear();
  if (imported.spec.weights.source == WeightSource::Safetensors)
    out.checkpoint = imported.spec.weights.path;
  return kExitOk;
}

} // namespace strata::tools

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

mlir::OwningOpRef<mlir::ModuleOp>
buildModelModule(const std::string &path, mlir::MLIRContext &context,
                 const BuildOptions &options, ModelSpec &spec) {
  ImportResult imported = importModelFile(path);
  if (!imported.ok) {
    std::fprintf(stderr, "%s\n", imported.diag.str().c_str());
    return nullptr;
  }
  spec = imported.spec;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  auto module = buildForwardModule(context, spec, options);
  if (mlir::failed(module)) {
    // The builder has reported through the context's diagnostic handler.
    std::fprintf(stderr, "%s: error: could not build the model's IR\n",
                 path.c_str());
    return nullptr;
  }
  if (mlir::failed(mlir::verify(**module))) {
    std::fprintf(stderr, "%s: error: the built IR does not verify\n",
                 path.c_str());
    return nullptr;
  }
  return std::move(*module);
}

int compileModelPlan(const std::string &path, bool fused,
                     const PlanLoweringOptions &options, ModelPlan &out) {
  mlir::MLIRContext context;
  ModelSpec spec;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModelModule(path, context, BuildOptions{}, spec);
  if (!module)
    return kExitBadInput;
  if (fused) {
    mlir::PassManager pm(&context);
    pm.enableVerifier(true);
    buildFusionPipeline(pm, FusionPipelineConfig{});
    if (mlir::failed(pm.run(*module))) {
      std::fprintf(stderr, "%s: error: the pass pipeline failed\n",
                   path.c_str());
      return kExitBadInput;
    }
  }
  auto plan = lowerToPlan(*module, options);
  if (mlir::failed(plan)) {
    std::fprintf(stderr, "%s: error: could not lower the model to a plan\n",
                 path.c_str());
    return kExitBadInput;
  }
  out.plan = std::move(*plan);
  out.checkpoint.clear();
  if (spec.weights.source == WeightSource::Safetensors)
    out.checkpoint = spec.weights.path;
  return kExitOk;
}

} // namespace strata::tools

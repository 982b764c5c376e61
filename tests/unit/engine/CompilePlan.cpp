#include "tests/unit/engine/CompilePlan.h"

#include "codegen/PlanLowering.h"
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <algorithm>

namespace strata::testing {

plan::Plan compilePlan(const std::string &model, int64_t maxTokens, bool fused,
                       int64_t maxBatch, std::optional<DType> dtype,
                       bool allTokenLogits) {
  ImportResult imported =
      importModelFile(std::string(STRATA_SOURCE_DIR "/models/") + model);
  REQUIRE(imported.ok);
  if (dtype)
    imported.spec.dtype = *dtype;
  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  BuildOptions build;
  build.allTokenLogits = allTokenLogits;
  auto module = buildForwardModule(context, imported.spec, build);
  REQUIRE(mlir::succeeded(module));
  if (fused) {
    mlir::PassManager pm(&context);
    buildFusionPipeline(pm, FusionPipelineConfig{});
    REQUIRE(mlir::succeeded(pm.run(**module)));
  }
  PlanLoweringOptions options;
  options.maxTokens = maxTokens;
  options.maxBatch = maxBatch ? maxBatch : std::min<int64_t>(8, maxTokens);
  auto plan = lowerToPlan(**module, options);
  REQUIRE(mlir::succeeded(plan));
  return *plan;
}

std::unique_ptr<Engine> makeCpuEngine(const plan::Plan &plan) {
  std::string error;
  auto engine = Engine::create(plan, EngineOptions{}, error);
  INFO(error);
  REQUIRE(engine);
  return engine;
}

} // namespace strata::testing

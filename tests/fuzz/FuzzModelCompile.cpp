// Model files all the way through the compiler, as `strata compile` takes
// them: import, IR builder, verifier, fusion pipeline, plan lowering (stream
// scheduler, memory planner). The importer accepts sizes up to 2^31 - 1, so
// this is where arithmetic on shapes, buffer sizes and arena offsets meets
// hostile values. A model that imports must compile to a plan that passes
// the plan file's own checks and survives a write and a read; compiler
// errors are allowed (they are reported), crashes and UB are not.
#include "codegen/PlanLowering.h"
#include "codegen/ProgramGraph.h"
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "passes/Passes.h"
#include "runtime/plan/PlanFile.h"
#include "tests/fuzz/FuzzCheck.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace strata;

namespace {

/// The compile's work grows with the layer count and nothing else, so
/// longer models only slow the search down (the importer's own handling of
/// huge counts is fuzzed by fuzz-model-yaml).
constexpr int64_t kMaxLayers = 8;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  ImportResult imported = importModelString(text, "fuzz.yaml");
  if (!imported.ok || imported.spec.numLayers() > kMaxLayers)
    return 0;

  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Compiler errors are valid outcomes here; keep them off the terminal.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = buildForwardModule(context, imported.spec);
  if (mlir::failed(module))
    return 0;
  FUZZ_CHECK(mlir::succeeded(mlir::verify(**module)),
             "the builder's IR verifies");
  mlir::PassManager pm(&context);
  pm.enableVerifier(true);
  buildFusionPipeline(pm, FusionPipelineConfig{});
  if (mlir::failed(pm.run(**module)))
    return 0;
  auto lowered = lowerToPlan(**module, PlanLoweringOptions{});
  if (mlir::failed(lowered))
    return 0;
  const plan::Plan &p = *lowered;
  std::string invalid = plan::validatePlan(p);
  FUZZ_CHECK(invalid.empty(), "a compiled plan is valid");
  for (const plan::Program &program : p.programs)
    FUZZ_CHECK(sched::checkProgram(program, p.limits).empty(),
               "a compiled schedule honours every hazard");
  plan::Plan back;
  std::string error;
  FUZZ_CHECK(
      plan::deserializePlan(plan::serializePlan(p), "fuzz.splan", back, error),
      "a compiled plan reads back");
  return 0;
}

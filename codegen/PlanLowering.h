// Lowering of a strata module to an executable plan (runtime/plan/Plan.h).
//
// Every function of the module becomes one program: its strata ops, in
// order, become launches (kernel = the op's name without the dialect prefix,
// variant = its variant or kind keyword, attributes = the op's attributes);
// `strata.weight` and `strata.concat_weights` become the plan's weights
// (packed weights record their sources); every tensor an op produces
// becomes a buffer, transient ones placed in the arena by the memory
// planner; the KV cache and the linear state are one buffer each, with one
// hazard resource per layer so that layers do not serialise each other. The
// launches are scheduled onto streams (docs/scheduling.md).
//
// Lowering works on generic and fused IR alike: it needs no knowledge of
// individual ops beyond the symbolic sizes of their results.
#ifndef STRATA_CODEGEN_PLANLOWERING_H
#define STRATA_CODEGEN_PLANLOWERING_H

#include "runtime/plan/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace strata {

struct PlanLoweringOptions {
  /// Sizes the arena is planned for: tokens of a step (all sequences) and
  /// sequences of a step.
  int64_t maxTokens = 2048;
  int64_t maxBatch = 64;
  /// Streams the scheduler may use.
  int numStreams = 1;
};

/// Lowers `module`; on failure an error naming the op has been emitted
/// through the module's context.
mlir::FailureOr<plan::Plan> lowerToPlan(mlir::ModuleOp module,
                                        const PlanLoweringOptions &options);

} // namespace strata

#endif // STRATA_CODEGEN_PLANLOWERING_H

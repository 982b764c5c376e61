//===- FuseSwiGLU.cpp - packed gate-up projection + SwiGLU ----------------===//
//
// The gate and up projections of a gated MLP read the same input: one GEMM
// onto their concatenated weights (packed when the plan is loaded) reads it
// once, and strata.swiglu computes silu(gate) * up from the packed output
// without writing gate and up out separately.
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "strata-fuse-swiglu"

using namespace mlir;

namespace strata {
#define GEN_PASS_DEF_FUSESWIGLU
#include "passes/Passes.h.inc"
} // namespace strata

namespace strata {
namespace {

/// Concatenates two parameters along axis 0 when the plan is loaded.
Value packRows(PatternRewriter &rewriter, Location loc, Value a, Value b) {
  auto at = a.getType().cast<RankedTensorType>();
  auto bt = b.getType().cast<RankedTensorType>();
  SmallVector<int64_t, 2> shape(at.getShape());
  shape[0] += bt.getDimSize(0);
  return rewriter.create<ConcatWeightsOp>(
      loc, RankedTensorType::get(shape, at.getElementType()), ValueRange{a, b},
      rewriter.getI64IntegerAttr(0));
}

struct GatedMLP : OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SiluMulOp op,
                                PatternRewriter &rewriter) const override {
    auto gate = op.getGate().getDefiningOp<LinearOp>();
    auto up = op.getUp().getDefiningOp<LinearOp>();
    if (!gate || !up || gate == up)
      return rewriter.notifyMatchFailure(op, "gate and up are not two linears");
    if (gate.getX() != up.getX())
      return rewriter.notifyMatchFailure(op, "gate and up project different "
                                             "inputs");
    if (!gate->hasOneUse() || !up->hasOneUse())
      return rewriter.notifyMatchFailure(op, "a projection has another user");
    if (static_cast<bool>(gate.getBias()) != static_cast<bool>(up.getBias()))
      return rewriter.notifyMatchFailure(op, "only one projection has a bias");

    // Both linears precede the silu_mul, so their operands exist here.
    Location loc = op.getLoc();
    Value weight = packRows(rewriter, loc, gate.getWeight(), up.getWeight());
    Value bias = gate.getBias()
                     ? packRows(rewriter, loc, gate.getBias(), up.getBias())
                     : Value();
    Value gateUp = rewriter.create<LinearOp>(loc, gate.getX(), weight, bias);
    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": packed gate and up at " << op.getLoc()
               << (bias ? " (with biases)" : "") << "\n");
    rewriter.replaceOpWithNewOp<SwiGLUOp>(op, op.getType(), gateUp);
    rewriter.eraseOp(gate);
    rewriter.eraseOp(up);
    return success();
  }
};

class FuseSwiGLUPass : public impl::FuseSwiGLUBase<FuseSwiGLUPass> {
public:
  using Base::Base;
  FuseSwiGLUPass() = default;
  // A clone for another thread counts on its own (PassStatistics.h).
  FuseSwiGLUPass(const FuseSwiGLUPass &other) : Base(other) {}

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!readPhaseFacts(func))
      return;
    const int64_t opsBefore = countAllOps(func);
    const int64_t fusedBefore = countOps<SwiGLUOp>(func);
    siluMuls += countOps<SiluMulOp>(func);
    RewritePatternSet patterns(&getContext());
    patterns.add<GatedMLP>(&getContext());
    if (failed(applyFusionPatterns(
            func, FrozenRewritePatternSet(std::move(patterns)), getArgument())))
      return signalPassFailure();
    fused += countOps<SwiGLUOp>(func) - fusedBefore;
    countOpChange(opsBefore, countAllOps(func), opsRemoved, opsAdded);
  }

private:
  PassStatistic siluMuls{this, "silu-muls",
                         "silu_mul ops seen (the roots of the pattern)"};
  PassStatistic fused{this, "swiglu",
                      "gate/up projections packed and fused into swiglu"};
  PassStatistic opsRemoved{this, "ops-removed",
                           "net decrease of the functions' op count"};
  PassStatistic opsAdded{this, "ops-added",
                         "net increase of the functions' op count"};
};

} // namespace
} // namespace strata

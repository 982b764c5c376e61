//===- FuseAddRMSNorm.cpp - residual add + RMSNorm in one kernel ----------===//
//
// Every layer adds its attention and MLP outputs to the residual stream and
// normalizes the sum right away for the next block. Done separately, the
// sum is written and read back; strata.add_rms_norm writes it once (for the
// next residual add) and the normed tensor once.
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "strata-fuse-add-rmsnorm"

using namespace mlir;

namespace strata {
#define GEN_PASS_DEF_FUSEADDRMSNORM
#include "passes/Passes.h.inc"
} // namespace strata

namespace strata {
namespace {

struct AddThenNorm : OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RMSNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getX().getDefiningOp<AddOp>();
    if (!add)
      return rewriter.notifyMatchFailure(norm, "input is not a residual add");
    // Fusing each of two norms of one sum would compute the sum twice.
    if (llvm::count_if(add->getUsers(), [](Operation *user) {
          return isa<RMSNormOp>(user);
        }) != 1)
      return rewriter.notifyMatchFailure(norm, "the sum feeds several norms");
    // The fused op replaces the add, so the norm's weight must exist there;
    // a parameter has no operands and can always move up.
    Operation *weight = norm.getWeight().getDefiningOp();
    if (!weight || weight->getNumOperands() != 0 ||
        weight->getBlock() != add->getBlock())
      return rewriter.notifyMatchFailure(norm, "weight is not a parameter");
    if (add->isBeforeInBlock(weight))
      rewriter.updateRootInPlace(weight, [&] { weight->moveBefore(add); });

    rewriter.setInsertionPoint(add);
    // The builder adds the block's output (rhs) to the stream (lhs).
    auto fused = rewriter.create<AddRMSNormOp>(
        add.getLoc(), add.getType(), add.getType(), add.getRhs(), add.getLhs(),
        norm.getWeight(), norm.getEpsAttr(), add.getRhsScaleAttr(),
        add.getLhsScaleAttr());
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": fused " << add->getLoc()
                            << " with the norm of its sum\n");
    rewriter.replaceOp(norm, fused.getNormed());
    rewriter.replaceOp(add, fused.getSum());
    return success();
  }
};

class FuseAddRMSNormPass : public impl::FuseAddRMSNormBase<FuseAddRMSNormPass> {
public:
  using Base::Base;
  FuseAddRMSNormPass() = default;
  // A clone for another thread counts on its own (PassStatistics.h).
  FuseAddRMSNormPass(const FuseAddRMSNormPass &other) : Base(other) {}

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!readPhaseFacts(func))
      return;
    const int64_t opsBefore = countAllOps(func);
    const int64_t fusedBefore = countOps<AddRMSNormOp>(func);
    norms += countOps<RMSNormOp>(func);
    RewritePatternSet patterns(&getContext());
    patterns.add<AddThenNorm>(&getContext());
    if (failed(applyFusionPatterns(
            func, FrozenRewritePatternSet(std::move(patterns)), getArgument())))
      return signalPassFailure();
    fused += countOps<AddRMSNormOp>(func) - fusedBefore;
    countOpChange(opsBefore, countAllOps(func), opsRemoved, opsAdded);
  }

private:
  PassStatistic norms{this, "rms-norms",
                      "rms_norm ops seen (the roots of the pattern)"};
  PassStatistic fused{this, "add-rms-norm",
                      "add + rms_norm pairs fused into add_rms_norm"};
  PassStatistic opsRemoved{this, "ops-removed",
                           "net decrease of the functions' op count"};
  PassStatistic opsAdded{this, "ops-added",
                         "net increase of the functions' op count"};
};

} // namespace
} // namespace strata

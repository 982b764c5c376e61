//===- SpecializePhase.cpp - one function per phase -----------------------===//
//
// The generic forward describes what a step computes; the kernels that
// compute it depend on the step: whether the cache is empty, whether every
// sequence brings one token, whether the new tokens form a tree. This pass
// makes those facts part of the IR, one function per phase, so that later
// passes choose variants by reading attributes instead of guessing from
// shapes (which are dynamic anyway).
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace strata {
#define GEN_PASS_DEF_SPECIALIZEPHASE
#include "passes/Passes.h.inc"
} // namespace strata

namespace strata {
namespace {

constexpr StringLiteral kForward = "forward";
// Verify's parent ids go right after %seqs, so that the arguments before
// them are the same in every phase function.
constexpr unsigned kParentIdsIndex = 3;

/// Writes the facts of `phase` on `func` (see Passes.td for the table).
void attachFacts(func::FuncOp func, ModuleOp module, Phase phase,
                 bool hasLinearState) {
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  func->setAttr(kPhaseAttr, PhaseAttr::get(ctx, phase));
  // The fusions run on one function at a time and must not read the
  // module, so the model facts they need travel with each function.
  for (StringRef name : kModelFactAttrs)
    if (Attribute fact = module->getAttr(name))
      func->setAttr(name, fact);
  func->setAttr(kCacheEmptyAttr, b.getBoolAttr(phase == Phase::Prefill));
  if (phase == Phase::Decode)
    func->setAttr(kTokensPerSeqAttr, b.getI64IntegerAttr(1));
  if (phase != Phase::Verify)
    return;
  // One recurrent state per sequence slot cannot follow two branches of a
  // tree: models with linear layers verify a chain of drafts.
  func->setAttr(kDraftAttr, b.getStringAttr(hasLinearState ? "chain" : "tree"));
  auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  func.insertArgument(
      kParentIdsIndex, ids,
      b.getDictionaryAttr(b.getNamedAttr(kParentIdsAttr, b.getUnitAttr())),
      func.getLoc());
  // Verification scores every draft token, not only the last of each
  // sequence.
  func.walk([&](LogitsOp logits) { logits.setAllTokens(true); });
}

class SpecializePhasePass
    : public impl::SpecializePhaseBase<SpecializePhasePass> {
public:
  using Base::Base;
  SpecializePhasePass() = default;
  // A copy counts on its own (PassStatistics.h).
  SpecializePhasePass(const SpecializePhasePass &other) : Base(other) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(kForward);
    if (!forward || forward.isExternal())
      return;
    // Already specialized: running the pipeline twice changes nothing.
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kPhaseAttr))
        return;

    SmallVector<Phase> selected;
    if (phases.empty()) {
      selected = {Phase::Prefill, Phase::Extend, Phase::Decode, Phase::Verify};
    } else {
      for (const std::string &name : phases) {
        std::optional<Phase> phase = symbolizePhase(name);
        if (!phase) {
          module.emitError() << "unknown phase '" << name
                             << "'; expected prefill, extend, decode or "
                                "verify";
          return signalPassFailure();
        }
        if (llvm::is_contained(selected, *phase)) {
          module.emitError() << "phase '" << name << "' is listed twice";
          return signalPassFailure();
        }
        selected.push_back(*phase);
      }
    }

    bool hasLinearState = llvm::any_of(forward.getArgumentTypes(), [](Type t) {
      return t.isa<LinearStateType>();
    });
    OpBuilder b(forward);
    for (Phase phase : selected) {
      auto func = cast<func::FuncOp>(b.clone(*forward));
      func.setSymName(stringifyPhase(phase));
      attachFacts(func, module, phase, hasLinearState);
      ++created;
    }
    forward.erase();
  }

private:
  PassStatistic created{this, "phase-functions",
                        "phase functions created from @forward"};
};

} // namespace
} // namespace strata

//===- PhaseFacts.cpp - the facts passes choose kernels by ----------------===//

#include "passes/PhaseFacts.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata {

std::optional<PhaseFacts> readPhaseFacts(func::FuncOp func) {
  auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
  if (!phase || func.isExternal())
    return std::nullopt;
  PhaseFacts facts;
  facts.phase = phase.getValue();
  if (auto empty = func->getAttrOfType<BoolAttr>(kCacheEmptyAttr))
    facts.cacheEmpty = empty.getValue();
  if (auto draft = func->getAttrOfType<StringAttr>(kDraftAttr))
    facts.draft =
        draft.getValue() == "chain" ? DraftShape::Chain : DraftShape::Tree;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, kParentIdsAttr))
      facts.parentIds = func.getArgument(i);
  if (auto positions = func->getAttrOfType<IntegerAttr>(kMaxPositionsAttr))
    facts.maxPositions = positions.getInt();
  if (auto chunk = func->getAttrOfType<IntegerAttr>(kLinearChunkSizeAttr))
    facts.linearChunkSize = chunk.getInt();
  return facts;
}

RopeVariant ropeVariantFor(const PhaseFacts &facts) {
  // An empty cache lets q, k and v stay in the packed buffer: attention of
  // fresh tokens reads k and v from there, not from the cache.
  if (facts.cacheEmpty)
    return RopeVariant::Packed;
  if (facts.draft != DraftShape::None)
    return RopeVariant::Tree;
  return RopeVariant::Continuous;
}

LogicalResult applyFusionPatterns(func::FuncOp func,
                                  const FrozenRewritePatternSet &patterns,
                                  StringRef pass) {
  if (succeeded(applyPatternsAndFoldGreedily(func, patterns)))
    return success();
  // Every fusion removes the op it matched, so a rewrite that keeps firing
  // is a bug in a pattern, not a property of the model.
  func.emitError() << pass << ": the rewrites of @" << func.getSymName()
                   << " did not converge";
  return failure();
}

} // namespace strata

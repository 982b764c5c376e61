//===- PhaseFacts.cpp - the facts passes choose kernels by ----------------===//

#include "passes/PhaseFacts.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata {

std::optional<PhaseFacts> readPhaseFacts(func::FuncOp func) {
  auto phase = func->getAttrOfType<PhaseAttr>(kPhaseAttr);
  if (!phase)
    return std::nullopt;
  PhaseFacts facts;
  facts.phase = phase.getValue();
  if (auto empty = func->getAttrOfType<BoolAttr>(kCacheEmptyAttr))
    facts.cacheEmpty = empty.getValue();
  if (auto draft = func->getAttrOfType<StringAttr>(kDraftAttr))
    facts.draft =
        draft.getValue() == "chain" ? DraftShape::Chain : DraftShape::Tree;
  if (!func.isExternal())
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (func.getArgAttr(i, kParentIdsAttr))
        facts.parentIds = func.getArgument(i);
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

LogicalResult applyToPhaseFunctions(ModuleOp module,
                                    const FrozenRewritePatternSet &patterns) {
  for (auto func : module.getOps<func::FuncOp>())
    if (readPhaseFacts(func) &&
        failed(applyPatternsAndFoldGreedily(func, patterns)))
      return failure();
  return success();
}

int64_t moduleFact(ModuleOp module, StringRef name) {
  if (auto attr = module->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return 0;
}

} // namespace strata

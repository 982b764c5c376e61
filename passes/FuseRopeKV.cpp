//===- FuseRopeKV.cpp - (QK-norm +) RoPE + KV append in one kernel --------===//
//
// After strata-fuse-qkv a softmax layer reads q, k and v as head slices of
// one packed buffer, normalizes q and k (Qwen3), rotates them and appends k
// and v to the cache: four to six launches that each read and write the
// whole of q or k. strata.rope_kv_write does it in one pass over the packed
// buffer. Its variant is read from the function's phase facts, never from
// shapes.
//
// QK-norm must stay before the rotation. The op applies its q_norm/k_norm
// before rotating, so only norm -> rope chains are folded in; a rotation
// followed by a norm is left alone.
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"

using namespace mlir;

namespace strata {
#define GEN_PASS_DEF_FUSEROPEKV
#include "passes/Passes.h.inc"
} // namespace strata

namespace strata {
namespace {

/// slice -> [head_norm ->] rope, for q and for k.
struct RotatedHeads {
  HeadSliceOp slice;
  HeadNormOp norm; // null without QK-norm
  RopeOp rope;
};

/// The chain that ends in `rope`, or nothing when it is not slice ->
/// [norm ->] rope with one use per link.
std::optional<RotatedHeads> chainOf(RopeOp rope) {
  RotatedHeads chain{{}, {}, rope};
  Operation *def = rope.getX().getDefiningOp();
  if (auto norm = dyn_cast_or_null<HeadNormOp>(def)) {
    if (!norm->hasOneUse())
      return std::nullopt;
    chain.norm = norm;
    def = norm.getX().getDefiningOp();
  }
  chain.slice = dyn_cast_or_null<HeadSliceOp>(def);
  if (!chain.slice || !chain.slice->hasOneUse())
    return std::nullopt;
  return chain;
}

/// The rope of q: the user chain of the slice of the first `numQ` heads of
/// `packed`.
std::optional<RotatedHeads> queryChain(Value packed, int64_t numQ) {
  for (Operation *user : packed.getUsers()) {
    auto slice = dyn_cast<HeadSliceOp>(user);
    if (!slice || slice.getFirst() != 0 ||
        static_cast<int64_t>(slice.getNumHeads()) != numQ ||
        !slice->hasOneUse())
      continue;
    Operation *next = *slice->getUsers().begin();
    if (auto norm = dyn_cast<HeadNormOp>(next))
      next = norm->hasOneUse() ? *norm->getUsers().begin() : nullptr;
    if (auto rope = dyn_cast_or_null<RopeOp>(next))
      return chainOf(rope);
  }
  return std::nullopt;
}

/// q and k must be rotated the same way by the same positions: the kernel
/// has one set of rotary parameters.
bool sameRotation(RopeOp a, RopeOp b) {
  return a.getPositions() == b.getPositions() &&
         a.getRotaryDim() == b.getRotaryDim() && a.getTheta() == b.getTheta() &&
         a.getPairing() == b.getPairing() && a.getScaling() == b.getScaling() &&
         a.getScalingFactor() == b.getScalingFactor() &&
         a.getLowFreqFactor() == b.getLowFreqFactor() &&
         a.getHighFreqFactor() == b.getHighFreqFactor() &&
         a.getOriginalMaxPositions() == b.getOriginalMaxPositions();
}

class RopeKVFuser {
public:
  RopeKVFuser(func::FuncOp func, RopeVariant variant)
      : dominance(func), variant(variant) {}

  bool fuse(KVAppendOp append);

private:
  bool operandsReach(Operation *at, ValueRange values);
  DominanceInfo dominance;
  RopeVariant variant;
};

bool RopeKVFuser::operandsReach(Operation *at, ValueRange values) {
  return llvm::all_of(values, [&](Value v) {
    return !v || dominance.properlyDominates(v, at);
  });
}

bool RopeKVFuser::fuse(KVAppendOp append) {
  auto kRope = append.getK().getDefiningOp<RopeOp>();
  auto vSlice = append.getV().getDefiningOp<HeadSliceOp>();
  if (!kRope || !vSlice || !kRope->hasOneUse() || !vSlice->hasOneUse())
    return false;
  std::optional<RotatedHeads> k = chainOf(kRope);
  if (!k)
    return false;
  Value packed = k->slice.getX();
  int64_t numQ = static_cast<int64_t>(k->slice.getFirst());
  int64_t numKv = static_cast<int64_t>(k->slice.getNumHeads());
  auto packedType = packed.getType().cast<RankedTensorType>();
  // The kernel's layout: q heads, then k, then v, nothing else.
  if (vSlice.getX() != packed ||
      static_cast<int64_t>(vSlice.getFirst()) != numQ + numKv ||
      static_cast<int64_t>(vSlice.getNumHeads()) != numKv ||
      packedType.getDimSize(1) != numQ + 2 * numKv || numQ == 0)
    return false;
  std::optional<RotatedHeads> q = queryChain(packed, numQ);
  if (!q || !sameRotation(q->rope, kRope) ||
      static_cast<bool>(q->norm) != static_cast<bool>(k->norm) ||
      (q->norm && q->norm.getEps() != k->norm.getEps()))
    return false;
  // The op consumes the packed buffer (packed rotates it in place).
  if (!llvm::all_of(packed.getUsers(), [&](Operation *user) {
        return user == q->slice || user == k->slice || user == vSlice;
      }))
    return false;

  Value qNorm = q->norm ? q->norm.getWeight() : Value();
  Value kNorm = k->norm ? k->norm.getWeight() : Value();
  if (!operandsReach(append, {packed, kRope.getPositions(), qNorm, kNorm}) ||
      !llvm::all_of(q->rope->getUsers(), [&](Operation *user) {
        return dominance.properlyDominates(append.getOperation(), user);
      }))
    return false;

  OpBuilder b(append);
  Location loc = append.getLoc();
  MLIRContext *ctx = b.getContext();
  Type out = variant == RopeVariant::Packed ? packedType
                                            : q->rope.getResult().getType();
  auto fused = b.create<RopeKVWriteOp>(
      loc, out, append.getCache().getType(), RopeVariantAttr::get(ctx, variant),
      packed, kRope.getPositions(), append.getCache(), append.getSeqs(), qNorm,
      kNorm, append.getLayerAttr(), b.getI64IntegerAttr(numQ),
      b.getI64IntegerAttr(numKv), kRope.getRotaryDimAttr(),
      kRope.getThetaAttr(), kRope.getPairingAttr(), kRope.getScalingAttr(),
      kRope.getScalingFactorAttr(), kRope.getLowFreqFactorAttr(),
      kRope.getHighFreqFactorAttr(), kRope.getOriginalMaxPositionsAttr(),
      q->norm ? q->norm.getEpsAttr() : FloatAttr());

  Value query = fused.getOut();
  if (variant == RopeVariant::Packed)
    query = b.create<HeadSliceOp>(loc, fused.getOut(), b.getI64IntegerAttr(0),
                                  b.getI64IntegerAttr(numQ));
  q->rope.getResult().replaceAllUsesWith(query);
  append.getResult().replaceAllUsesWith(fused.getNewCache());

  // Users first: each op below is the last user of the next.
  append.erase();
  vSlice.erase();
  for (RotatedHeads *chain : {&*q, &*k}) {
    chain->rope.erase();
    if (chain->norm)
      chain->norm.erase();
    chain->slice.erase();
  }
  return true;
}

class FuseRopeKVPass : public impl::FuseRopeKVBase<FuseRopeKVPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      std::optional<PhaseFacts> facts = readPhaseFacts(func);
      if (!facts)
        continue;
      SmallVector<KVAppendOp> appends;
      func.walk([&](KVAppendOp op) { appends.push_back(op); });
      RopeKVFuser fuser(func, ropeVariantFor(*facts));
      for (KVAppendOp append : appends)
        (void)fuser.fuse(append);
    }
  }
};

} // namespace
} // namespace strata

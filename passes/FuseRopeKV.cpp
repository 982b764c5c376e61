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
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "strata-fuse-rope-kv"

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

/// The group that becomes one rope_kv_write, found from its root: the KV
/// append, the rope of its k and the rope of q on the same packed buffer.
struct RopeKVGroup {
  RotatedHeads q, k;
  HeadSliceOp v;
  Value packed;
  int64_t numQ, numKv;
};

/// Why the layer that `append` writes cannot take the fused kernel, or null
/// when `group` holds it.
const char *whyNotFusable(KVAppendOp append, RopeKVGroup &group) {
  auto kRope = append.getK().getDefiningOp<RopeOp>();
  auto vSlice = append.getV().getDefiningOp<HeadSliceOp>();
  if (!kRope || !vSlice)
    return "k is not rotated or v is not a head slice";
  if (!kRope->hasOneUse() || !vSlice->hasOneUse())
    return "the rotated k or the v slice has another user";
  std::optional<RotatedHeads> k = chainOf(kRope);
  if (!k)
    return "k is not slice -> [head_norm ->] rope with one use per link";
  Value packed = k->slice.getX();
  int64_t numQ = static_cast<int64_t>(k->slice.getFirst());
  int64_t numKv = static_cast<int64_t>(k->slice.getNumHeads());
  auto packedType = packed.getType().cast<RankedTensorType>();
  // The kernel's layout: q heads, then k, then v, nothing else.
  if (vSlice.getX() != packed ||
      static_cast<int64_t>(vSlice.getFirst()) != numQ + numKv ||
      static_cast<int64_t>(vSlice.getNumHeads()) != numKv ||
      packedType.getDimSize(1) != numQ + 2 * numKv || numQ == 0)
    return "no packed [q, k, v] buffer (strata-fuse-qkv did not run)";
  std::optional<RotatedHeads> q = queryChain(packed, numQ);
  if (!q)
    return "q is not rotated from the packed buffer";
  if (!sameRotation(q->rope, kRope))
    return "q and k are rotated differently";
  if (static_cast<bool>(q->norm) != static_cast<bool>(k->norm) ||
      (q->norm && q->norm.getEps() != k->norm.getEps()))
    return "q and k are not normed alike";
  // The op consumes the packed buffer (packed rotates it in place).
  if (!llvm::all_of(packed.getUsers(), [&](Operation *user) {
        return user == q->slice || user == k->slice || user == vSlice;
      }))
    return "the packed buffer has another user";
  group = {*q, *k, vSlice, packed, numQ, numKv};
  return nullptr;
}

/// Why the phase facts call for `variant` (debug output).
[[maybe_unused]] const char *reasonFor(RopeVariant variant) {
  switch (variant) {
  case RopeVariant::Packed:
    return "cache empty: q and k rotated in place, KV from position 0";
  case RopeVariant::Continuous:
    return "cached prefix: q written out, KV at each sequence's end";
  case RopeVariant::Tree:
    return "draft tree: positions of the tree nodes";
  }
  return "";
}

/// Rooted at the KV append; replaces the whole group at once, so the
/// result does not depend on which of its ops the driver visits first.
struct FuseLayerRopeKV : OpRewritePattern<KVAppendOp> {
  FuseLayerRopeKV(MLIRContext *ctx, RopeVariant variant)
      : OpRewritePattern(ctx), variant(variant) {}

  LogicalResult matchAndRewrite(KVAppendOp append,
                                PatternRewriter &rewriter) const override {
    RopeKVGroup g;
    if (const char *why = whyNotFusable(append, g)) {
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": layer " << append.getLayer()
                              << " not fused: " << why << "\n");
      return rewriter.notifyMatchFailure(append, why);
    }
    RopeOp kRope = g.k.rope;
    Value qNorm = g.q.norm ? g.q.norm.getWeight() : Value();
    Value kNorm = g.k.norm ? g.k.norm.getWeight() : Value();
    // The fused op takes the place of the append: everything it reads must
    // exist there, and everything that reads q must come after it.
    DominanceInfo dominance(append->getParentOp());
    Value operands[] = {g.packed, kRope.getPositions(), qNorm, kNorm};
    if (!llvm::all_of(operands,
                      [&](Value v) {
                        return !v || dominance.properlyDominates(v, append);
                      }) ||
        !llvm::all_of(g.q.rope->getUsers(), [&](Operation *user) {
          return dominance.properlyDominates(append.getOperation(), user);
        }))
      return rewriter.notifyMatchFailure(
          append, "an operand is defined after the append or q is read "
                  "before it");

    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": layer " << append.getLayer() << " -> "
               << stringifyRopeVariant(variant) << " (" << reasonFor(variant)
               << (qNorm ? "; QK-norm folded in" : "") << ")\n");

    rewriter.setInsertionPoint(append);
    Location loc = append.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto packedType = g.packed.getType().cast<RankedTensorType>();
    Type out = variant == RopeVariant::Packed ? packedType
                                              : g.q.rope.getResult().getType();
    auto fused = rewriter.create<RopeKVWriteOp>(
        loc, out, append.getCache().getType(),
        RopeVariantAttr::get(ctx, variant), g.packed, kRope.getPositions(),
        append.getCache(), append.getSeqs(), qNorm, kNorm,
        append.getLayerAttr(), rewriter.getI64IntegerAttr(g.numQ),
        rewriter.getI64IntegerAttr(g.numKv), kRope.getRotaryDimAttr(),
        kRope.getThetaAttr(), kRope.getPairingAttr(), kRope.getScalingAttr(),
        kRope.getScalingFactorAttr(), kRope.getLowFreqFactorAttr(),
        kRope.getHighFreqFactorAttr(), kRope.getOriginalMaxPositionsAttr(),
        g.q.norm ? g.q.norm.getEpsAttr() : FloatAttr());

    Value query = fused.getOut();
    if (variant == RopeVariant::Packed)
      query = rewriter.create<HeadSliceOp>(loc, fused.getOut(),
                                           rewriter.getI64IntegerAttr(0),
                                           rewriter.getI64IntegerAttr(g.numQ));
    rewriter.replaceOp(g.q.rope, query);
    rewriter.replaceOp(append, fused.getNewCache());
    // The rest of the group is dead now; each op is erased after its only
    // user.
    rewriter.eraseOp(g.v);
    rewriter.eraseOp(g.k.rope);
    for (RotatedHeads *chain : {&g.q, &g.k}) {
      if (chain->norm)
        rewriter.eraseOp(chain->norm);
      rewriter.eraseOp(chain->slice);
    }
    return success();
  }

private:
  RopeVariant variant;
};

class FuseRopeKVPass : public impl::FuseRopeKVBase<FuseRopeKVPass> {
public:
  using Base::Base;
  FuseRopeKVPass() = default;
  // A clone for another thread counts on its own (PassStatistics.h).
  FuseRopeKVPass(const FuseRopeKVPass &other) : Base(other) {}

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<PhaseFacts> facts = readPhaseFacts(func);
    if (!facts)
      return;
    const int64_t opsBefore = countAllOps(func);
    const int64_t writesBefore = countOps<RopeKVWriteOp>(func);
    const int64_t normedBefore = countNormed(func);
    appends += countOps<KVAppendOp>(func);
    const RopeVariant variant = ropeVariantFor(*facts);
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseLayerRopeKV>(&getContext(), variant);
    if (failed(applyFusionPatterns(
            func, FrozenRewritePatternSet(std::move(patterns)), getArgument())))
      return signalPassFailure();
    // One function, one variant: the facts choose it for the whole phase.
    const int64_t written = countOps<RopeKVWriteOp>(func) - writesBefore;
    switch (variant) {
    case RopeVariant::Packed:
      packed += written;
      break;
    case RopeVariant::Continuous:
      continuous += written;
      break;
    case RopeVariant::Tree:
      tree += written;
      break;
    }
    normFolded += countNormed(func) - normedBefore;
    appendsLeft += countOps<KVAppendOp>(func);
    countOpChange(opsBefore, countAllOps(func), opsRemoved, opsAdded);
  }

private:
  static int64_t countNormed(func::FuncOp func) {
    return countOps(func, [](Operation *op) {
      auto write = dyn_cast<RopeKVWriteOp>(op);
      return write && write.getQNormWeight();
    });
  }

  PassStatistic appends{this, "kv-appends",
                        "softmax layers seen (their kv_append roots the "
                        "pattern)"};
  PassStatistic packed{this, "rope-kv-write-packed",
                       "rope_kv_write packed created (prefill)"};
  PassStatistic continuous{this, "rope-kv-write-continuous",
                           "rope_kv_write continuous created (extend, "
                           "decode)"};
  PassStatistic tree{this, "rope-kv-write-tree",
                     "rope_kv_write tree created (verify)"};
  PassStatistic normFolded{this, "qk-norm-folded",
                           "of those, with the QK-norm folded in"};
  PassStatistic appendsLeft{this, "kv-appends-left",
                            "layers left with a separate rope and "
                            "kv_append"};
  PassStatistic opsRemoved{this, "ops-removed",
                           "net decrease of the functions' op count"};
  PassStatistic opsAdded{this, "ops-added",
                         "net increase of the functions' op count"};
};

} // namespace
} // namespace strata

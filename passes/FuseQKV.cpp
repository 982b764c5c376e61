//===- FuseQKV.cpp - one packed projection for q, k and v -----------------===//
//
// The three projections of a softmax layer read the same input: one GEMM
// onto the concatenated weights reads it once and produces the packed
// [T, Hq + Hk + Hv, D] buffer that the fused RoPE + KV-write and prefill
// attention kernels take. The concatenation happens when the plan is loaded
// (strata.concat_weights), so the checkpoint keeps its three tensors.
//
// Layers are found from their KV append: its v and (through RoPE and
// QK-norm) k, and the q of the attention that reads the cache it returns.
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "strata-fuse-qkv"

using namespace mlir;

namespace strata {
#define GEN_PASS_DEF_FUSEQKV
#include "passes/Passes.h.inc"
} // namespace strata

namespace strata {
namespace {

/// The projection behind one of q, k, v: linear -> split_heads.
struct Projection {
  LinearOp linear;
  SplitHeadsOp split;
};

/// Follows `value` back through the ops that sit between the head split and
/// the consumers (RoPE, QK-norm) to `split_heads(linear(...))`.
std::optional<Projection> projectionOf(Value value) {
  Operation *def = value.getDefiningOp();
  while (def && isa<RopeOp, HeadNormOp>(def))
    def = def->getOperand(0).getDefiningOp();
  auto split = dyn_cast_or_null<SplitHeadsOp>(def);
  if (!split)
    return std::nullopt;
  auto linear = split.getX().getDefiningOp<LinearOp>();
  if (!linear)
    return std::nullopt;
  return Projection{linear, split};
}

/// The query of the softmax attention that reads `cache`, or null.
Value queryReading(Value cache) {
  for (Operation *user : cache.getUsers())
    if (auto attn = dyn_cast<AttentionOp>(user))
      if (attn.getKind() == AttentionKind::Softmax && attn.getState() == cache)
        return attn.getInputs().front();
  return {};
}

int64_t heads(SplitHeadsOp split) {
  return split.getResult().getType().cast<RankedTensorType>().getDimSize(1);
}
int64_t headDim(SplitHeadsOp split) {
  return split.getResult().getType().cast<RankedTensorType>().getDimSize(2);
}

/// The last of the three projections in the block: the packed one goes
/// right after it, where all three weights and the input exist.
Operation *lastOf(ArrayRef<Projection> qkv) {
  Operation *last = qkv.front().linear;
  for (Projection p : qkv)
    if (last->isBeforeInBlock(p.linear))
      last = p.linear;
  return last;
}

/// Why `qkv` cannot become one projection inserted after `insertAfter`, or
/// null when it can.
const char *whyNotPackable(ArrayRef<Projection> qkv, Operation *insertAfter,
                           DominanceInfo &dominance) {
  Projection q = qkv[0];
  Value x = q.linear.getX();
  bool bias = static_cast<bool>(q.linear.getBias());
  // The same op cannot be two of q, k and v.
  if (q.linear == qkv[1].linear || q.linear == qkv[2].linear ||
      qkv[1].linear == qkv[2].linear)
    return "q, k and v share a projection";
  for (Projection p : qkv) {
    if (p.linear.getX() != x)
      return "the projections read different inputs";
    if (static_cast<bool>(p.linear.getBias()) != bias)
      return "only some projections have a bias";
    // The packed output replaces each projection entirely.
    if (!p.linear->hasOneUse())
      return "a projection has another user";
    if (headDim(p.split) != headDim(q.split) ||
        ShapedType::isDynamic(headDim(p.split)))
      return "q and kv head sizes differ";
    // Consumers read the slices, which are defined after the last linear.
    for (Operation *user : p.split->getUsers())
      if (!dominance.properlyDominates(insertAfter, user))
        return "a consumer precedes the last projection";
  }
  return nullptr;
}

/// Rooted at a layer's KV append: its k and v, and the q of the attention
/// that reads the cache it returns, are the three projections replaced
/// together.
struct PackLayerQKV : OpRewritePattern<KVAppendOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(KVAppendOp append,
                                PatternRewriter &rewriter) const override {
    std::optional<Projection> k = projectionOf(append.getK());
    std::optional<Projection> v = projectionOf(append.getV());
    Value query = queryReading(append.getResult());
    std::optional<Projection> q =
        query ? projectionOf(query) : std::optional<Projection>();
    // v goes straight from its split to the cache.
    if (!q || !k || !v || append.getV() != v->split.getResult())
      return rewriter.notifyMatchFailure(
          append, "q, k or v is not split_heads(linear(x)) of this layer");
    Projection qkv[] = {*q, *k, *v};
    Operation *last = lastOf(qkv);
    DominanceInfo dominance(append->getParentOp());
    if (const char *why = whyNotPackable(qkv, last, dominance)) {
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": layer " << append.getLayer()
                              << " left unpacked: " << why << "\n");
      return rewriter.notifyMatchFailure(append, why);
    }

    rewriter.setInsertionPointAfter(last);
    Location loc = append.getLoc();
    auto axis = rewriter.getI64IntegerAttr(0);
    auto concat = [&](auto getter) -> Value {
      SmallVector<Value, 3> parts;
      for (Projection p : qkv)
        parts.push_back(getter(p.linear));
      if (!parts.front())
        return {};
      auto first = parts.front().getType().template cast<RankedTensorType>();
      SmallVector<int64_t, 2> shape(first.getShape());
      shape[0] = 0;
      for (Value part : parts)
        shape[0] +=
            part.getType().template cast<RankedTensorType>().getDimSize(0);
      auto type = RankedTensorType::get(shape, first.getElementType());
      return rewriter.create<ConcatWeightsOp>(loc, type, parts, axis);
    };
    Value weight = concat([](LinearOp l) { return l.getWeight(); });
    Value bias = concat([](LinearOp l) { return l.getBias(); });
    Value packed =
        rewriter.create<LinearOp>(loc, q->linear.getX(), weight, bias);
    int64_t hq = heads(q->split), hk = heads(k->split), hv = heads(v->split);
    Value qkvHeads = rewriter.create<SplitHeadsOp>(
        loc, packed, rewriter.getI64IntegerAttr(hq + hk + hv));
    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": layer " << append.getLayer() << " packed into "
               << hq << "+" << hk << "+" << hv << " heads\n");

    // All new ops first: the insertion point follows an op erased below.
    int64_t first = 0;
    SmallVector<Value, 3> slices;
    for (Projection p : qkv) {
      int64_t n = heads(p.split);
      slices.push_back(rewriter.create<HeadSliceOp>(
          loc, qkvHeads, rewriter.getI64IntegerAttr(first),
          rewriter.getI64IntegerAttr(n)));
      first += n;
    }
    for (auto [p, slice] : llvm::zip(qkv, slices)) {
      rewriter.replaceOp(p.split, slice);
      rewriter.eraseOp(p.linear);
    }
    return success();
  }
};

class FuseQKVPass : public impl::FuseQKVBase<FuseQKVPass> {
public:
  using Base::Base;
  FuseQKVPass() = default;
  // A clone for another thread counts on its own (PassStatistics.h).
  FuseQKVPass(const FuseQKVPass &other) : Base(other) {}

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!readPhaseFacts(func))
      return;
    const int64_t opsBefore = countAllOps(func);
    const int64_t packedBefore = countPackedQKV(func);
    softmaxLayers += countOps<KVAppendOp>(func);
    RewritePatternSet patterns(&getContext());
    patterns.add<PackLayerQKV>(&getContext());
    if (failed(applyFusionPatterns(
            func, FrozenRewritePatternSet(std::move(patterns)), getArgument())))
      return signalPassFailure();
    packed += countPackedQKV(func) - packedBefore;
    countOpChange(opsBefore, countAllOps(func), opsRemoved, opsAdded);
  }

private:
  /// Projections onto q, k and v weights concatenated at load time: one
  /// per packed layer (a packed bias is a second concat_weights, which
  /// no projection takes as its weight).
  static int64_t countPackedQKV(func::FuncOp func) {
    return countOps(func, [](Operation *op) {
      auto linear = dyn_cast<LinearOp>(op);
      auto concat = linear ? linear.getWeight().getDefiningOp<ConcatWeightsOp>()
                           : nullptr;
      return concat && concat->getNumOperands() == 3;
    });
  }

  PassStatistic softmaxLayers{this, "kv-appends",
                              "softmax layers seen (their kv_append roots "
                              "the pattern)"};
  PassStatistic packed{this, "qkv-packed",
                       "layers whose q, k and v projections became one "
                       "packed GEMM"};
  PassStatistic opsRemoved{this, "ops-removed",
                           "net decrease of the functions' op count"};
  PassStatistic opsAdded{this, "ops-added",
                         "net increase of the functions' op count"};
};

} // namespace
} // namespace strata

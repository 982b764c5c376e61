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
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"

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

class QKVFuser {
public:
  explicit QKVFuser(func::FuncOp func) : dominance(func) {}

  /// Packs the projections of the layer `append` belongs to; false when the
  /// layer does not have the expected shape.
  bool fuse(KVAppendOp append);

private:
  bool canPack(MutableArrayRef<Projection> qkv, Operation *insertAfter);
  DominanceInfo dominance;
};

bool QKVFuser::canPack(MutableArrayRef<Projection> qkv,
                       Operation *insertAfter) {
  Projection q = qkv[0];
  Value x = q.linear.getX();
  bool bias = static_cast<bool>(q.linear.getBias());
  for (Projection p : qkv) {
    // The packed output replaces each projection entirely.
    if (p.linear.getX() != x || static_cast<bool>(p.linear.getBias()) != bias ||
        !p.linear->hasOneUse() || headDim(p.split) != headDim(q.split) ||
        ShapedType::isDynamic(headDim(p.split)))
      return false;
    // Consumers read the slices, which are defined after the last linear.
    for (Operation *user : p.split->getUsers())
      if (!dominance.properlyDominates(insertAfter, user))
        return false;
  }
  // The same op cannot be two of q, k and v.
  return q.linear != qkv[1].linear && q.linear != qkv[2].linear &&
         qkv[1].linear != qkv[2].linear;
}

bool QKVFuser::fuse(KVAppendOp append) {
  std::optional<Projection> k = projectionOf(append.getK());
  std::optional<Projection> v = projectionOf(append.getV());
  Value query = queryReading(append.getResult());
  std::optional<Projection> q =
      query ? projectionOf(query) : std::optional<Projection>();
  // v goes straight from its split to the cache.
  if (!q || !k || !v || append.getV() != v->split.getResult())
    return false;
  Projection qkv[] = {*q, *k, *v};

  Operation *last = q->linear;
  for (Projection p : qkv)
    if (last->isBeforeInBlock(p.linear))
      last = p.linear;
  if (!canPack(qkv, last))
    return false;

  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  Location loc = append.getLoc();
  auto axis = b.getI64IntegerAttr(0);
  auto concat = [&](auto getter) -> Value {
    SmallVector<Value, 3> parts;
    SmallVector<int64_t, 2> shape;
    for (Projection p : qkv)
      parts.push_back(getter(p.linear));
    if (!parts.front())
      return {};
    auto first = parts.front().getType().template cast<RankedTensorType>();
    shape.assign(first.getShape().begin(), first.getShape().end());
    shape[0] = 0;
    for (Value part : parts)
      shape[0] +=
          part.getType().template cast<RankedTensorType>().getDimSize(0);
    auto type = RankedTensorType::get(shape, first.getElementType());
    return b.create<ConcatWeightsOp>(loc, type, parts, axis);
  };
  Value weight = concat([](LinearOp l) { return l.getWeight(); });
  Value bias = concat([](LinearOp l) { return l.getBias(); });
  Value packed = b.create<LinearOp>(loc, q->linear.getX(), weight, bias);
  int64_t hq = heads(q->split), hk = heads(k->split), hv = heads(v->split);
  Value qkvHeads =
      b.create<SplitHeadsOp>(loc, packed, b.getI64IntegerAttr(hq + hk + hv));

  // All new ops first: the insertion point may sit on an op erased below.
  int64_t first = 0;
  SmallVector<Value, 3> slices;
  for (Projection p : qkv) {
    int64_t n = heads(p.split);
    slices.push_back(b.create<HeadSliceOp>(
        loc, qkvHeads, b.getI64IntegerAttr(first), b.getI64IntegerAttr(n)));
    first += n;
  }
  for (auto [p, slice] : llvm::zip(qkv, slices)) {
    p.split.getResult().replaceAllUsesWith(slice);
    p.split.erase();
    p.linear.erase();
  }
  return true;
}

class FuseQKVPass : public impl::FuseQKVBase<FuseQKVPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!readPhaseFacts(func))
        continue;
      SmallVector<KVAppendOp> appends;
      func.walk([&](KVAppendOp op) { appends.push_back(op); });
      QKVFuser fuser(func);
      for (KVAppendOp append : appends)
        (void)fuser.fuse(append);
    }
  }
};

} // namespace
} // namespace strata

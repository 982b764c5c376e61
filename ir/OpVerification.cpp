//===- OpVerification.cpp - checks shared by strata verifiers -------------===//

#include "ir/OpVerification.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace strata::verify {

std::string formatDouble(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

LogicalResult checkDim(Operation *op, const Twine &aName, int64_t a,
                       const Twine &bName, int64_t b) {
  if (!differ(a, b))
    return success();
  return op->emitOpError() << aName << " " << a << " != " << bName << " " << b;
}

LogicalResult checkTokens(Operation *op, StringRef aName, Type a,
                          StringRef bName, Type b) {
  return checkDim(op, aName + " tokens",
                  a.cast<RankedTensorType>().getDimSize(0), bName + " tokens",
                  b.cast<RankedTensorType>().getDimSize(0));
}

LogicalResult checkElementType(Operation *op, StringRef aName, Type a,
                               StringRef bName, Type b) {
  Type ea = getElementTypeOrSelf(a), eb = getElementTypeOrSelf(b);
  if (ea == eb)
    return success();
  return op->emitOpError() << aName << " element type " << ea << " != " << bName
                           << " element type " << eb;
}

LogicalResult checkPositive(Operation *op, StringRef name, int64_t value) {
  if (value > 0)
    return success();
  return op->emitOpError() << name << " must be positive, got " << value;
}

LogicalResult checkPositive(Operation *op, StringRef name, double value) {
  if (value > 0.0)
    return success();
  return op->emitOpError() << name << " must be positive, got "
                           << formatDouble(value);
}

LogicalResult checkFiniteScale(Operation *op, StringRef name,
                               FloatAttr scale) {
  if (!scale || std::isfinite(scale.getValueAsDouble()))
    return success();
  return op->emitOpError() << name << " must be finite, got "
                           << formatDouble(scale.getValueAsDouble());
}

LogicalResult checkLayer(Operation *op, int64_t layer, StringRef stateName,
                         int64_t layers) {
  if (layer < 0)
    return op->emitOpError() << "layer must be non-negative, got " << layer;
  if (layer >= layers)
    return op->emitOpError()
           << "layer " << layer << " >= " << stateName << " layers " << layers;
  return success();
}

LogicalResult checkResultType(Operation *op, StringRef name, Type actual,
                              Type expected) {
  if (actual == expected)
    return success();
  return op->emitOpError() << name << " type " << actual << " != expected "
                           << expected;
}

bool sameRanks(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    auto lt = l.dyn_cast<RankedTensorType>();
    auto rt = r.dyn_cast<RankedTensorType>();
    if (!lt || !rt || lt.getRank() != rt.getRank())
      return false;
  }
  return true;
}

LogicalResult checkNorm(Operation *op, StringRef xName, RankedTensorType x,
                        StringRef weightName, RankedTensorType weight,
                        StringRef dimName, double eps) {
  if (failed(checkDim(op, weightName + " size", weight.getDimSize(0),
                      xName + " " + dimName, x.getDimSize(x.getRank() - 1))) ||
      failed(checkElementType(op, weightName, weight, xName, x)))
    return failure();
  return checkPositive(op, "eps", eps);
}

LogicalResult checkRope(Operation *op, const RopeParams &rope,
                        int64_t headDim) {
  if (failed(checkPositive(op, "rotary_dim", rope.rotaryDim)))
    return failure();
  // Elements are rotated in pairs.
  if (rope.rotaryDim % 2 != 0)
    return op->emitOpError()
           << "rotary_dim " << rope.rotaryDim << " must be even";
  if (!ShapedType::isDynamic(headDim) && rope.rotaryDim > headDim)
    return op->emitOpError() << "rotary_dim " << rope.rotaryDim
                             << " exceeds head_dim " << headDim;
  if (failed(checkPositive(op, "theta", rope.theta)))
    return failure();
  switch (rope.scaling) {
  case RopeScalingKind::None:
    // A factor without a scaling kind would be silently ignored.
    if (rope.scalingFactor != 1.0)
      return op->emitOpError()
             << "scaling_factor " << formatDouble(rope.scalingFactor)
             << " given with scaling none";
    return success();
  case RopeScalingKind::Linear:
    return checkPositive(op, "scaling_factor", rope.scalingFactor);
  case RopeScalingKind::Llama3:
    if (failed(checkPositive(op, "scaling_factor", rope.scalingFactor)) ||
        failed(checkPositive(op, "low_freq_factor", rope.lowFreqFactor)) ||
        failed(checkPositive(op, "original_max_positions",
                             rope.originalMaxPositions)))
      return failure();
    // The interpolation band between the two wavelengths must be non-empty.
    if (rope.highFreqFactor <= rope.lowFreqFactor)
      return op->emitOpError()
             << "high_freq_factor " << formatDouble(rope.highFreqFactor)
             << " must exceed low_freq_factor "
             << formatDouble(rope.lowFreqFactor);
    return success();
  }
  return success();
}

LogicalResult checkCachedQuery(Operation *op, RankedTensorType q,
                               KVCacheType cache, int64_t layer, double scale,
                               int64_t slidingWindow) {
  int64_t heads = q.getDimSize(1);
  // Grouped-query attention: each KV head serves a whole group of q heads.
  if (!ShapedType::isDynamic(heads) && heads % cache.getKvHeads() != 0)
    return op->emitOpError()
           << "q heads " << heads << " is not a multiple of kv cache kv_heads "
           << cache.getKvHeads();
  if (failed(checkDim(op, "q head_dim", q.getDimSize(2), "kv cache head_dim",
                      cache.getHeadDim())) ||
      failed(
          checkElementType(op, "q", q, "kv cache", cache.getElementType())) ||
      failed(checkLayer(op, layer, "kv cache", cache.getLayers())) ||
      failed(checkPositive(op, "scale", scale)))
    return failure();
  if (slidingWindow < 0)
    return op->emitOpError()
           << "sliding_window must be >= 0 (0 = unlimited), got "
           << slidingWindow;
  return success();
}

LogicalResult checkLinearAttention(Operation *op, RankedTensorType q,
                                   RankedTensorType k, RankedTensorType v,
                                   RankedTensorType out, LinearStateType state,
                                   int64_t layer,
                                   ArrayRef<double> decaySlopes) {
  if (failed(checkTokens(op, "k", k, "q", q)) ||
      failed(checkTokens(op, "v", v, "q", q)) ||
      failed(checkElementType(op, "k", k, "q", q)) ||
      failed(checkElementType(op, "v", v, "q", q)))
    return failure();
  const char *names[] = {"q", "k", "v"};
  RankedTensorType inputs[] = {q, k, v};
  for (int i = 0; i < 3; ++i)
    if (failed(checkDim(op, Twine(names[i]) + " heads", inputs[i].getDimSize(1),
                        "linear state heads", state.getHeads())))
      return failure();
  if (failed(checkDim(op, "q head_dim", q.getDimSize(2), "linear state key_dim",
                      state.getKeyDim())) ||
      failed(checkDim(op, "k head_dim", k.getDimSize(2), "linear state key_dim",
                      state.getKeyDim())) ||
      failed(checkDim(op, "v head_dim", v.getDimSize(2),
                      "linear state value_dim", state.getValueDim())) ||
      failed(checkResultType(op, "out", out, v)) ||
      failed(checkLayer(op, layer, "linear state", state.getLayers())))
    return failure();
  if (static_cast<int64_t>(decaySlopes.size()) != state.getHeads())
    return op->emitOpError()
           << "decay_slopes has " << decaySlopes.size()
           << " entries != linear state heads " << state.getHeads();
  for (auto [i, slope] : llvm::enumerate(decaySlopes))
    // A slope <= 0 would make the state grow without bound.
    if (slope <= 0.0)
      return op->emitOpError()
             << "decay_slopes[" << i << "] must be positive, got "
             << formatDouble(slope);
  return success();
}

} // namespace strata::verify

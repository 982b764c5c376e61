//===- StrataAttentionOps.cpp - rope, kv_append, attention ----------------===//
//
// Verifiers and builders of the generic ops that touch positions and the
// per-sequence state: strata.rope, strata.kv_append and strata.attention.
//
//===----------------------------------------------------------------------===//

#include "ir/OpVerification.h"
#include "ir/StrataOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace strata;
using namespace strata::verify;

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::verify() {
  RankedTensorType x = tensorType(getX());
  if (failed(checkTokens(*this, "positions", getPositions().getType(), "x", x)))
    return failure();
  RopeParams rope{static_cast<int64_t>(getRotaryDim()),
                  getTheta().convertToDouble(),
                  getScaling(),
                  getScalingFactor().convertToDouble(),
                  getLowFreqFactor().convertToDouble(),
                  getHighFreqFactor().convertToDouble(),
                  static_cast<int64_t>(getOriginalMaxPositions())};
  return checkRope(*this, rope, x.getDimSize(2));
}

//===----------------------------------------------------------------------===//
// KVAppendOp
//===----------------------------------------------------------------------===//

/// k or v [T, kv_heads, head_dim] against the cache geometry.
static LogicalResult checkKVAgainstCache(Operation *op, StringRef name,
                                         RankedTensorType t,
                                         KVCacheType cache) {
  if (failed(checkDim(op, name + " heads", t.getDimSize(1), "kv cache kv_heads",
                      cache.getKvHeads())) ||
      failed(checkDim(op, name + " head_dim", t.getDimSize(2),
                      "kv cache head_dim", cache.getHeadDim())))
    return failure();
  return checkElementType(op, name, t, "kv cache", cache.getElementType());
}

LogicalResult KVAppendOp::verify() {
  RankedTensorType k = tensorType(getK()), v = tensorType(getV());
  KVCacheType cache = getCache().getType();
  if (failed(checkTokens(*this, "v", v, "k", k)) ||
      failed(checkKVAgainstCache(*this, "k", k, cache)) ||
      failed(checkKVAgainstCache(*this, "v", v, cache)))
    return failure();
  return checkLayer(*this, static_cast<int64_t>(getLayer()), "kv cache",
                    cache.getLayers());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value q,
                        Value cache, Value seqs, int64_t layer, double scale,
                        bool causal, int64_t slidingWindow) {
  state.addOperands({q, cache, seqs});
  state.addAttribute(
      getKindAttrName(state.name),
      AttentionKindAttr::get(builder.getContext(), AttentionKind::Softmax));
  state.addAttribute(getLayerAttrName(state.name),
                     builder.getI64IntegerAttr(layer));
  state.addAttribute(getScaleAttrName(state.name),
                     builder.getF64FloatAttr(scale));
  if (causal)
    state.addAttribute(getCausalAttrName(state.name), builder.getUnitAttr());
  state.addAttribute(getSlidingWindowAttrName(state.name),
                     builder.getI64IntegerAttr(slidingWindow));
  state.addTypes(q.getType());
}

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value q,
                        Value k, Value v, Value linearState, Value seqs,
                        int64_t layer, ArrayRef<double> decaySlopes) {
  state.addOperands({q, k, v, linearState, seqs});
  state.addAttribute(
      getKindAttrName(state.name),
      AttentionKindAttr::get(builder.getContext(), AttentionKind::Linear));
  state.addAttribute(getLayerAttrName(state.name),
                     builder.getI64IntegerAttr(layer));
  state.addAttribute(getDecaySlopesAttrName(state.name),
                     builder.getDenseF64ArrayAttr(decaySlopes));
  state.addTypes({v.getType(), linearState.getType()});
}

LogicalResult AttentionOp::verify() {
  ValueRange inputs = getInputs();
  Type stateType = getState().getType();
  int64_t layer = static_cast<int64_t>(getLayer());
  unsigned numResults = getNumResults();

  if (getKind() == AttentionKind::Softmax) {
    if (inputs.size() != 1)
      return emitOpError() << "softmax attention takes 1 input (q), got "
                           << inputs.size();
    auto cache = stateType.dyn_cast<KVCacheType>();
    if (!cache)
      return emitOpError()
             << "softmax attention needs a !strata.kv_cache state, got "
             << stateType;
    if (numResults != 1)
      return emitOpError() << "softmax attention has 1 result, got "
                           << numResults;
    if (getDecaySlopes())
      return emitOpError("decay_slopes is only valid for linear attention");
    if (!getScale())
      return emitOpError("softmax attention needs a scale");
    RankedTensorType q = tensorType(inputs[0]);
    if (failed(checkCachedQuery(
            *this, q, cache, layer, getScale()->convertToDouble(),
            static_cast<int64_t>(getSlidingWindow().value_or(0)))))
      return failure();
    return checkResultType(*this, "out", getOut().getType(), q);
  }

  if (inputs.size() != 3)
    return emitOpError() << "linear attention takes 3 inputs (q, k, v), got "
                         << inputs.size();
  auto linearState = stateType.dyn_cast<LinearStateType>();
  if (!linearState)
    return emitOpError()
           << "linear attention needs a !strata.linear_state state, got "
           << stateType;
  if (numResults != 2)
    return emitOpError()
           << "linear attention has 2 results (out, new state), got "
           << numResults;
  // Linear attention is causal by construction and has no softmax.
  if (getScale())
    return emitOpError("scale is only valid for softmax attention");
  if (getCausal())
    return emitOpError("causal is only valid for softmax attention");
  if (getSlidingWindow())
    return emitOpError("sliding_window is only valid for softmax attention");
  if (!getDecaySlopes())
    return emitOpError("linear attention needs decay_slopes");
  if (failed(checkResultType(*this, "new state", getNewState().getType(),
                             linearState)))
    return failure();
  return checkLinearAttention(*this, tensorType(inputs[0]),
                              tensorType(inputs[1]), tensorType(inputs[2]),
                              tensorType(getOut()), linearState, layer,
                              *getDecaySlopes());
}

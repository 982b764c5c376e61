//===- StrataFusedOps.cpp - fused ops: verifiers --------------------------===//

#include "ir/EnumKeyword.h"
#include "ir/OpVerification.h"
#include "ir/StrataOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace strata;
using namespace strata::verify;

#define GET_OP_CLASSES
#include "ir/StrataFusedOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ConcatWeightsOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatWeightsOp::verify() {
  ValueRange inputs = getInputs();
  if (inputs.size() < 2)
    return emitOpError() << "needs at least 2 inputs, got " << inputs.size();
  RankedTensorType first = tensorType(inputs[0]);
  int64_t rank = first.getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  SmallVector<int64_t, 2> shape(first.getShape());
  for (unsigned i = 1; i < inputs.size(); ++i) {
    RankedTensorType t = tensorType(inputs[i]);
    if (t.getRank() != rank)
      return emitOpError() << "input " << i << " rank " << t.getRank()
                           << " != input 0 rank " << rank;
    if (failed(checkElementType(*this, ("input " + Twine(i)).str(), t,
                                "input 0", first)))
      return failure();
    shape[axis] += t.getDimSize(axis);
    if (rank == 1)
      continue;
    int64_t other = 1 - axis;
    if (failed(checkDim(
            *this, "input " + Twine(i) + " dim " + Twine(other) + " size",
            t.getDimSize(other), "input 0 dim " + Twine(other) + " size",
            first.getDimSize(other))))
      return failure();
  }
  return checkResultType(*this, "result", getResult().getType(),
                         RankedTensorType::get(shape, first.getElementType()));
}

//===----------------------------------------------------------------------===//
// Packed-QKV geometry, shared by rope_kv_write and prefill_attention
//===----------------------------------------------------------------------===//

/// qkv [T, Hq + 2*Hkv, D] with Hq a multiple of Hkv.
static LogicalResult checkPackedHeads(Operation *op, RankedTensorType qkv,
                                      int64_t numQHeads, int64_t numKvHeads) {
  if (failed(checkPositive(op, "num_q_heads", numQHeads)) ||
      failed(checkPositive(op, "num_kv_heads", numKvHeads)))
    return failure();
  if (numQHeads % numKvHeads != 0)
    return op->emitOpError()
           << "num_q_heads " << numQHeads
           << " is not a multiple of num_kv_heads " << numKvHeads;
  int64_t packed = numQHeads + 2 * numKvHeads;
  if (differ(qkv.getDimSize(1), packed))
    return op->emitOpError()
           << "qkv heads " << qkv.getDimSize(1)
           << " != num_q_heads + 2 * num_kv_heads = " << packed;
  return success();
}

/// q as the kernels write it out: [T, Hq, D].
static RankedTensorType queryType(RankedTensorType qkv, int64_t numQHeads) {
  return RankedTensorType::get(
      {qkv.getDimSize(0), numQHeads, qkv.getDimSize(2)}, qkv.getElementType());
}

//===----------------------------------------------------------------------===//
// RopeKVWriteOp
//===----------------------------------------------------------------------===//

LogicalResult RopeKVWriteOp::verify() {
  RankedTensorType qkv = tensorType(getQkv());
  KVCacheType cache = getCache().getType();
  int64_t numQHeads = getNumQHeadsAttr().getInt();
  int64_t numKvHeads = getNumKvHeadsAttr().getInt();
  if (failed(checkPackedHeads(*this, qkv, numQHeads, numKvHeads)) ||
      failed(checkDim(*this, "num_kv_heads", numKvHeads, "kv cache kv_heads",
                      cache.getKvHeads())) ||
      failed(checkDim(*this, "qkv head_dim", qkv.getDimSize(2),
                      "kv cache head_dim", cache.getHeadDim())) ||
      failed(checkElementType(*this, "qkv", qkv, "kv cache",
                              cache.getElementType())) ||
      failed(checkLayer(*this, getLayerAttr().getInt(), "kv cache",
                        cache.getLayers())) ||
      failed(checkTokens(*this, "positions", getPositions().getType(), "qkv",
                         qkv)))
    return failure();

  RopeParams rope{getRotaryDimAttr().getInt(),
                  getTheta().convertToDouble(),
                  getScaling(),
                  getScalingFactor().convertToDouble(),
                  getLowFreqFactor().convertToDouble(),
                  getHighFreqFactor().convertToDouble(),
                  static_cast<int64_t>(getOriginalMaxPositions())};
  if (failed(checkRope(*this, rope, qkv.getDimSize(2))))
    return failure();

  // QK-norm: one weight vector for q heads and one for k heads.
  Value qNorm = getQNormWeight(), kNorm = getKNormWeight();
  if (static_cast<bool>(qNorm) != static_cast<bool>(kNorm))
    return emitOpError() << "q_norm and k_norm weights must be given together"
                         << " (got only " << (qNorm ? "q_norm" : "k_norm")
                         << ")";
  if (qNorm) {
    if (!getQkNormEps())
      return emitOpError("qk_norm_eps is required with q_norm/k_norm weights");
    double eps = getQkNormEps()->convertToDouble();
    if (failed(checkNorm(*this, "qkv", qkv, "q_norm", tensorType(qNorm),
                         "head_dim", eps)) ||
        failed(checkNorm(*this, "qkv", qkv, "k_norm", tensorType(kNorm),
                         "head_dim", eps)))
      return failure();
  } else if (getQkNormEps()) {
    return emitOpError("qk_norm_eps given without q_norm/k_norm weights");
  }

  // packed rotates in place and returns the whole buffer; the other variants
  // write q out on its own.
  RankedTensorType expectedOut =
      getVariant() == RopeVariant::Packed ? qkv : queryType(qkv, numQHeads);
  if (failed(checkResultType(*this, "out", getOut().getType(), expectedOut)))
    return failure();
  return checkResultType(*this, "new cache", getNewCache().getType(), cache);
}

//===----------------------------------------------------------------------===//
// Softmax attention kernels
//===----------------------------------------------------------------------===//

LogicalResult PrefillAttentionOp::verify() {
  RankedTensorType qkv = tensorType(getQkv());
  int64_t numQHeads = getNumQHeadsAttr().getInt();
  if (failed(checkPackedHeads(*this, qkv, numQHeads,
                              getNumKvHeadsAttr().getInt())) ||
      failed(checkPositive(*this, "scale", getScale().convertToDouble())))
    return failure();
  auto window = static_cast<int64_t>(getSlidingWindow());
  if (window < 0)
    return emitOpError() << "sliding_window must be >= 0 (0 = unlimited), got "
                         << window;
  return checkResultType(*this, "result", getResult().getType(),
                         queryType(qkv, numQHeads));
}

template <typename CachedOp> static LogicalResult verifyCached(CachedOp op) {
  return checkCachedQuery(op, tensorType(op.getQ()), op.getCache().getType(),
                          static_cast<int64_t>(op.getLayer()),
                          op.getScale().convertToDouble(),
                          static_cast<int64_t>(op.getSlidingWindow()));
}

LogicalResult ExtendAttentionOp::verify() { return verifyCached(*this); }

LogicalResult PagedDecodeAttentionOp::verify() {
  if (failed(verifyCached(*this)))
    return failure();
  return checkPositive(*this, "max_splits", getMaxSplitsAttr().getInt());
}

LogicalResult TreeAttentionOp::verify() {
  if (failed(verifyCached(*this)))
    return failure();
  return checkTokens(*this, "parent_ids", getParentIds().getType(), "q",
                     tensorType(getQ()));
}

//===----------------------------------------------------------------------===//
// Linear attention kernels
//===----------------------------------------------------------------------===//

template <typename LightningOp>
static LogicalResult verifyLightning(LightningOp op) {
  return checkLinearAttention(
      op, tensorType(op.getQ()), tensorType(op.getK()), tensorType(op.getV()),
      tensorType(op.getOut()), op.getState().getType(),
      static_cast<int64_t>(op.getLayer()), op.getDecaySlopes());
}

LogicalResult LightningPrefillOp::verify() {
  if (failed(verifyLightning(*this)))
    return failure();
  return checkPositive(*this, "chunk_size", getChunkSizeAttr().getInt());
}

LogicalResult LightningDecodeOp::verify() { return verifyLightning(*this); }

//===----------------------------------------------------------------------===//
// Norm and MLP fusions
//===----------------------------------------------------------------------===//

LogicalResult AddRMSNormOp::verify() {
  if (failed(checkFiniteScale(*this, "x_scale", getXScaleAttr())) ||
      failed(checkFiniteScale(*this, "residual_scale", getResidualScaleAttr())))
    return failure();
  return checkNorm(*this, "x", tensorType(getX()), "weight",
                   tensorType(getWeight()), "hidden size",
                   getEps().convertToDouble());
}

LogicalResult SwiGLUOp::verify() {
  RankedTensorType gateUp = tensorType(getGateUp());
  int64_t features = gateUp.getDimSize(1);
  if (ShapedType::isDynamic(features))
    return emitOpError("gate_up features must be static");
  if (features % 2 != 0)
    return emitOpError() << "gate_up features " << features
                         << " must be even (gate and up halves)";
  return checkResultType(
      *this, "result", getResult().getType(),
      RankedTensorType::get({gateUp.getDimSize(0), features / 2},
                            gateUp.getElementType()));
}

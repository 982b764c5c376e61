//===- StrataOps.cpp - generic ops: shapes and verifiers ------------------===//
//
// Result inference and verifiers of the generic ops other than rotary
// embedding and attention (StrataAttentionOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "ir/EnumKeyword.h"
#include "ir/OpVerification.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace strata;
using namespace strata::verify;

#define GET_OP_CLASSES
#include "ir/StrataOps.cpp.inc"

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// Operand `i` as a ranked tensor of `rank`, or null: inference runs after
/// the operand constraints in the verifier, but builders call it directly.
RankedTensorType operandTensor(ValueRange operands, unsigned i, int64_t rank) {
  if (operands.size() <= i)
    return {};
  auto t = operands[i].getType().dyn_cast<RankedTensorType>();
  return t && t.getRank() == rank ? t : RankedTensorType();
}

LogicalResult inferFailure(std::optional<Location> loc, StringRef opName) {
  return emitOptionalError(loc, "'", opName,
                           "' op cannot infer the result type: operands "
                           "have the wrong rank");
}

} // namespace

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError("name must not be empty");
  // The plan allocates and loads every parameter before the first step.
  if (!tensorType(getResult()).hasStaticShape())
    return emitOpError() << "weight '" << getName()
                         << "' must have a static shape, got "
                         << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            ValueRange operands, DictionaryAttr,
                                            RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  RankedTensorType ids = operandTensor(operands, 0, 1);
  RankedTensorType table = operandTensor(operands, 1, 2);
  if (!ids || !table)
    return inferFailure(loc, getOperationName());
  inferred.push_back(RankedTensorType::get(
      {ids.getDimSize(0), table.getDimSize(1)}, table.getElementType()));
  return success();
}

bool EmbeddingOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult EmbeddingOp::verify() {
  RankedTensorType ids = tensorType(getIds()), table = tensorType(getTable());
  return checkResultType(
      *this, "result", getResult().getType(),
      RankedTensorType::get({ids.getDimSize(0), table.getDimSize(1)},
                            table.getElementType()));
}

//===----------------------------------------------------------------------===//
// AddOp
//===----------------------------------------------------------------------===//

LogicalResult AddOp::verify() {
  if (failed(checkFiniteScale(*this, "lhs_scale", getLhsScaleAttr())))
    return failure();
  return checkFiniteScale(*this, "rhs_scale", getRhsScaleAttr());
}

//===----------------------------------------------------------------------===//
// RMSNormOp, HeadNormOp
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::verify() {
  return checkNorm(*this, "x", tensorType(getX()), "weight",
                   tensorType(getWeight()), "hidden size",
                   getEps().convertToDouble());
}

LogicalResult HeadNormOp::verify() {
  return checkNorm(*this, "x", tensorType(getX()), "weight",
                   tensorType(getWeight()), "head_dim",
                   getEps().convertToDouble());
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr,
                                         RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType x = operandTensor(operands, 0, 2);
  RankedTensorType w = operandTensor(operands, 1, 2);
  if (!x || !w)
    return inferFailure(loc, getOperationName());
  inferred.push_back(RankedTensorType::get({x.getDimSize(0), w.getDimSize(0)},
                                           x.getElementType()));
  return success();
}

bool LinearOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult LinearOp::verify() {
  RankedTensorType x = tensorType(getX()), w = tensorType(getWeight());
  if (failed(checkDim(*this, "x in_features", x.getDimSize(1),
                      "weight in_features", w.getDimSize(1))) ||
      failed(checkElementType(*this, "weight", w, "x", x)))
    return failure();
  if (Value bias = getBias()) {
    RankedTensorType b = tensorType(bias);
    if (failed(checkDim(*this, "bias size", b.getDimSize(0),
                        "weight out_features", w.getDimSize(0))) ||
        failed(checkElementType(*this, "bias", b, "x", x)))
      return failure();
  }
  return checkResultType(
      *this, "result", getResult().getType(),
      RankedTensorType::get({x.getDimSize(0), w.getDimSize(0)},
                            x.getElementType()));
}

//===----------------------------------------------------------------------===//
// SplitHeadsOp, MergeHeadsOp
//===----------------------------------------------------------------------===//

/// [T, H*D] -> [T, H, D]; D is dynamic when H*D is, or when the division is
/// not exact (the verifier reports that case).
static RankedTensorType splitType(RankedTensorType x, int64_t numHeads) {
  int64_t features = x.getDimSize(1);
  int64_t headDim = kDynamic;
  if (!ShapedType::isDynamic(features) && numHeads > 0 &&
      features % numHeads == 0)
    headDim = features / numHeads;
  return RankedTensorType::get({x.getDimSize(0), numHeads, headDim},
                               x.getElementType());
}

LogicalResult SplitHeadsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             ValueRange operands,
                                             DictionaryAttr attributes,
                                             RegionRange regions,
                                             SmallVectorImpl<Type> &inferred) {
  RankedTensorType x = operandTensor(operands, 0, 2);
  Adaptor adaptor(operands, attributes, regions);
  auto numHeads = adaptor.getNumHeadsAttr();
  if (!x || !numHeads)
    return inferFailure(loc, getOperationName());
  inferred.push_back(splitType(x, numHeads.getInt()));
  return success();
}

bool SplitHeadsOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult SplitHeadsOp::verify() {
  RankedTensorType x = tensorType(getX());
  int64_t numHeads = getNumHeadsAttr().getInt();
  int64_t features = x.getDimSize(1);
  if (failed(checkPositive(*this, "num_heads", numHeads)))
    return failure();
  if (!ShapedType::isDynamic(features) && features % numHeads != 0)
    return emitOpError() << "x features " << features
                         << " is not a multiple of num_heads " << numHeads;
  return checkResultType(*this, "result", getResult().getType(),
                         splitType(x, numHeads));
}

LogicalResult MergeHeadsOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             ValueRange operands,
                                             DictionaryAttr, RegionRange,
                                             SmallVectorImpl<Type> &inferred) {
  RankedTensorType x = operandTensor(operands, 0, 3);
  if (!x)
    return inferFailure(loc, getOperationName());
  int64_t heads = x.getDimSize(1), headDim = x.getDimSize(2);
  int64_t features =
      ShapedType::isDynamic(heads) || ShapedType::isDynamic(headDim)
          ? kDynamic
          : heads * headDim;
  inferred.push_back(
      RankedTensorType::get({x.getDimSize(0), features}, x.getElementType()));
  return success();
}

bool MergeHeadsOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult MergeHeadsOp::verify() {
  SmallVector<Type, 1> expected;
  (void)inferReturnTypes(getContext(), getLoc(), (*this)->getOperands(),
                         (*this)->getAttrDictionary(), {}, expected);
  return checkResultType(*this, "result", getResult().getType(),
                         expected.front());
}

//===----------------------------------------------------------------------===//
// HeadSliceOp
//===----------------------------------------------------------------------===//

LogicalResult HeadSliceOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            ValueRange operands,
                                            DictionaryAttr attributes,
                                            RegionRange regions,
                                            SmallVectorImpl<Type> &inferred) {
  RankedTensorType x = operandTensor(operands, 0, 3);
  Adaptor adaptor(operands, attributes, regions);
  auto numHeads = adaptor.getNumHeadsAttr();
  if (!x || !numHeads)
    return inferFailure(loc, getOperationName());
  inferred.push_back(RankedTensorType::get(
      {x.getDimSize(0), numHeads.getInt(), x.getDimSize(2)},
      x.getElementType()));
  return success();
}

bool HeadSliceOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult HeadSliceOp::verify() {
  RankedTensorType x = tensorType(getX());
  int64_t first = getFirstAttr().getInt();
  int64_t numHeads = getNumHeadsAttr().getInt();
  if (first < 0)
    return emitOpError() << "first must be >= 0, got " << first;
  if (failed(checkPositive(*this, "num_heads", numHeads)))
    return failure();
  int64_t heads = x.getDimSize(1);
  if (!ShapedType::isDynamic(heads) && first + numHeads > heads)
    return emitOpError() << "heads " << first << ".." << first + numHeads - 1
                         << " are out of range for x heads " << heads;
  SmallVector<Type, 1> expected;
  (void)inferReturnTypes(getContext(), getLoc(), (*this)->getOperands(),
                         (*this)->getAttrDictionary(), {}, expected);
  return checkResultType(*this, "result", getResult().getType(),
                         expected.front());
}

//===----------------------------------------------------------------------===//
// LogitsOp, SampleOp
//===----------------------------------------------------------------------===//

LogicalResult LogitsOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr,
                                         RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType w = operandTensor(operands, 1, 2);
  if (!w)
    return inferFailure(loc, getOperationName());
  // Rows are sequences (or all tokens): known only at run time. Logits are
  // f32 whatever the model's dtype, for sampling accuracy.
  inferred.push_back(RankedTensorType::get({kDynamic, w.getDimSize(0)},
                                           Float32Type::get(context)));
  return success();
}

bool LogitsOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult LogitsOp::verify() {
  RankedTensorType h = tensorType(getHidden()), w = tensorType(getWeight());
  if (failed(checkDim(*this, "hidden size", h.getDimSize(1),
                      "weight hidden size", w.getDimSize(1))) ||
      failed(checkElementType(*this, "weight", w, "hidden", h)))
    return failure();
  return checkDim(*this, "result vocab size",
                  tensorType(getResult()).getDimSize(1), "weight vocab size",
                  w.getDimSize(0));
}

LogicalResult SampleOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr,
                                         RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType logits = operandTensor(operands, 0, 2);
  if (!logits)
    return inferFailure(loc, getOperationName());
  inferred.push_back(RankedTensorType::get({logits.getDimSize(0)},
                                           IntegerType::get(context, 32)));
  return success();
}

bool SampleOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return sameRanks(l, r);
}

LogicalResult SampleOp::verify() {
  return checkDim(*this, "result rows", tensorType(getResult()).getDimSize(0),
                  "logits rows", tensorType(getLogits()).getDimSize(0));
}

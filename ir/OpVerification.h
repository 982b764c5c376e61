//===- OpVerification.h - checks shared by strata verifiers -----*- C++ -*-===//
//
// Internal to StrataIR. Every check emits an op error that names the two
// quantities that disagree and both of their values, so that a message alone
// says what to fix ("q head_dim 128 != kv cache head_dim 64").
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_IR_OPVERIFICATION_H
#define STRATA_IR_OPVERIFICATION_H

#include "ir/StrataTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeRange.h"

#include <string>

namespace strata::verify {

/// True when both sizes are static and differ; dynamic sizes (the token
/// dimension) are checked at run time by the plan.
inline bool differ(int64_t a, int64_t b) {
  return !mlir::ShapedType::isDynamic(a) && !mlir::ShapedType::isDynamic(b) &&
         a != b;
}

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return v.getType().cast<mlir::RankedTensorType>();
}

/// Formats a double for messages: "8", "0.125", "1e-05".
std::string formatDouble(double value);

/// "<aName> <a> != <bName> <b>" when the static sizes differ.
mlir::LogicalResult checkDim(mlir::Operation *op, const llvm::Twine &aName,
                             int64_t a, const llvm::Twine &bName, int64_t b);

/// Compares dimension 0 (tokens) of two tensors.
mlir::LogicalResult checkTokens(mlir::Operation *op, llvm::StringRef aName,
                                mlir::Type a, llvm::StringRef bName,
                                mlir::Type b);

/// "<aName> element type f16 != <bName> element type f32".
mlir::LogicalResult checkElementType(mlir::Operation *op, llvm::StringRef aName,
                                     mlir::Type a, llvm::StringRef bName,
                                     mlir::Type b);

/// "<name> must be positive, got <value>".
mlir::LogicalResult checkPositive(mlir::Operation *op, llvm::StringRef name,
                                  int64_t value);
mlir::LogicalResult checkPositive(mlir::Operation *op, llvm::StringRef name,
                                  double value);

/// An optional scale attribute, when present, is a finite number.
mlir::LogicalResult checkFiniteScale(mlir::Operation *op, llvm::StringRef name,
                                     mlir::FloatAttr scale);

/// 0 <= layer < layers of the state the layer indexes.
mlir::LogicalResult checkLayer(mlir::Operation *op, int64_t layer,
                               llvm::StringRef stateName, int64_t layers);

/// A result type equals the type computed from the operands (dynamic sizes
/// stay dynamic): "result type 'A' != expected 'B'".
mlir::LogicalResult checkResultType(mlir::Operation *op, llvm::StringRef name,
                                    mlir::Type actual, mlir::Type expected);

/// Return types of ops whose inference is only a first approximation: the
/// ranks must agree, everything else is checked by the op's verifier with a
/// message that names the mismatch.
bool sameRanks(mlir::TypeRange lhs, mlir::TypeRange rhs);

/// Norms over the last dimension of x: one weight per element of it
/// (`dimName` names that dimension), same element type, eps > 0.
mlir::LogicalResult checkNorm(mlir::Operation *op, llvm::StringRef xName,
                              mlir::RankedTensorType x,
                              llvm::StringRef weightName,
                              mlir::RankedTensorType weight,
                              llvm::StringRef dimName, double eps);

/// Rotary parameters shared by strata.rope and strata.rope_kv_write.
struct RopeParams {
  int64_t rotaryDim;
  double theta;
  RopeScalingKind scaling;
  double scalingFactor;
  double lowFreqFactor;
  double highFreqFactor;
  int64_t originalMaxPositions;
};
mlir::LogicalResult checkRope(mlir::Operation *op, const RopeParams &rope,
                              int64_t headDim);

/// Softmax attention of q [T, Hq, D] against layer `layer` of `cache`:
/// Hq % kv_heads == 0, head_dim and element type agree, layer in range,
/// scale > 0, sliding_window >= 0.
mlir::LogicalResult checkCachedQuery(mlir::Operation *op,
                                     mlir::RankedTensorType q,
                                     KVCacheType cache, int64_t layer,
                                     double scale, int64_t slidingWindow);

/// Linear attention: q, k [T, H, Dk], v and out [T, H, Dv] against the
/// state's heads/key_dim/value_dim, one positive decay slope per head.
mlir::LogicalResult
checkLinearAttention(mlir::Operation *op, mlir::RankedTensorType q,
                     mlir::RankedTensorType k, mlir::RankedTensorType v,
                     mlir::RankedTensorType out, LinearStateType state,
                     int64_t layer, llvm::ArrayRef<double> decaySlopes);

} // namespace strata::verify

#endif // STRATA_IR_OPVERIFICATION_H

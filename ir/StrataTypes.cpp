//===- StrataTypes.cpp - strata types -------------------------------------===//

#include "ir/StrataTypes.h"
#include "ir/StrataDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace strata;

#define GET_TYPEDEF_CLASSES
#include "ir/StrataTypes.cpp.inc"

void StrataDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ir/StrataTypes.cpp.inc"
      >();
}

namespace {

LogicalResult checkPositive(function_ref<InFlightDiagnostic()> emitError,
                            StringRef type, StringRef param, int64_t value) {
  if (value > 0)
    return success();
  return emitError() << type << " " << param << " must be positive, got "
                     << value;
}

} // namespace

LogicalResult KVCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t layers, int64_t kvHeads,
                                  int64_t headDim, int64_t blockSize,
                                  Type elementType) {
  if (failed(checkPositive(emitError, "kv_cache", "layers", layers)) ||
      failed(checkPositive(emitError, "kv_cache", "kv_heads", kvHeads)) ||
      failed(checkPositive(emitError, "kv_cache", "head_dim", headDim)) ||
      failed(checkPositive(emitError, "kv_cache", "block_size", blockSize)))
    return failure();
  // Block tables index tokens with shifts and masks.
  if (!llvm::isPowerOf2_64(static_cast<uint64_t>(blockSize)))
    return emitError() << "kv_cache block_size must be a power of two, got "
                       << blockSize;
  if (!elementType.isF16() && !elementType.isBF16() && !elementType.isF32())
    return emitError() << "kv_cache element type must be f16, bf16 or f32, got "
                       << elementType;
  return success();
}

LogicalResult
LinearStateType::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t layers, int64_t heads, int64_t keyDim,
                        int64_t valueDim, Type elementType) {
  if (failed(checkPositive(emitError, "linear_state", "layers", layers)) ||
      failed(checkPositive(emitError, "linear_state", "heads", heads)) ||
      failed(checkPositive(emitError, "linear_state", "key_dim", keyDim)) ||
      failed(checkPositive(emitError, "linear_state", "value_dim", valueDim)))
    return failure();
  // The state sums the whole history of a sequence; half precision would
  // drift within a few thousand tokens.
  if (!elementType.isF32())
    return emitError() << "linear_state element type must be f32, got "
                       << elementType;
  return success();
}

// The storage type of activations, weights and the KV cache, as the CUDA
// launchers and the CPU references take it.
//
// The CPU references run all three types. The CUDA kernels are instantiated
// for the two 16-bit types only (their vector loads, tensor-core operands
// and cuBLASLt types are 16-bit), so every launcher that picks an
// instantiation from an ActDType checks requireDeviceActDType first instead
// of reading 4-byte elements as 2-byte ones.
#ifndef STRATA_KERNELS_COMMON_ACTDTYPE_H
#define STRATA_KERNELS_COMMON_ACTDTYPE_H

#include "kernels/common/Status.h"

#include <cstdint>
#include <string>

namespace strata::kernels {

enum class ActDType : uint8_t { F16, BF16, F32 };

/// Bytes of one element.
inline int64_t actDTypeBytes(ActDType type) {
  return type == ActDType::F32 ? 4 : 2;
}

inline const char *actDTypeName(ActDType type) {
  switch (type) {
  case ActDType::F16:
    return "f16";
  case ActDType::BF16:
    return "bf16";
  case ActDType::F32:
    return "f32";
  }
  return "unknown";
}

/// Success for the types the CUDA kernels are built for (bf16, f16); else
/// "OP: f32 storage is not supported by the CUDA kernels (bf16 or f16)".
inline Status requireDeviceActDType(const char *op, ActDType type) {
  if (type == ActDType::BF16 || type == ActDType::F16)
    return Status::success();
  return Status::error(std::string(op) + ": " + actDTypeName(type) +
                       " storage is not supported by the CUDA kernels "
                       "(bf16 or f16)");
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_ACTDTYPE_H

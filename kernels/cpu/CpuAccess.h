// Element and KV-cache row access shared by the CPU reference kernels, so
// that every reference reads and writes storage exactly one way. Tensors are
// untyped pointers with their ActDType beside them; indices count elements,
// whose width comes from the dtype (2 bytes for bf16 and f16, 4 for f32).
#ifndef STRATA_KERNELS_CPU_CPUACCESS_H
#define STRATA_KERNELS_CPU_CPUACCESS_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/cpu/HalfTypes.h"

#include <cstdint>
#include <cstring>

namespace strata::kernels {

/// A 16-bit (bf16 or f16) element's bits widened to fp32, exactly.
inline float halfBitsToFloat(ActDType type, uint16_t bits) {
  return type == ActDType::BF16 ? bf16BitsToFloat(bits) : f16BitsToFloat(bits);
}

/// fp32 rounded to a 16-bit (bf16 or f16) element's bits, nearest even.
inline uint16_t floatToHalfBits(ActDType type, float value) {
  return type == ActDType::BF16 ? floatToBf16Bits(value)
                                : floatToF16Bits(value);
}

/// Element `index` of `base`, widened to fp32 (exact for every dtype).
inline float loadAct(ActDType type, const void *base, int64_t index) {
  const auto *bytes = static_cast<const unsigned char *>(base);
  if (type == ActDType::F32) {
    float f;
    std::memcpy(&f, bytes + index * 4, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes + index * 2, 2);
  return halfBitsToFloat(type, h);
}

/// Stores `value` at element `index` of `base`, rounded once to the dtype
/// (round to nearest even, as the GPU stores it); f32 stores it unchanged.
inline void storeAct(ActDType type, void *base, int64_t index, float value) {
  auto *bytes = static_cast<unsigned char *>(base);
  if (type == ActDType::F32) {
    std::memcpy(bytes + index * 4, &value, 4);
    return;
  }
  const uint16_t h = floatToHalfBits(type, value);
  std::memcpy(bytes + index * 2, &h, 2);
}

/// The address of element `index` of `base`.
inline void *actAt(ActDType type, void *base, int64_t index) {
  return static_cast<unsigned char *>(base) + index * actDTypeBytes(type);
}
inline const void *actAt(ActDType type, const void *base, int64_t index) {
  return static_cast<const unsigned char *>(base) + index * actDTypeBytes(type);
}

/// Copies `count` elements bit for bit (ranges may overlap).
inline void copyAct(ActDType type, void *dst, const void *src, int64_t count) {
  std::memmove(dst, src, size_t(count * actDTypeBytes(type)));
}

/// The row [headDim] of (sequence b, token slot, kvHead) in K or V, whose
/// elements are `type`, or null where the slot has no storage (outside the
/// contiguous capacity, beyond the block table, or an out-of-range block
/// id); GPU kernels treat such slots the same way (writes skipped).
inline void *kvCacheRow(const KvCacheView &kv, ActDType type,
                        int64_t numKvHeads, int64_t headDim, int64_t b,
                        int64_t slot, int64_t kvHead, bool isV) {
  if (slot < 0)
    return nullptr;
  if (kv.layout == KvCacheLayout::Contiguous) {
    if (slot >= kv.capacity)
      return nullptr;
    int64_t row =
        ((b * 2 + (isV ? 1 : 0)) * numKvHeads + kvHead) * kv.capacity + slot;
    return actAt(type, kv.k, row * headDim);
  }
  int64_t logical = slot / kv.blockSize;
  if (logical >= kv.maxBlocksPerSeq)
    return nullptr;
  int64_t block = kv.blockTables[b * kv.maxBlocksPerSeq + logical];
  if (block < 0 || block >= kv.numBlocks)
    return nullptr;
  int64_t stride =
      kv.blockStride ? kv.blockStride : numKvHeads * kv.blockSize * headDim;
  int64_t offset =
      block * stride + (kvHead * kv.blockSize + slot % kv.blockSize) * headDim;
  return actAt(type, isV ? kv.v : kv.k, offset);
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_CPUACCESS_H

// Element and KV-cache row access shared by the CPU reference kernels, so
// that every reference reads and writes storage exactly one way.
#ifndef STRATA_KERNELS_CPU_CPUACCESS_H
#define STRATA_KERNELS_CPU_CPUACCESS_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/cpu/HalfTypes.h"

#include <cstdint>

namespace strata::kernels {

inline float loadAct(ActDType type, const uint16_t *p) {
  return type == ActDType::BF16 ? bf16BitsToFloat(*p) : f16BitsToFloat(*p);
}

inline uint16_t toAct(ActDType type, float f) {
  return type == ActDType::BF16 ? floatToBf16Bits(f) : floatToF16Bits(f);
}

/// The row [headDim] of (sequence b, token slot, kvHead) in K or V, or null
/// where the slot has no storage (outside the contiguous capacity, beyond
/// the block table, or an out-of-range block id); GPU kernels treat such
/// slots the same way (writes skipped).
inline uint16_t *kvCacheRow(const KvCacheView &kv, int64_t numKvHeads,
                            int64_t headDim, int64_t b, int64_t slot,
                            int64_t kvHead, bool isV) {
  if (slot < 0)
    return nullptr;
  if (kv.layout == KvCacheLayout::Contiguous) {
    if (slot >= kv.capacity)
      return nullptr;
    int64_t row =
        ((b * 2 + (isV ? 1 : 0)) * numKvHeads + kvHead) * kv.capacity + slot;
    return static_cast<uint16_t *>(kv.k) + row * headDim;
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
  return static_cast<uint16_t *>(isV ? kv.v : kv.k) + offset;
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_CPUACCESS_H

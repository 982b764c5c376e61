// Decode's copies of K and V stages (AttentionDecodeKernel.cuh, the mma.sync
// configuration, where every thread loads; the wgmma configuration's
// producer has its own loop, AttentionProducer.cuh). A stage's
// block-table entries are read one stage before its copies (the prologue
// reads those of every prefetched stage at once): a lookup right before
// its copies had put a dependent L2 round trip in front of every stage.
// The main loop issues them ahead of the copies in flight, which they
// would otherwise queue behind (AttentionDecodeKernel.cuh).
// Decode reads each key once per step, so its lines leave L2 first (rows
// blocks share their tiles).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONDECODECOPIES_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONDECODECOPIES_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionItem.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// Copies of the keys [it.ks, it.ke) of the item `it` into stages of SK
/// key rows of K then V (rows of D * 2 bytes, chunks XOR-swizzled by row),
/// by LT threads, TPR a key row: thread tid takes chunks tid % TPR + m * TPR
/// of key rows keyInPass + j * (LT / TPR) at shared-memory offsets
/// sOff[m] within a pass; kSrc / vSrc: the K and V cache plus the
/// thread's first chunk; policy: the copies' L2 eviction policy.
template <int D, int SK, int LT, int TPR> struct DecodeCopies {
  static constexpr int CH = D / 8;
  static constexpr int KEYS_PER_PASS = LT / TPR;
  static constexpr int KEYS_PER_THREAD = SK / KEYS_PER_PASS;
  static constexpr int CPT = CH / TPR;
  static constexpr uint32_t ROW_BYTES = CH * 16;
  static constexpr int STAGE_BYTES = 2 * SK * D * 2;
  /// Block ids of a thread's keys of one stage.
  using Lookup = int32_t[KEYS_PER_THREAD];

  const AttnParams &p;
  const AttnItem &it;
  uint32_t smemBase;
  int keyInPass;
  const uint32_t (&sOff)[CPT];
  const uint16_t *kSrc, *vSrc;
  uint64_t policy;

  /// Slot s of a paged sequence is row s % blockSize of its logical block
  /// s / blockSize; a power-of-two block size (the usual case) shifts.
  __device__ __forceinline__ void splitSlot(int32_t s, int32_t &logical,
                                            int32_t &inBlock) const {
    if (p.blockShift >= 0) {
      logical = s >> p.blockShift;
      inBlock = s & (p.blockSize - 1);
    } else {
      logical = s / p.blockSize;
      inBlock = s - logical * p.blockSize;
    }
  }

  /// The raw block id (paged) of each of this thread's keys of a tile; the
  /// offset is formed only when the copies are issued.
  __device__ __forceinline__ void lookupStage(int tile, Lookup &blk) const {
    const int32_t t0 = it.ks + tile * SK + keyInPass;
#pragma unroll
    for (int j = 0; j < KEYS_PER_THREAD; ++j) {
      int32_t s = t0 + j * KEYS_PER_PASS, logical, inBlock;
      blk[j] = -1;
      if (p.paged) {
        splitSlot(s, logical, inBlock);
        if (s < it.ke && logical < p.maxBlocksPerSeq)
          blk[j] =
              __ldg(p.blockTables + it.at.seq * p.maxBlocksPerSeq + logical);
      }
    }
  }

  /// Element offset of the cache row holding (slot s, the item's kv head),
  /// or -1 when the slot has no storage (it then reads as zeros).
  __device__ __forceinline__ int64_t rowOffset(int32_t s, int32_t block) const {
    if (s >= it.ke)
      return -1;
    if (p.paged) {
      if (block < 0 || block >= p.numBlocks)
        return -1;
      int32_t logical, inBlock;
      splitSlot(s, logical, inBlock);
      return block * p.blockStride + (it.headRow + inBlock) * D;
    }
    if (s >= p.capacity)
      return -1;
    return (it.contigRow + s) * D;
  }

  /// The copies of tile `tile` of the item into stage `stage`.
  __device__ __forceinline__ void loadStage(int tile, int stage,
                                            const Lookup &blk) const {
    const int32_t t0 = it.ks + tile * SK + keyInPass;
    const uint32_t kBase = smemBase + stage * STAGE_BYTES;
    const uint32_t vBase = kBase + SK * D * 2;
#pragma unroll
    for (int j = 0; j < KEYS_PER_THREAD; ++j) {
      const int64_t off = rowOffset(t0 + j * KEYS_PER_PASS, blk[j]);
      const bool valid = off >= 0;
      const uint16_t *kRow = valid ? kSrc + off : p.k;
      const uint16_t *vRow = valid ? vSrc + off : p.k;
      constexpr uint32_t PASS_BYTES = KEYS_PER_PASS * ROW_BYTES;
#pragma unroll
      for (int m = 0; m < CPT; ++m) {
        cpAsync16(kBase + j * PASS_BYTES + sOff[m], kRow + m * TPR * 8, valid,
                  policy);
        cpAsync16(vBase + j * PASS_BYTES + sOff[m], vRow + m * TPR * 8, valid,
                  policy);
      }
    }
  }
};

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONDECODECOPIES_CUH

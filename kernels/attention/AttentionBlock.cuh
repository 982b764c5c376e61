// The parts of a block that the decode and the rows kernels share
// (AttentionDecodeKernel.cuh, AttentionRowsKernel.cuh): where a loader
// thread's chunks go in a stage, the query rows of a warp with their Q
// fragments and visibility bounds, and where a split's partial result
// goes. Each takes the configuration's traits (AttentionTraits.cuh); the
// differences between the layouts live here, so that each kernel body
// reads straight through.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONBLOCK_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONBLOCK_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionItem.cuh"
#include "kernels/attention/AttentionTraits.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// The compute thread that thread tid is, numbered from 0: threads
/// [0, kProducers) load (the rows kernel's producer warpgroup; none in
/// decode), the rest compute. Producers get 0.
template <typename Tr> __device__ __forceinline__ int computeThread(int tid) {
  const bool producer = tid < Tr::kProducers;
  return producer ? 0 : tid - Tr::kProducers;
}

/// Place of 16-byte chunk ch of key row `key` of a K or V tile. mma.sync:
/// rows of D * 2 bytes, chunks XOR-swizzled by key & 7. wgmma: the tile is
/// cut into 64-element column halves, each [SK rows][128 bytes] with the
/// same XOR, which is the descriptor's 128-byte swizzle (8-row atoms of
/// 1024 bytes).
template <typename Tr>
__device__ __forceinline__ uint32_t tileOffset(int key, int ch) {
  if constexpr (Tr::kWgmma)
    return uint32_t((ch / 8) * (Tr::kStageKeys * 128) + key * 128 +
                    ((ch % 8) ^ (key & 7)) * 16);
  else
    return uint32_t(swz<Tr::kHeadDim / 8>(key, ch));
}

/// Loader: TPR threads per key row, each moving CH / TPR chunks of K and
/// of V: decode's copies (AttentionDecodeCopies.cuh) or the wgmma
/// producer's (AttentionProducer.cuh). A thread's key rows are
/// KEYS_PER_PASS apart, a multiple of the 8-row swizzle period, so each of
/// its chunks has the same shared-memory place in every row and stage up
/// to a constant: computed once (sOff), one add per copy (that arithmetic
/// had been a third of a decode block's instructions). kSrc / vSrc: the K
/// and V cache plus the thread's first chunk.
template <typename Tr> struct LoaderPlaces {
  static constexpr int TPR = Tr::kLoadersPerRow;
  static constexpr int LT = Tr::kWgmma ? Tr::kProducers : Tr::kComputeThreads;
  static constexpr int KEYS_PER_PASS = LT / TPR;
  static constexpr int KEYS_PER_THREAD = Tr::kStageKeys / KEYS_PER_PASS;
  static constexpr int CPT = Tr::kHeadDim / 8 / TPR; // chunks per key row
  int keyInPass;
  uint32_t sOff[CPT];
  const uint16_t *kSrc, *vSrc;
};

/// Thread tid's loader places (loading thread ltid = tid).
template <typename Tr>
__device__ __forceinline__ void setLoaderPlaces(const AttnParams &p, int tid,
                                                LoaderPlaces<Tr> &l) {
  using L = LoaderPlaces<Tr>;
  constexpr int D = Tr::kHeadDim;
  static_assert(L::KEYS_PER_PASS % 8 == 0, "rows of a thread share a swizzle");
  static_assert(Tr::kStageKeys % L::KEYS_PER_PASS == 0,
                "a stage is whole passes");
  l.keyInPass = tid / L::TPR;
#pragma unroll
  for (int m = 0; m < L::CPT; ++m)
    l.sOff[m] = tileOffset<Tr>(l.keyInPass, tid % L::TPR + m * L::TPR);
  l.kSrc = p.k + (tid % L::TPR) * 8;
  l.vSrc = (p.paged ? p.v : p.k + int64_t(p.numKvHeads) * p.capacity * D) +
           (tid % L::TPR) * 8;
}

/// A lane's two query rows (lane / 4 and lane / 4 + 8 of its warp's 16)
/// of the item `cur`: token, cache slot, position and whether the row is
/// in the item; the bounds over the warp's rows that decide whether a key
/// slice needs the per-element mask; and, except with Q in shared memory
/// (which the producer copies there), the A fragments of their Q in
/// registers (rows past the item zero): mma.sync loads them straight,
/// wgmma through rowQFragments.
template <typename Tr, int QF>
__device__ __forceinline__ void
setWarpRows(const AttnParams &p, const AttnItem &cur, int G, int warp,
            int lane, int32_t (&rTok)[2], int32_t (&rSlot)[2],
            int32_t (&rPos)[2], bool (&rValid)[2], int32_t &wMaxPos,
            int32_t &wMinSlot, uint32_t (&qf)[QF][4]) {
  constexpr int D = Tr::kHeadDim, ROWS = Tr::kRows;
  constexpr bool WG = Tr::kWgmma, QS = Tr::kQInSmem;
  const int32_t wRow = cur.row0 + (Tr::kWarpsM > 1 ? 16 * warp : 0);
  const uint32_t *qSrc[2]; // wgmma: the rows' Q (rowQFragments)
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    int32_t row = wRow + (lane >> 2) + 8 * h;
    rValid[h] = row < cur.rowsTotal && row < cur.row0 + ROWS;
    int32_t tok = rValid[h] ? row / G : 0;
    int g = rValid[h] ? row - tok * G : 0;
    rTok[h] = tok;
    rSlot[h] = cur.prefix + tok;
    rPos[h] = cur.pos ? __ldg(cur.pos + tok) : rSlot[h];
    if constexpr (!QS) {
      const uint32_t *src = reinterpret_cast<const uint32_t *>(
          p.q + ((int64_t(cur.qBegin) + tok) * p.numQHeads +
                 cur.at.kvHead * G + g) *
                    D);
      if constexpr (WG) {
        qSrc[h] = src;
      } else {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          int c = kk * 8 + (lane & 3); // uint32 index: element 2c
          qf[kk][0 + h] = rValid[h] ? __ldg(src + c) : 0u;
          qf[kk][2 + h] = rValid[h] ? __ldg(src + c + 4) : 0u;
        }
      }
    }
  }
  if constexpr (WG && !QS)
    rowQFragments<D>(qSrc, rValid, lane, qf);
  wMaxPos =
      max(rValid[0] ? rPos[0] : INT32_MIN, rValid[1] ? rPos[1] : INT32_MIN);
  wMinSlot =
      min(rValid[0] ? rSlot[0] : INT32_MAX, rValid[1] ? rSlot[1] : INT32_MAX);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    wMaxPos = max(wMaxPos, __shfl_xor_sync(0xffffffffu, wMaxPos, o));
    wMinSlot = min(wMinSlot, __shfl_xor_sync(0xffffffffu, wMinSlot, o));
  }
}

/// Where a split's partial output (O / l as Partial: T for rows, fp32 for
/// decode) and log2-sum-exp go in the workspace, for items that merge
/// through it (viaGlobal); null otherwise.
template <typename Tr, typename Partial> struct SplitOut {
  Partial *partO;
  float *partLse;
};

template <typename Tr, typename Partial>
__device__ __forceinline__ SplitOut<Tr, Partial>
splitOut(const AttnParams &p, int64_t item, int split, bool viaGlobal) {
  constexpr int ROWS = Tr::kRows, D = Tr::kHeadDim;
  SplitOut<Tr, Partial> s;
  s.partO = viaGlobal ? static_cast<Partial *>(p.partO) +
                            (item * p.numSplits + split) * ROWS * D
                      : nullptr;
  s.partLse =
      viaGlobal ? p.partLse + (item * p.numSplits + split) * ROWS : nullptr;
  return s;
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONBLOCK_CUH

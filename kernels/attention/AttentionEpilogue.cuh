// Ends of the attention kernels' blocks (AttentionDecodeKernel.cuh,
// AttentionRowsKernel.cuh): O written
// out as T (one split) or as the split's partial (T for rows, fp32 for
// decode; AttentionMerge.cuh) and log2-sum-exp (Attention.h, Split-KV).
//
// Rows (wgmma configuration: 8 compute warps of 16 rows, a row owned by 4
// lanes): O normalised in registers and stored from them, 16 bytes a
// lane after the 4 lanes of each row exchange their column pairs; each
// warp stores as soon as its own last product is done. Decode's loop
// below (per chunk: the row's m and l from shared memory, the weights,
// the store, each waiting for the one before) makes a long chain of a
// rows block's end, and staging O in shared memory first adds a barrier
// of both warpgroups before any store. Split items merged in their
// cluster still stage O in shared memory (clusterMergeRows reads it
// there).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONEPILOGUE_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONEPILOGUE_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionMerge.cuh"
#include "kernels/attention/Wgmma.cuh"
#include "kernels/common/Barriers.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// o, mRow, lRow: the thread's accumulators (rows (lane >> 2) + 8 h of its
/// warp; mRow scaled to base 2, lRow this lane's share of the row sum).
/// smem (cluster only): ROWS * (kRowsStageStride + 1) words, free once
/// every compute warp is done with the stages (the caller's barrier).
/// validRows: rows of the block that belong to the item. partO (T) /
/// partLse: the split's partial [ROWS][D] and [ROWS], or null for one
/// split (O goes to p.out as T).
/// cluster: the item's splits are the blocks of this block's cluster
/// (p.clusterMerge); the partial stays in shared memory and the cluster
/// merges it (clusterMergeRows).
template <typename T, int D, int ROWS, int NTC>
__device__ __forceinline__ void
rowsEpilogue(const AttnParams &p, const float (&o)[D / 8][4],
             const float (&mRow)[2], const float (&lRow)[2],
             unsigned char *smem, int warp, int lane, int ctid, int32_t row0,
             int validRows, int32_t qBegin, int kvHead, uint16_t *partO,
             float *partLse, bool cluster) {
  using Ops = MmaOps<T>;
  const bool direct = partO == nullptr && !cluster;
  constexpr int OSTT = kRowsStageStride<D>;
  uint32_t *sT = reinterpret_cast<uint32_t *>(smem);
  float *sLse = reinterpret_cast<float *>(sT + ROWS * OSTT);
  float inv[2];
  int rows[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = lRow[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    rows[h] = warp * 16 + (lane >> 2) + 8 * h;
    inv[h] = l > 0.f ? 1.f / l : 0.f;
    if (!direct && (lane & 3) == 0 && rows[h] < validRows)
      (cluster ? sLse : partLse)[rows[h]] =
          l > 0.f ? mRow[h] + log2f(l) : -INFINITY;
  }
  if (cluster) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (rows[h] >= validRows) // rows past the item are never read
        continue;
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
        sT[rows[h] * OSTT + n * 4 + (lane & 3)] =
            Ops::pack(o[n][2 * h] * inv[h], o[n][2 * h + 1] * inv[h]);
    }
    clusterMergeRows<T, D, ROWS, NTC>(p, smem, ctid, row0, validRows, qBegin,
                                      kvHead);
    return;
  }
  // Straight from registers: the 4 lanes of a row hold 2 columns of each
  // 8-column tile; for each group of 4 tiles they transpose their packed
  // pairs (two exchanges), after which lane q holds all 8 columns of tile
  // 4 g + q and stores them as 16 bytes (a quad's stores are 64
  // contiguous bytes of its row).
  const int q = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = rows[h];
    uint16_t *dst;
    if (direct) {
      const int32_t row = row0 + r, tok = row / p.group,
                    g = row - tok * p.group;
      dst = p.out +
            ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * p.group + g) * D;
    } else {
      dst = partO + r * D;
    }
#pragma unroll
    for (int grp = 0; grp < D / 32; ++grp) {
      uint32_t a[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        a[j] = Ops::pack(o[4 * grp + j][2 * h] * inv[h],
                         o[4 * grp + j][2 * h + 1] * inv[h]);
      // a[j] of lane q is element (q, j) of the quad's 4 x 4 matrix of
      // pairs; lane q needs column q.
      quadTranspose(a, q);
      if (r < validRows) // rows past the item are never written out
        *reinterpret_cast<uint4 *>(dst + (4 * grp + q) * 8) =
            make_uint4(a[0], a[1], a[2], a[3]);
    }
  }
}

/// Decode (WN warps holding the same 16 rows over different keys of each
/// stage): the warps' states go through shared memory ([WN][16 rows][D + 8]
/// fp32 O, then m and l per row), one pass merges them per row and writes
/// out or the split's partial; the last split of the item to finish then
/// merges the item's splits (an atomic counter, reset by that block).
/// lastFlag: a shared word.
template <typename T, int D, int WN, int NT>
__device__ __forceinline__ void
decodeEpilogue(const AttnParams &p, const float (&o)[D / 8][4],
               const float (&mRow)[2], const float (&lRow)[2],
               const bool (&rValid)[2], unsigned char *smem, int warp, int lane,
               int tid, int32_t row0, int validRows, int32_t qBegin, int kvHead,
               int64_t item, float *partO, float *partLse, int32_t *lastFlag) {
  using Ops = MmaOps<T>;
  constexpr int ROWS = 16, OST = D + 8;
  const bool direct = partO == nullptr;
  const int G = p.group;
  float *sO = reinterpret_cast<float *>(smem);
  float *sM = sO + WN * 16 * OST;
  float *sL = sM + WN * 16;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = lRow[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    int r = (lane >> 2) + 8 * h;
    if ((lane & 3) == 0) {
      sM[warp * 16 + r] = mRow[h];
      sL[warp * 16 + r] = l;
    }
    if (!rValid[h]) // rows past the item are never read back
      continue;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *reinterpret_cast<float2 *>(sO + (warp * 16 + r) * OST + n * 8 +
                                  (lane & 3) * 2) =
          make_float2(o[n][2 * h], o[n][2 * h + 1]);
  }
  __syncthreads();

  // Each thread finishes 4 consecutive elements of one row at a time, over
  // the tile's real rows only (a tile of G = 4 heads fills 4 of 16).
  for (int c = tid; c < validRows * D / 4; c += NT) {
    int r = c / (D / 4), d = (c % (D / 4)) * 4;
    float M = -INFINITY, L = 0.f;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int w = 0; w < WN; ++w)
      M = fmaxf(M, sM[w * 16 + r]);
    float base = M == -INFINITY ? 0.f : M;
#pragma unroll
    for (int w = 0; w < WN; ++w) {
      int sr = w * 16 + r;
      float f = exp2f(sM[sr] - base);
      L += sL[sr] * f;
      float4 x = *reinterpret_cast<const float4 *>(sO + sr * OST + d);
      acc.x += x.x * f;
      acc.y += x.y * f;
      acc.z += x.z * f;
      acc.w += x.w * f;
    }
    float inv = L > 0.f ? 1.f / L : 0.f;
    acc.x *= inv;
    acc.y *= inv;
    acc.z *= inv;
    acc.w *= inv;
    int32_t row = row0 + r;
    if (direct) {
      int32_t tok = row / G, g = row - tok * G;
      uint16_t *dst =
          p.out + ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * G + g) * D +
          d;
      uint2 v;
      v.x = Ops::one(acc.x) | (uint32_t(Ops::one(acc.y)) << 16);
      v.y = Ops::one(acc.z) | (uint32_t(Ops::one(acc.w)) << 16);
      store8(dst, v);
    } else {
      *reinterpret_cast<float4 *>(partO + r * D + d) = acc;
      if (d == 0)
        partLse[r] = L > 0.f ? M + log2f(L) : -INFINITY;
    }
  }
  if (direct)
    return;

  // The counter's add releases the block's partial (the barrier orders
  // every thread's stores before thread 0's add) and acquires the other
  // splits' for the last block: one round trip where a fence and then the
  // add take two.
  __syncthreads();
  if (tid == 0) {
    const int32_t done = atomicAddAcqRel(p.counters + item, 1);
    *lastFlag = done == p.numSplits - 1;
    if (*lastFlag)
      p.counters[item] = 0; // ready for the next launch (graph replay)
  }
  __syncthreads();
  if (!*lastFlag)
    return;
  const float *allO =
      static_cast<const float *>(p.partO) + item * p.numSplits * ROWS * D;
  const float *allLse = p.partLse + item * p.numSplits * ROWS;
  for (int c = tid; c < validRows * D / 4; c += NT) {
    const int r = c / (D / 4), d = (c % (D / 4)) * 4;
    mergeChunk<T, D, ROWS, 17>(p, allO, allLse, r, d, row0 + r, qBegin, kvHead);
  }
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONEPILOGUE_CUH

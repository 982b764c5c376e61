// Split-KV merge of the attention kernel's partials (see Attention.h):
// per output chunk, the partial outputs of an item's splits weighted by
// their log2-sum-exp. Decode merges in its last block (mergeChunk); row
// items inside their cluster (clusterMergeRows) when the item's splits
// are one cluster of blocks, else by their own blocks through the
// workspace when the whole grid is resident (peerMergeRows), else in a
// kernel of their own (attentionMergeKernel).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONMERGE_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONMERGE_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/common/Barriers.cuh"
#include "kernels/common/Pdl.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// Four consecutive elements of a split's partial output, fp32 (decode)
/// or T (rows), loaded through L2 (other blocks wrote them) and kept in
/// their stored form until they are weighed.
template <typename T, typename P> struct PartialChunk;
template <typename T> struct PartialChunk<T, float> {
  float4 raw;
  __device__ void load(const float *src, bool in) {
    raw = in ? __ldcg(reinterpret_cast<const float4 *>(src))
             : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  __device__ float4 get() const { return raw; }
};
template <typename T> struct PartialChunk<T, uint16_t> {
  uint2 raw;
  __device__ void load(const uint16_t *src, bool in) {
    raw = in ? __ldcg(reinterpret_cast<const uint2 *>(src)) : make_uint2(0, 0);
  }
  __device__ float4 get() const {
    const float2 lo = MmaOps<T>::unpack(raw.x), hi = MmaOps<T>::unpack(raw.y);
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
};

/// Split-KV merge of one 4-element chunk (row r of the work item, columns
/// d..d+3) over the item's partials allO [numSplits][ROWS][D] and allLse
/// [numSplits][ROWS]; writes query row `row` of the output. The partials
/// come from L2: the splits are walked MU at a time with all MU loads issued
/// before any use, so that a thread waits for one L2 round trip per MU
/// splits rather than per split (decode's 33 splits walked one by one
/// would be 33 round trips in a row), and in one pass: the weights are taken against the
/// largest log-sum-exp seen so far, and the sums are rescaled when a later
/// group raises it (a first pass for the maximum had doubled the round
/// trips). Splits in order, as the plain loop. P: the partials' element
/// type, fp32 (decode) or T (rows; see attentionMergeKernel). MU: decode
/// takes 17, its 33 splits in two round trips (33 at once would be one
/// trip but keeps more registers live); the rows merge kernel 8 where an
/// item has at most 8 splits (17 would weigh 9 idle ones beside them),
/// else 17. The weights as in mergeRowChunks: a weight is at most
/// 1 and one under 2^-126 adds nothing, so the exponential flushes those
/// to 0 without exp2f's range handling; an empty split (log-sum-exp -inf)
/// weighs 0 and its stored partial, zeros, adds nothing.
template <typename T, int D, int ROWS, int MU, typename P>
__device__ __forceinline__ void
mergeChunk(const AttnParams p, const P *allO, const float *allLse, int r, int d,
           int32_t row, int32_t qBegin, int kvHead) {
  using Ops = MmaOps<T>;
  const int G = p.group;
  float M = -INFINITY, W = 0.f;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int sp0 = 0; sp0 < p.numSplits; sp0 += MU) {
    float f[MU];
    PartialChunk<T, P> x[MU];
#pragma unroll
    for (int u = 0; u < MU; ++u) {
      const bool in = sp0 + u < p.numSplits;
      f[u] = in ? __ldcg(allLse + (sp0 + u) * ROWS + r) : -INFINITY;
      x[u].load(allO + ((sp0 + u) * ROWS + r) * D + d, in);
    }
    float mGroup = M;
#pragma unroll
    for (int u = 0; u < MU; ++u)
      mGroup = fmaxf(mGroup, f[u]);
    if (mGroup > M) { // M = -inf: the sums are still zero, scaled by 0
      const float scale = fastExp2(M - mGroup);
      W *= scale;
      acc.x *= scale;
      acc.y *= scale;
      acc.z *= scale;
      acc.w *= scale;
      M = mGroup;
    }
    const float base = M == -INFINITY ? 0.f : M;
#pragma unroll
    for (int u = 0; u < MU; ++u) {
      const float w = fastExp2(f[u] - base);
      const float4 xv = x[u].get();
      W += w;
      acc.x += xv.x * w;
      acc.y += xv.y * w;
      acc.z += xv.z * w;
      acc.w += xv.w * w;
    }
  }
  const float inv = W > 0.f ? 1.f / W : 0.f;
  const int32_t tok = row / G, g = row - tok * G;
  uint16_t *dst =
      p.out + ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * G + g) * D + d;
  uint2 v;
  v.x = Ops::one(acc.x * inv) | (uint32_t(Ops::one(acc.y * inv)) << 16);
  v.y = Ops::one(acc.z * inv) | (uint32_t(Ops::one(acc.w * inv)) << 16);
  store8(dst, v);
}

/// Merge of the split-KV partials of the rows configuration (ROWS rows per
/// work item), one 4-element chunk of one row per thread. The last block
/// of an item merging alone read ROWS * D * 4 bytes per split on one SM;
/// for a 128-row tree verify over 8 splits that was most of the launch.
///
/// Rows partials are stored as T, each split's output normalised before it
/// is rounded, which adds one rounding to T to the final one; the partials are
/// 64 KB per block in fp32, and half of that is written and read back here.
/// Decode keeps fp32: its partials are 4 rows per split, too few for the
/// bytes saved to pay for the conversions.
/// Grid: x = rowTile * blocksPerTile + block, y = kv head, z = sequence.
/// MU: splits per round trip (mergeChunk), 8 where the item has at most 8.
template <typename T, int D, int ROWS, int MU>
__global__ void __launch_bounds__(256)
    attentionMergeKernel(const AttnParams p, int blocksPerTile) {
  const int rowTile = blockIdx.x / blocksPerTile;
  const int c = (blockIdx.x % blocksPerTile) * blockDim.x + threadIdx.x;
  const int kvHead = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int G = p.group;
  // The lengths are step inputs (Attention.h): read while the attention
  // kernel runs, not after the wait.
  const int32_t qBegin = __ldg(p.cuQLens + b);
  const int32_t rowsTotal = (__ldg(p.cuQLens + b + 1) - qBegin) * G;
  pdlWait();
  pdlLaunchDependents();
  const int32_t row0 = rowTile * ROWS;
  const int r = c / (D / 4), d = (c % (D / 4)) * 4;
  if (r >= ROWS || row0 + r >= rowsTotal)
    return;
  const int64_t item =
      (b * p.numKvHeads + kvHead) * int64_t(p.rowTiles) + rowTile;
  mergeChunk<T, D, ROWS, MU>(
      p, static_cast<const uint16_t *>(p.partO) + item * p.numSplits * ROWS * D,
      p.partLse + item * p.numSplits * ROWS, r, d, row0 + r, qBegin, kvHead);
}

/// acc += w * the 8 elements of T in x (16 bytes of a partial row).
template <typename T>
__device__ __forceinline__ void addWeighted8(float (&acc)[8], uint4 x,
                                             float w) {
  const uint32_t words[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float2 v = MmaOps<T>::unpack(words[e]);
    acc[2 * e] += v.x * w;
    acc[2 * e + 1] += v.y * w;
  }
}

/// The 8 sums divided by their total weight W (0 for none), as T: 16
/// bytes of an output row.
template <typename T>
__device__ __forceinline__ uint4 packMerged8(const float (&acc)[8], float W) {
  using Ops = MmaOps<T>;
  const float inv = W > 0.f ? 1.f / W : 0.f;
  uint4 out;
  out.x = Ops::pack(acc[0] * inv, acc[1] * inv);
  out.y = Ops::pack(acc[2] * inv, acc[3] * inv);
  out.z = Ops::pack(acc[4] * inv, acc[5] * inv);
  out.w = Ops::pack(acc[6] * inv, acc[7] * inv);
  return out;
}

/// K chunks of 16 bytes (chunk c0 + i * NTC, i < K, each in the range)
/// of rows of a rows item merged over its splits' partials (T) in the
/// workspace, the splits MU at a time with all the loads of a group in
/// flight: one L2 round trip per MU splits, as in mergeChunk. A weight is
/// at most 1 (the largest split's), and one under 2^-126 is far below what
/// T holds beside it: the exponential flushes those to 0 and does without
/// exp2f's range handling.
template <typename T, int D, int ROWS, int NTC, int K>
__device__ __forceinline__ void
mergeRowChunks(const AttnParams &p, const uint16_t *allO, const float *allLse,
               int c0, int rBegin, int32_t row0, int32_t qBegin, int kvHead) {
  constexpr int CPR = D / 8, MU = 8;
  const int S = p.numSplits, G = p.group;
  int r[K], ch[K];
  float M[K], W[K], acc[K][8];
#pragma unroll
  for (int i = 0; i < K; ++i) {
    const int c = c0 + i * NTC;
    r[i] = rBegin + c / CPR;
    ch[i] = c % CPR;
    M[i] = -INFINITY;
    W[i] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      acc[i][e] = 0.f;
  }
  for (int s0 = 0; s0 < S; s0 += MU) {
    float f[K][MU];
    uint4 x[K][MU];
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
      for (int u = 0; u < MU; ++u) {
        const bool ld = s0 + u < S;
        const int64_t at = int64_t(s0 + u) * ROWS + r[i];
        f[i][u] = ld ? __ldcg(allLse + at) : -INFINITY;
        x[i][u] = ld ? __ldcg(reinterpret_cast<const uint4 *>(allO + at * D +
                                                              ch[i] * 8))
                     : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
    for (int i = 0; i < K; ++i) {
      float mGroup = M[i];
#pragma unroll
      for (int u = 0; u < MU; ++u)
        mGroup = fmaxf(mGroup, f[i][u]);
      if (mGroup > M[i]) { // M = -inf: the sums are still zero
        const float scale = fastExp2(M[i] - mGroup);
        W[i] *= scale;
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[i][e] *= scale;
        M[i] = mGroup;
      }
      const float base = M[i] == -INFINITY ? 0.f : M[i];
#pragma unroll
      for (int u = 0; u < MU; ++u) {
        // An empty split (log-sum-exp -inf) weighs 0 and adds nothing.
        const float w = fastExp2(f[i][u] - base);
        W[i] += w;
        addWeighted8<T>(acc[i], x[i][u], w);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < K; ++i) {
    const int32_t row = row0 + r[i], tok = row / G, g = row - tok * G;
    store16(p.out +
                ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * G + g) * D +
                ch[i] * 8,
            packMerged8<T>(acc[i], W[i]));
  }
}

/// Rows [rBegin, rEnd) of a rows item merged over its splits' partials
/// (T) in the workspace (peerMergeRows), 16 bytes of a row a thread at a
/// time: two chunks at once, with all their loads in flight, or one where
/// the range has a single chunk left for the thread. One per 4-element
/// chunk, as in mergeChunk, would be several round trips in a row for the
/// 128 / numSplits rows of a block. (With two chunks always, the second
/// idle where the range ended, the threads of a 64-token tree, one chunk
/// each, weigh every split twice, and ptxas places the partials' loads
/// after the maximum, a second round trip.)
template <typename T, int D, int ROWS, int NTC>
__device__ __forceinline__ void
mergeRowRange(const AttnParams &p, const uint16_t *allO, const float *allLse,
              int ctid, int rBegin, int rEnd, int32_t row0, int32_t qBegin,
              int kvHead) {
  const int n = max(0, rEnd - rBegin) * (D / 8);
  for (int c0 = ctid; c0 < n; c0 += 2 * NTC) {
    if (c0 + NTC < n)
      mergeRowChunks<T, D, ROWS, NTC, 2>(p, allO, allLse, c0, rBegin, row0,
                                         qBegin, kvHead);
    else
      mergeRowChunks<T, D, ROWS, NTC, 1>(p, allO, allLse, c0, rBegin, row0,
                                         qBegin, kvHead);
  }
}

/// Split-KV merge by the item's own blocks, through the workspace: each
/// block has stored its partial (T) and log2-sum-exps (rowsEpilogue) and
/// arrives on the item's counter; the blocks wait for each other, then
/// each merges rows [split * per, (split + 1) * per) of the item over all
/// splits. Against the merge kernel: no second launch and no wait for the
/// whole grid, an item is merged as soon as its own splits are done. The
/// launcher takes this path only where the device holds the whole grid at
/// once; should a sibling still not start (the GPU shared with other
/// work), a block gives up after p.peerWaitNs and the last split to
/// arrive merges every row: a slower merge instead of a wait without end.
/// Resident siblings arrive within a split's running time.
///
/// The counter (int32, zero between launches): arrivals in bits 0-15,
/// departures in bits 16-29, bit 30 set by a block that gave up. A block
/// that gives up finds, in the value its flag replaced, whether every
/// split had arrived after all (then it merges its rows: the last arrival
/// did not see the flag); otherwise the last arrival sees the flag and
/// merges them all. Rows merged twice get the same values. Each block
/// departs once it has last read the counter; the last to depart resets
/// it for the next launch (graph replay), after its merge. `flag`: a
/// shared word.
template <typename T, int D, int ROWS, int NTC>
__device__ __forceinline__ void
peerMergeRows(const AttnParams &p, int ctid, int split, int64_t item,
              int32_t row0, int validRows, int32_t qBegin, int kvHead,
              int32_t *flag) {
  constexpr int32_t kArrivals = 0xffff, kDepart = 1 << 16, kGaveUp = 1 << 30;
  const int S = p.numSplits;
  int32_t *counter = p.counters + item;
  namedBarSync(3, NTC); // every compute thread's stores precede the add
  if (ctid == 0) {
    // 0: merge nothing, 1: this block's rows, 2: every row
    int32_t merge = 1;
    const int32_t old = atomicAddAcqRel(counter, 1);
    if ((old & kArrivals) == S - 1) {
      merge = old & kGaveUp ? 2 : 1;
    } else {
      const uint64_t start = globalTimerNs();
      while ((loadAcquire(counter) & kArrivals) < S) {
        if (globalTimerNs() - start > uint64_t(p.peerWaitNs)) {
          merge = (atomicOrAcqRel(counter, kGaveUp) & kArrivals) == S ? 1 : 0;
          break;
        }
      }
    }
    *flag = merge;
  }
  namedBarSync(3, NTC); // the other splits' partials are visible
  const int merge = *flag;
  // The departure goes out beside the merge's loads, and its answer is read
  // after them. ptxas gathers an add to one address across the warp and
  // shuffles the answer to the lanes right away, which waits for the round
  // trip there (before the block barrier, the merge waited for it: 0.1-0.2
  // us of a 64-token tree's end, docs/benchmarks.md); an address offset by
  // the lane index, 0 for ctid 0, keeps the add ungathered.
  int32_t departed = 0;
  if (ctid == 0) {
    uint32_t lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    departed = atomicAdd(counter + lane, kDepart);
  }
  const int per = (ROWS + S - 1) / S;
  const int rBegin = merge == 2 ? 0 : split * per;
  const int rEnd =
      merge == 0 ? rBegin : min(merge == 2 ? ROWS : rBegin + per, validRows);
  mergeRowRange<T, D, ROWS, NTC>(
      p, static_cast<const uint16_t *>(p.partO) + item * S * ROWS * D,
      p.partLse + item * S * ROWS, ctid, rBegin, rEnd, row0, qBegin, kvHead);
  if (ctid == 0 && (departed >> 16 & 0x3fff) == S - 1)
    atomicExch(counter, 0);
}

/// Row stride, in 4-byte words (T pairs), of the O tile a rows block
/// stages in shared memory at its end (AttentionEpilogue.cuh): a warp's
/// writes fall on distinct banks, and rows stay 16-byte aligned. The
/// tile's ROWS log2-sum-exps follow it.
template <int D> constexpr int kRowsStageStride = D / 2 + 4;

/// Split-KV merge inside a cluster: the item's numSplits (<= 8) splits are
/// the blocks of one cluster, block rank = split, and each has staged its
/// normalised partial (T) and log2-sum-exps in its own shared memory
/// (rowsEpilogue). After the cluster barrier, block `rank` merges rows
/// [rank * per, (rank + 1) * per) of the item, reading every split's
/// rows from the blocks' shared memory (16 bytes of one row a thread per
/// split), and writes them out; a second barrier keeps every block's
/// shared memory alive until the others have read it. Against the merge
/// kernel, this saves writing the partials to global memory, the kernel
/// boundary and the second kernel's reads of them from L2.
template <typename T, int D, int ROWS, int NTC>
__device__ __forceinline__ void
clusterMergeRows(const AttnParams &p, unsigned char *smem, int ctid,
                 int32_t row0, int validRows, int32_t qBegin, int kvHead) {
  constexpr int MAXS = 8, OSTT = kRowsStageStride<D>, CPR = D / 8;
  const int S = p.numSplits, G = p.group;
  const uint32_t local = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t lseOff = ROWS * OSTT * 4;
  uint32_t peer[MAXS];
#pragma unroll
  for (int u = 0; u < MAXS; ++u)
    peer[u] = u < S ? clusterMapShared(local, uint32_t(u)) : 0u;
  clusterArrive();
  clusterWait();
  const int per = (ROWS + S - 1) / S;
  const int rBegin = int(clusterRank()) * per;
  const int rEnd = min(min(rBegin + per, ROWS), validRows);
  // Row r, 16 bytes from column 8 ch, merged over the first S of the K
  // splits' values and written out. Splits past S are skipped, not weighed
  // at 0: the merge's arithmetic is a visible part of a split item's end
  // (mergeRowRange).
  auto emit = [&](const auto &f, const auto &x, int r, int ch) {
    constexpr int K = int(sizeof(f) / sizeof(f[0]));
    float M = -INFINITY;
#pragma unroll
    for (int u = 0; u < K; ++u)
      if (u < S)
        M = fmaxf(M, f[u]);
    const float base = M == -INFINITY ? 0.f : M;
    float W = 0.f, acc[8] = {};
#pragma unroll
    for (int u = 0; u < K; ++u) {
      if (u >= S)
        break;
      // An empty split (log-sum-exp -inf) weighs 0.
      const float w = fastExp2(f[u] - base);
      W += w;
      addWeighted8<T>(acc, x[u], w);
    }
    const int32_t row = row0 + r, tok = row / G, g = row - tok * G;
    store16(p.out +
                ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * G + g) * D +
                ch * 8,
            packMerged8<T>(acc, W));
  };
  const int n = max(0, rEnd - rBegin) * CPR;
  if (S == 2) {
    // Two splits, half the rows a block, NP chunks a thread: every chunk's
    // remote loads go out before the first is used. A chunk at a time (as
    // below) takes a remote round trip per chunk: 4 in a row at headDim
    // 128.
    constexpr int NP = (ROWS / 2) * CPR / NTC > 0 ? (ROWS / 2) * CPR / NTC : 1;
    for (int c0 = ctid; c0 < n; c0 += NP * NTC) {
      float f[NP][2];
      uint4 x[NP][2];
      int r[NP], ch[NP];
#pragma unroll
      for (int i = 0; i < NP; ++i) {
        const int c = c0 + i * NTC;
        const bool in = c < n;
        r[i] = rBegin + (in ? c / CPR : 0);
        ch[i] = c % CPR;
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          f[i][u] = in ? clusterLoadF32(peer[u] + lseOff + r[i] * 4) : 0.f;
          x[i][u] = in ? clusterLoad16(peer[u] + (r[i] * OSTT + ch[i] * 4) * 4)
                       : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int i = 0; i < NP; ++i)
        if (c0 + i * NTC < n)
          emit(f[i], x[i], r[i], ch[i]);
    }
  } else {
    for (int c = ctid; c < n; c += NTC) {
      const int r = rBegin + c / CPR, ch = c % CPR;
      float f[MAXS];
      uint4 x[MAXS];
#pragma unroll
      for (int u = 0; u < MAXS; ++u) {
        f[u] = u < S ? clusterLoadF32(peer[u] + lseOff + r * 4) : -INFINITY;
        x[u] = u < S ? clusterLoad16(peer[u] + (r * OSTT + ch * 4) * 4)
                     : make_uint4(0, 0, 0, 0);
      }
      emit(f, x, r, ch);
    }
  }
  // This block's reads of the others' shared memory are done (their values
  // were used above); none leaves before every block's are.
  clusterArrive();
  clusterWait();
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONMERGE_CUH

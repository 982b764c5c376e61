// Device-side pieces shared by the attention kernel and its split-KV
// merge: the launch parameters, the mma.sync operations per dtype, and the
// copy, load and store primitives.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONDEVICE_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONDEVICE_CUH

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/MmaSync.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// Threads of the producer warpgroup of the wgmma configuration (one
/// warpgroup: setmaxnreg works per warpgroup).
constexpr int kProducerThreads = 128;

/// Brings `bytes` (a multiple of 16, 16-byte aligned) from `p` into L2.
__device__ __forceinline__ void prefetchL2(const void *p, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes)
               : "memory");
}

/// The kernel takes it as a __grid_constant__ parameter: the tensor maps
/// are read by the copy engine from the parameter's own address.
struct AttnParams {
  // Rows kernels (wgmma), whole tiles: tensor maps of K and V
  // (kernels/common/TensorMap.h), 4 dimensions, innermost first: paged
  // {headDim, blockSize, kv heads, blocks}, one per pool; contiguous
  // {headDim, capacity, kv heads, 2 * batch} (K then V of each sequence),
  // vMap == kMap. A box is 64 elements by bulkRows slots of one head.
  CUtensorMap kMap, vMap;
  int32_t bulkRows; // slots per box; 0: every tile copied by cp.async
  const uint16_t *q;
  uint16_t *out;
  const int32_t *cuQLens;
  const int32_t *kvLens;
  const int32_t *parentIds;
  const int32_t *positions;
  const uint16_t *k;
  const uint16_t *v;
  const int32_t *blockTables;
  int64_t numBlocks;
  int64_t blockStride; // elements between paged blocks (resolved)
  int64_t capacity;    // contiguous layout only
  int32_t blockSize;
  int32_t blockShift; // log2(blockSize) when a power of two, else -1
  int32_t maxBlocksPerSeq;
  int32_t paged;
  int32_t numQHeads;
  int32_t numKvHeads;
  int32_t group;
  float scaleLog2; // scale * log2(e): the softmax runs on exp2
  int32_t window;  // 0: none
  int32_t numSplits;
  int32_t rowTiles;
  // Rows items: the splits of an item are one cluster of blocks (block x
  // = rowTile * numSplits + split) that merges them (clusterMergeRows);
  // else x = rowTile + rowTiles * split, and the item's blocks merge them
  // through the workspace once all have stored theirs (peerMerge;
  // peerMergeRows), or attentionMergeKernel does.
  int32_t clusterMerge;
  void *partO;       // [items, numSplits, rows, D]: T (rows), fp32 (decode)
  float *partLse;    // [items, numSplits, rows]
  int32_t *counters; // [items]
  // Rows only. Kept last: placed before partO they move the fields decode
  // reads, and decode's code changes with them.
  int32_t peerMerge;
  int32_t peerWaitNs; // how long a peer waits for its siblings
  // 128-key rows, one split: > 0, the number of items (row tiles x kv
  // heads x sequences) a grid of the blocks the GPU holds takes one after
  // another from the workspace counter (AttentionRowsKernel.cuh); 0, one
  // block per item.
  int32_t persistItems;
};

template <typename T> struct MmaOps;
template <> struct MmaOps<__nv_bfloat16> {
  __device__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  __device__ static uint16_t one(float x) {
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    return *reinterpret_cast<uint16_t *>(&h);
  }
  __device__ static float2 unpack(uint32_t u) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162 *>(&u));
  }
};
template <> struct MmaOps<__half> {
  __device__ static uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
  __device__ static uint16_t one(float x) {
    __half h = __float2half_rn(x);
    return *reinterpret_cast<uint16_t *>(&h);
  }
  __device__ static float2 unpack(uint32_t u) {
    return __half22float2(*reinterpret_cast<__half2 *>(&u));
  }
};

// One 8-byte global store (as a uint2 assignment it became two 4-byte
// stores).
__device__ __forceinline__ void store8(void *dst, uint2 v) {
  asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(dst), "r"(v.x),
               "r"(v.y)
               : "memory");
}

// One 16-byte global store (a uint4 assigned through a cast pointer became
// four 4-byte stores).
__device__ __forceinline__ void store16(void *dst, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// 2^x on the MUFU unit with denormal results flushed to zero: exp2f adds
// a range test and two multiplies per call to keep those denormals, and a
// probability below 2^-126 of the row's maximum adds nothing to O.
__device__ __forceinline__ float fastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/// The four lanes of a quad (lane & 3 = q) hold a 4 x 4 matrix of 32-bit
/// words, a[j] of lane q being element (q, j); afterwards a[j] of lane q is
/// element (j, q), the transpose. Two exchanges: the off-diagonal 2 x 2
/// blocks swap between lanes q and q ^ 2, then the elements within each
/// block between q and q ^ 1.
__device__ __forceinline__ void quadTranspose(uint32_t (&a)[4], int q) {
  const bool hi2 = q & 2, hi1 = q & 1;
  uint32_t s0 = __shfl_xor_sync(0xffffffffu, hi2 ? a[0] : a[2], 2);
  uint32_t s1 = __shfl_xor_sync(0xffffffffu, hi2 ? a[1] : a[3], 2);
  if (hi2) {
    a[0] = s0;
    a[1] = s1;
  } else {
    a[2] = s0;
    a[3] = s1;
  }
  s0 = __shfl_xor_sync(0xffffffffu, hi1 ? a[0] : a[1], 1);
  s1 = __shfl_xor_sync(0xffffffffu, hi1 ? a[2] : a[3], 1);
  if (hi1) {
    a[0] = s0;
    a[2] = s1;
  } else {
    a[1] = s0;
    a[3] = s1;
  }
}

/// The A fragments (mma m16n8k16 / wgmma RS layout) of a warp's 16 Q rows,
/// lane / 4 and lane / 4 + 8, whose D elements start at src[h] (rows not
/// valid read as zeros). 16 bytes per lane: lane q of a quad loads words
/// 4q..4q + 3 of each 16-word segment of its row (a load instruction covers
/// 64 contiguous bytes of each of 8 rows, where 4-byte fragment loads
/// covered 16), and the quad's transpose gives it words q, q + 4, q + 8,
/// q + 12: its fragments of two 16-column steps. Every load goes out
/// before the first transpose waits for one, so that their latencies
/// overlap (transposing each as it arrives serialises them).
template <int D>
__device__ __forceinline__ void rowQFragments(const uint32_t *const (&src)[2],
                                              const bool (&valid)[2], int lane,
                                              uint32_t (&qf)[D / 16][4]) {
  uint4 v[2][D / 32];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int sg = 0; sg < D / 32; ++sg)
      v[h][sg] = valid[h] ? __ldg(reinterpret_cast<const uint4 *>(
                                src[h] + 16 * sg + 4 * (lane & 3)))
                          : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int sg = 0; sg < D / 32; ++sg) {
      uint32_t a[4] = {v[h][sg].x, v[h][sg].y, v[h][sg].z, v[h][sg].w};
      quadTranspose(a, lane & 3);
      qf[2 * sg][h] = a[0];
      qf[2 * sg][2 + h] = a[1];
      qf[2 * sg + 1][h] = a[2];
      qf[2 * sg + 1][2 + h] = a[3];
    }
}

/// Byte offset of 16-byte chunk `ch` of row `row` in a swizzled tile whose
/// rows are CH chunks long.
template <int CH> __device__ __forceinline__ int swz(int row, int ch) {
  return (row * CH + (ch ^ (row & 7))) * 16;
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONDEVICE_CUH

// The rope and kv_append kernels of RopeApart.h. Plain launches (no
// programmatic dependent launch): each waits for the kernel before it and
// the next starts after it ends.
#include "kernels/rope_kv/RopeApart.h"

#include "kernels/common/CudaCheck.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

namespace strata::kernels {

namespace {

constexpr int kThreads = 256;

template <typename T> __device__ __forceinline__ float toFloat(T x);
template <> __device__ __forceinline__ float toFloat(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <> __device__ __forceinline__ float toFloat(__half x) {
  return __half2float(x);
}
template <typename T> __device__ __forceinline__ T fromFloat(float x);
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ __forceinline__ __half fromFloat(float x) {
  return __float2half_rn(x);
}

/// One thread per (token, head, pair) for the rotated part and per (token,
/// head, element) for the rest: index i < headDim - rotaryDim / 2 covers
/// pair i (i < rotaryDim / 2) or element rotaryDim + i - rotaryDim / 2.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    ropeRotateKernel(const T *x, T *out, const int32_t *positions,
                     const float *cosSin, int64_t maxPos, int64_t tokens,
                     int32_t heads, int32_t headDim, int32_t rotaryDim,
                     bool neox) {
  const int32_t half = rotaryDim / 2;
  const int32_t perHead = headDim - half;
  const int64_t index = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (index >= tokens * heads * perHead)
    return;
  const int64_t row = index / perHead; // token * heads + head
  const int32_t i = int32_t(index - row * perHead);
  const int64_t token = row / heads;
  const T *src = x + row * headDim;
  T *dst = out + row * headDim;
  if (i >= half) {
    const int32_t e = rotaryDim + (i - half);
    dst[e] = src[e];
    return;
  }
  const int32_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
  const int64_t pos = positions[token];
  if (pos < 0 || pos >= maxPos) {
    dst[a] = src[a];
    dst[b] = src[b];
    return;
  }
  const float c = cosSin[pos * rotaryDim + i];
  const float s = cosSin[pos * rotaryDim + half + i];
  const float xa = toFloat(src[a]), xb = toFloat(src[b]);
  // Rounded product by product, as the CPU reference computes it (no
  // fused multiply-add), so both store the same bits.
  dst[a] = fromFloat<T>(__fsub_rn(__fmul_rn(xa, c), __fmul_rn(xb, s)));
  dst[b] = fromFloat<T>(__fadd_rn(__fmul_rn(xb, c), __fmul_rn(xa, s)));
}

/// One thread per (token, kv head, 16-byte vector) copies that vector of K
/// and of V into the token's cache slot.
__global__ void __launch_bounds__(kThreads)
    kvAppendKernel(const uint4 *k, const uint4 *v, const int32_t *cuQLens,
                   const int32_t *kvLens, uint4 *kCache, uint4 *vCache,
                   const int32_t *blockTables, int64_t maxBlocksPerSeq,
                   int64_t numBlocks, int64_t blockSize, int64_t blockStride,
                   int64_t batch, int64_t tokens, int32_t kvHeads,
                   int32_t vecs) {
  const int64_t index = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (index >= tokens * kvHeads * vecs)
    return;
  const int64_t token = index / (int64_t(kvHeads) * vecs);
  const int32_t rest = int32_t(index - token * kvHeads * vecs);
  const int32_t head = rest / vecs, vec = rest - head * vecs;
  if (token >= cuQLens[batch])
    return;
  // The sequence whose rows hold this token: the last b with cuQLens[b] <=
  // token (binary search; empty sequences share their start).
  int64_t lo = 0, hi = batch - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (cuQLens[mid] <= token)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int64_t seq = lo;
  const int64_t slot = int64_t(kvLens[seq]) + (token - cuQLens[seq]);
  const int64_t logical = slot / blockSize;
  if (slot < 0 || logical >= maxBlocksPerSeq)
    return;
  const int32_t block = blockTables[seq * maxBlocksPerSeq + logical];
  if (block < 0 || block >= numBlocks)
    return;
  // Offsets in 16-byte vectors: blockStride elements per block, headDim
  // (vecs vectors) per head row.
  const int64_t perBlock = blockStride / 8;
  const int64_t at = block * perBlock +
                     (int64_t(head) * blockSize + slot % blockSize) * vecs + vec;
  const int64_t from = (token * kvHeads + head) * vecs + vec;
  kCache[at] = k[from];
  vCache[at] = v[from];
}

unsigned gridFor(int64_t work) {
  return unsigned((work + kThreads - 1) / kThreads);
}

} // namespace

Status ropeRotate(const RopeRotateDims &d, const void *x, void *out,
                  const int32_t *positions, const CosSinCache &cosSin,
                  cudaStream_t stream) {
  if (Status s = validateRopeRotate(d, x, out, positions, cosSin); !s.ok())
    return s;
  if (d.tokens == 0)
    return Status::success();
  const int64_t work =
      d.tokens * d.numHeads * int64_t(d.headDim - d.rotaryDim / 2);
  const bool neox = d.pairing == RopePairingKind::Neox;
  if (d.dtype == ActDType::BF16)
    ropeRotateKernel<<<gridFor(work), kThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16 *>(x),
        static_cast<__nv_bfloat16 *>(out), positions, cosSin.data,
        cosSin.maxPos, d.tokens, d.numHeads, d.headDim, d.rotaryDim, neox);
  else
    ropeRotateKernel<<<gridFor(work), kThreads, 0, stream>>>(
        static_cast<const __half *>(x), static_cast<__half *>(out), positions,
        cosSin.data, cosSin.maxPos, d.tokens, d.numHeads, d.headDim,
        d.rotaryDim, neox);
  return cudaStatus(cudaGetLastError(), "rope launch");
}

Status kvAppend(const KvAppendDims &d, const void *k, const void *v,
                const int32_t *cuQLens, const int32_t *kvLens,
                const KvCacheView &cache, cudaStream_t stream) {
  if (Status s = validateKvAppend(d, k, v, cuQLens, kvLens, cache); !s.ok())
    return s;
  if (d.batch == 0 || d.tokens == 0)
    return Status::success();
  const int64_t stride = kvAppendBlockStride(d, cache);
  const int32_t vecs = d.headDim / 8;
  const int64_t work = d.tokens * d.numKvHeads * vecs;
  kvAppendKernel<<<gridFor(work), kThreads, 0, stream>>>(
      static_cast<const uint4 *>(k), static_cast<const uint4 *>(v), cuQLens,
      kvLens, static_cast<uint4 *>(cache.k), static_cast<uint4 *>(cache.v),
      cache.blockTables, cache.maxBlocksPerSeq, cache.numBlocks,
      cache.blockSize, stride, d.batch, d.tokens, d.numKvHeads, vecs);
  return cudaStatus(cudaGetLastError(), "kv_append launch");
}

} // namespace strata::kernels

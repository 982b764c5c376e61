// Argmax over rows of fp32 logits. A row of 128K entries is 512 KB: one
// block on one SM cannot stream that at the GPU's bandwidth, so a row is
// split over blocks of kPerBlock entries, each reducing (key << 32 | ~id)
// with a max (larger logit first, then lower id), and the last block of a
// row (elected by an atomic counter) reduces the partial results and
// resets the counter.
#include "kernels/sampling/Sampling.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/sampling/SamplingDevice.cuh"

#include <string>

namespace strata::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 8; // two float4 per thread
constexpr int64_t kPerBlock = int64_t(kThreads) * kPerThread;

int64_t chunksPerRow(int64_t vocab) {
  return (vocab + kPerBlock - 1) / kPerBlock;
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads)
    argmaxKernel(const float *logits, int64_t vocab, int32_t *outIds,
                 uint64_t *partial, uint32_t *counters) {
  pdlWait();
  pdlLaunchDependents();
  using namespace sampling;
  __shared__ uint64_t scratch[32];
  __shared__ bool last;
  const int64_t row = blockIdx.y;
  const int chunks = gridDim.x;
  const float *r = logits + row * vocab;
  const int64_t begin = int64_t(blockIdx.x) * kPerBlock;
  uint64_t best = 0;
  if constexpr (kVec) {
    float4 v[2];
    int64_t i0[2];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      i0[u] = begin + (int64_t(u) * kThreads + threadIdx.x) * 4;
      if (i0[u] < vocab)
        v[u] = __ldcs(reinterpret_cast<const float4 *>(r + i0[u]));
    }
#pragma unroll
    for (int u = 0; u < 2; ++u)
      if (i0[u] < vocab) {
        float f[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          uint64_t p = packKeyId(f[e], uint32_t(i0[u] + e));
          best = p > best ? p : best;
        }
      }
  } else {
    for (int64_t i = begin + threadIdx.x; i < begin + kPerBlock && i < vocab;
         i += kThreads) {
      uint64_t p = packKeyId(r[i], uint32_t(i));
      best = p > best ? p : best;
    }
  }
  best = blockMaxU64(best, scratch);
  if (chunks == 1) {
    if (threadIdx.x == 0)
      outIds[row] = int32_t(unpackId(best));
    return;
  }
  if (threadIdx.x == 0) {
    partial[row * chunks + blockIdx.x] = best;
    __threadfence();
    last = atomicAdd(&counters[row], 1u) == unsigned(chunks - 1);
  }
  __syncthreads();
  if (!last)
    return;
  __threadfence();
  best = 0;
  for (int c = threadIdx.x; c < chunks; c += kThreads) {
    uint64_t p = __ldcg(partial + row * chunks + c);
    best = p > best ? p : best;
  }
  best = blockMaxU64(best, scratch);
  if (threadIdx.x == 0) {
    outIds[row] = int32_t(unpackId(best));
    counters[row] = 0;
  }
}

} // namespace

size_t argmaxWorkspaceBytes(int64_t rows, int64_t vocab) {
  if (rows <= 0 || vocab <= 0)
    return 0;
  size_t partials = size_t(rows) * size_t(chunksPerRow(vocab)) * 8;
  return partials + size_t(rows) * 4;
}

Status argmaxRows(const float *logits, int64_t rows, int64_t vocab,
                  int32_t *outIds, void *workspace, size_t workspaceBytes,
                  cudaStream_t stream) {
  if (rows < 0 || vocab <= 0 || vocab > 0x7fffffff || rows > 65535)
    return Status::error("argmax: need rows in [0, 65535] and vocab in [1, "
                         "2^31), got " +
                         std::to_string(rows) + " x " + std::to_string(vocab));
  if (!logits || !outIds)
    return Status::error("argmax: null operand");
  int64_t chunks = chunksPerRow(vocab);
  if (chunks > 1 &&
      (!workspace || workspaceBytes < argmaxWorkspaceBytes(rows, vocab)))
    return Status::error("argmax: workspace of " +
                         std::to_string(argmaxWorkspaceBytes(rows, vocab)) +
                         " bytes needed, got " +
                         std::to_string(workspaceBytes));
  if (rows == 0)
    return Status::success();
  auto *partial = static_cast<uint64_t *>(workspace);
  auto *counters =
      reinterpret_cast<uint32_t *>(partial ? partial + rows * chunks : nullptr);
  dim3 grid{unsigned(chunks), unsigned(rows), 1u};
  bool vec = vocab % 4 == 0 && (reinterpret_cast<uintptr_t>(logits) & 15) == 0;
  if (vec)
    return cudaStatus(launchDependent(argmaxKernel<true>, grid,
                                      dim3(kThreads), 0, stream, logits,
                                      vocab, outIds, partial, counters),
                      "argmax launch");
  return cudaStatus(launchDependent(argmaxKernel<false>, grid, dim3(kThreads),
                                    0, stream, logits, vocab, outIds, partial,
                                    counters),
                    "argmax launch");
}

} // namespace strata::kernels

// Embedding gather: 16-byte vectors, consecutive threads on adjacent vectors
// of a row, so every gathered row is read and written with full coalesced
// transactions whatever its width. Each thread handles kUnroll vectors
// kThreads apart and issues all their id loads, then all their row loads,
// before the first store: the two dependent DRAM latencies (id, then row)
// are paid once per kUnroll vectors. 32-bit index arithmetic whenever the
// output has fewer than 2^31 vectors (always, for real shapes).
#include "kernels/elementwise/Elementwise.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"

#include <string>

namespace strata::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

template <typename Index>
__global__ void __launch_bounds__(kThreads)
    embeddingKernel(Index total, Index nvec, int64_t vocab, const int32_t *ids,
                    const uint4 *table, uint4 *out) {
  pdlWait();
  pdlLaunchDependents();
  const Index first = Index(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
  int32_t id[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    Index i = first + Index(u) * kThreads;
    id[u] = i < total ? __ldg(ids + i / nvec) : -1;
  }
  uint4 row[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    Index i = first + Index(u) * kThreads;
    // documented: a row whose id is outside the vocabulary is left unwritten
    if (id[u] >= 0 && id[u] < vocab)
      row[u] = __ldg(table + int64_t(id[u]) * nvec + i % nvec);
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    Index i = first + Index(u) * kThreads;
    if (id[u] >= 0 && id[u] < vocab)
      __stcs(out + i, row[u]);
  }
}

} // namespace

Status embedding(ActDType dtype, int64_t tokens, int64_t vocab, int64_t cols,
                 const int32_t *ids, const void *table, void *out,
                 cudaStream_t stream) {
  // A gather copies storage bits, but 8 elements per 16-byte vector.
  if (Status s = requireDeviceActDType("embedding", dtype); !s)
    return s;
  if (tokens < 0 || vocab <= 0 || cols <= 0 || cols % 8 != 0)
    return Status::error("embedding: need tokens >= 0, vocab > 0 and cols a "
                         "positive multiple of 8, got " +
                         std::to_string(tokens) + ", " + std::to_string(vocab) +
                         ", " + std::to_string(cols));
  if (!ids || !table || !out)
    return Status::error("embedding: null operand");
  if ((reinterpret_cast<uintptr_t>(table) | reinterpret_cast<uintptr_t>(out)) &
      15u)
    return Status::error("embedding: table and out must be 16-byte aligned");
  if (tokens == 0)
    return Status::success();
  const int64_t nvec = cols / 8, total = tokens * nvec;
  const int64_t perBlock = int64_t(kThreads) * kUnroll;
  const int64_t blocks = (total + perBlock - 1) / perBlock;
  if (blocks > 0x7fffffff)
    return Status::error("embedding: " + std::to_string(tokens) + " x " +
                         std::to_string(cols) + " is too large");
  auto *tv = static_cast<const uint4 *>(table);
  auto *ov = static_cast<uint4 *>(out);
  // The largest index formed is below blocks * perBlock.
  if (blocks * perBlock <= 0x7fffffff)
    return cudaStatus(launchDependent(embeddingKernel<int32_t>,
                                      dim3(unsigned(blocks)), dim3(kThreads),
                                      0, stream, int32_t(total),
                                      int32_t(nvec), vocab, ids, tv, ov),
                      "embedding launch");
  return cudaStatus(launchDependent(embeddingKernel<int64_t>,
                                    dim3(unsigned(blocks)), dim3(kThreads), 0,
                                    stream, total, nvec, vocab, ids, tv, ov),
                    "embedding launch");
}

} // namespace strata::kernels

// Embedding gather: one 16-byte vector per thread, vectors of consecutive
// threads adjacent in a row, so every gathered row is read and written with
// full coalesced transactions whatever its width.
#include "kernels/elementwise/Elementwise.h"

#include "kernels/common/CudaCheck.h"

#include <string>

namespace strata::kernels {

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    embeddingKernel(int64_t tokens, int64_t vocab, int64_t nvec,
                    const int32_t *ids, const uint4 *table, uint4 *out) {
  int64_t total = tokens * nvec;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * kThreads) {
    int64_t t = i / nvec, c = i % nvec;
    int64_t id = __ldg(ids + t);
    if (id < 0 || id >= vocab)
      continue; // documented: the row is left unwritten
    __stcs(out + i, __ldg(table + id * nvec + c));
  }
}

} // namespace

Status embedding(ActDType dtype, int64_t tokens, int64_t vocab, int64_t cols,
                 const int32_t *ids, const void *table, void *out,
                 cudaStream_t stream) {
  (void)dtype; // a gather copies storage bits
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
  int64_t nvec = cols / 8;
  int64_t blocks = (tokens * nvec + kThreads - 1) / kThreads;
  blocks = blocks < (1 << 20) ? blocks : (1 << 20);
  embeddingKernel<<<unsigned(blocks), kThreads, 0, stream>>>(
      tokens, vocab, nvec, ids, static_cast<const uint4 *>(table),
      static_cast<uint4 *>(out));
  return cudaStatus(cudaGetLastError(), "embedding launch");
}

} // namespace strata::kernels

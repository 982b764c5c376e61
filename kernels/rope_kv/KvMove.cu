#include "kernels/rope_kv/KvMove.h"

#include "kernels/common/CudaCheck.h"

#include <cstdint>

namespace strata::kernels {

namespace {

constexpr int kThreads = 32;

__global__ void __launch_bounds__(kThreads)
    kvMoveKernel(uint8_t *base, int64_t poolBytes, const int64_t *moves,
                 int64_t count, int64_t numKvHeads, int64_t blockSize,
                 int64_t rowVecs) {
  const int64_t pool = blockIdx.x / numKvHeads;
  const int64_t head = blockIdx.x - pool * numKvHeads;
  uint4 *p = reinterpret_cast<uint4 *>(base + pool * poolBytes);
  for (int64_t m = 0; m < count; ++m) {
    const int64_t src = moves[2 * m], dst = moves[2 * m + 1];
    const uint4 *from =
        p + (((src / blockSize) * numKvHeads + head) * blockSize +
             src % blockSize) *
                rowVecs;
    uint4 *to = p + (((dst / blockSize) * numKvHeads + head) * blockSize +
                     dst % blockSize) *
                        rowVecs;
    for (int64_t i = threadIdx.x; i < rowVecs; i += kThreads)
      to[i] = from[i];
    // The next move may read this row.
    __syncthreads();
  }
}

} // namespace

Status kvMove(const KvMoveDims &d, void *base, int64_t poolBytes,
              const int64_t *moves, cudaStream_t stream) {
  if (Status s = validateKvMove(d, nullptr); !s.ok())
    return s;
  if (d.pools == 0 || d.moves == 0)
    return Status::success();
  if (!base || !moves)
    return Status::error("kv_move: null pool base or moves");
  if (poolBytes < d.numBlocks * d.numKvHeads * d.blockSize * d.headDim *
                      d.elementBytes ||
      poolBytes % 16 != 0)
    return Status::error("kv_move: pools of " + std::to_string(poolBytes) +
                         " bytes do not hold the blocks or are not 16-byte "
                         "aligned");
  const int64_t blocks = d.pools * d.numKvHeads;
  kvMoveKernel<<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(
      static_cast<uint8_t *>(base), poolBytes, moves, d.moves, d.numKvHeads,
      d.blockSize, d.headDim * d.elementBytes / 16);
  return cudaStatus(cudaGetLastError(), "kv_move launch");
}

} // namespace strata::kernels

#include "kernels/common/KvMoveTypes.h"

#include <string>

namespace strata::kernels {

Status validateKvMove(const KvMoveDims &d, const int64_t *hostMoves) {
  if (d.pools < 0 || d.moves < 0)
    return Status::error("kv_move: negative pool or move count");
  if (d.numBlocks <= 0 || d.numKvHeads <= 0 || d.blockSize <= 0 ||
      d.headDim <= 0 || d.elementBytes <= 0)
    return Status::error("kv_move: pool dimensions must be positive");
  if ((d.headDim * d.elementBytes) % 16 != 0)
    return Status::error("kv_move: a head row of " +
                         std::to_string(d.headDim * d.elementBytes) +
                         " bytes is not a multiple of 16");
  if (!hostMoves)
    return Status::success();
  const int64_t slots = d.numBlocks * d.blockSize;
  for (int64_t m = 0; m < d.moves; ++m) {
    const int64_t src = hostMoves[2 * m], dst = hostMoves[2 * m + 1];
    if (src < 0 || src >= slots || dst < 0 || dst >= slots)
      return Status::error("kv_move: move " + std::to_string(m) + " (" +
                           std::to_string(src) + " -> " + std::to_string(dst) +
                           ") leaves the pool's " + std::to_string(slots) +
                           " slots");
  }
  return Status::success();
}

} // namespace strata::kernels

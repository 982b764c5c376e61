#include "kernels/cpu/KvMoveRef.h"

#include <cstring>

namespace strata::kernels {

Status kvMoveRef(const KvMoveDims &d, void *const *pools,
                 const int64_t *moves) {
  if (Status s = validateKvMove(d, moves); !s.ok())
    return s;
  const int64_t row = d.headDim * d.elementBytes;
  auto at = [&](uint8_t *pool, int64_t slot, int64_t head) {
    return pool + (((slot / d.blockSize) * d.numKvHeads + head) * d.blockSize +
                   slot % d.blockSize) *
                      row;
  };
  for (int64_t p = 0; p < d.pools; ++p) {
    auto *pool = static_cast<uint8_t *>(pools[p]);
    for (int64_t m = 0; m < d.moves; ++m)
      for (int64_t h = 0; h < d.numKvHeads; ++h)
        std::memmove(at(pool, moves[2 * m + 1], h), at(pool, moves[2 * m], h),
                     size_t(row));
  }
  return Status::success();
}

} // namespace strata::kernels

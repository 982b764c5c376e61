// Moving token slots inside the paged KV cache: after a token tree is
// verified, the keys and values of the accepted path are moved down to the
// slots that follow the sequence's cached prefix, in order (paged-cache
// compaction; docs/speculative.md). The GPU kernel is
// kernels/rope_kv/KvMove.h, the CPU reference kernels/cpu/KvMoveRef.h.
#ifndef STRATA_KERNELS_COMMON_KVMOVETYPES_H
#define STRATA_KERNELS_COMMON_KVMOVETYPES_H

#include "kernels/common/Status.h"

#include <cstdint>

namespace strata::kernels {

/// One pool is K or V of one layer: T [numBlocks, numKvHeads, blockSize,
/// headDim], T of `elementBytes` bytes; flat slot s is row s % blockSize
/// of block s / blockSize.
struct KvMoveDims {
  /// Pools to move in (2 per layer: K and V).
  int64_t pools = 0;
  int64_t numBlocks = 0;
  int64_t numKvHeads = 0;
  int64_t blockSize = 0;
  /// headDim * elementBytes is a multiple of 16.
  int64_t headDim = 0;
  int64_t elementBytes = 2;
  /// (source slot, destination slot) pairs.
  int64_t moves = 0;
};

/// The checks both the launcher and the reference run first. The moves,
/// when given in host memory, are checked too: every slot inside the pool.
Status validateKvMove(const KvMoveDims &dims, const int64_t *hostMoves);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_KVMOVETYPES_H

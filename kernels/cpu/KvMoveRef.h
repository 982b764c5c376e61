// CPU reference of the KV slot move (kernels/common/KvMoveTypes.h): the
// GPU kernel (kernels/rope_kv/KvMove.h) stores the same bytes.
#ifndef STRATA_KERNELS_CPU_KVMOVEREF_H
#define STRATA_KERNELS_CPU_KVMOVEREF_H

#include "kernels/common/KvMoveTypes.h"

namespace strata::kernels {

/// Copies, in every pool of `pools` (host pointers, dims.pools of them) and
/// every KV head, the row of slot moves[2m] to the row of slot
/// moves[2m + 1], for m = 0 .. dims.moves - 1 in order: a later move reads
/// what an earlier one wrote.
Status kvMoveRef(const KvMoveDims &dims, void *const *pools,
                 const int64_t *moves);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_KVMOVEREF_H

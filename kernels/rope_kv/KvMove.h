// The KV slot move on the GPU (kernels/common/KvMoveTypes.h): compaction of
// a verified token tree's accepted path in the paged cache.
//  - The pools are consecutive in one allocation: pool p starts
//    p * poolBytes bytes after `base` (the CUDA backend's layout: K of
//    layer l is pool 2l, V pool 2l + 1).
//  - `moves` int64 [dims.moves, 2] in device memory: (source, destination)
//    flat slots, applied in order, so a move may read a slot an earlier
//    one wrote (one thread block per pool and head walks them with a
//    barrier between moves).
//  - Asynchronous on `stream`; a failed Status means nothing was launched
//    or names the CUDA error of the launch. The CPU reference
//    (kernels/cpu/KvMoveRef.h) stores the same bytes.
#ifndef STRATA_KERNELS_ROPE_KV_KVMOVE_H
#define STRATA_KERNELS_ROPE_KV_KVMOVE_H

#include "kernels/common/KvMoveTypes.h"

#include <cuda_runtime_api.h>

namespace strata::kernels {

Status kvMove(const KvMoveDims &dims, void *base, int64_t poolBytes,
              const int64_t *moves, cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ROPE_KV_KVMOVE_H

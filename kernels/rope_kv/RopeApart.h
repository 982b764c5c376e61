// rope and kv_append: the two halves of rope_kv_write as separate launches.
//
// A plan compiled without strata-fuse-rope-kv (or without strata-fuse-qkv,
// which the rope fusion needs) keeps the generic ops: q and k heads sliced
// out of the projection, each rotated by `rope`, then K and V appended to
// the paged cache by `kv_append`. These kernels run those ops on the GPU so
// that such plans can be measured against the fused ones (`strata bench
// --ablate-passes`); they are written for clarity, not speed: one thread per
// element pair, no shared memory.
//
// Common to both:
//  - T is the activation dtype `dims.dtype`: FP16 or BF16; every tensor but
//    the fp32 rotary table and the int32 indices is T. Math is fp32; each
//    stored value is rounded once (round to nearest even), as
//    rope_kv_write rounds it.
//  - All tensors are device memory. Launches are asynchronous on `stream`;
//    a failed Status means nothing was launched (inconsistent shapes or
//    pointers) or names the CUDA error of the launch.
//  - The CPU references (kernels/cpu/RopeApartRef.h) take the same operands
//    in host memory and store the same bits.
#ifndef STRATA_KERNELS_ROPE_KV_ROPEAPART_H
#define STRATA_KERNELS_ROPE_KV_ROPEAPART_H

#include "kernels/common/RopeApartTypes.h"
#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

namespace strata::kernels {

/// Rotary embedding of every head of every token.
///  x          T [tokens, numHeads, headDim].
///  out        T [tokens, numHeads, headDim]; may be x (in place).
///  positions  int32 [tokens]: the rotary position of each token.
///  cosSin     fp32 [maxPos, rotaryDim] (cacheBatch 1): row p holds cos of
///             the rotaryDim/2 frequencies, then their sin
///             (kernels/common/RopeCosSin.h).
///  A token whose position is outside [0, cosSin.maxPos) is not rotated:
///  its row is copied to out unchanged.
///  Pairs: Neox rotates (i, i + rotaryDim/2), GptJ (2i, 2i + 1), i <
///  rotaryDim/2, by the angle of frequency i.
Status ropeRotate(const RopeRotateDims &dims, const void *x, void *out,
                  const int32_t *positions, const CosSinCache &cosSin,
                  cudaStream_t stream);

/// Appends each token's K and V heads to the paged cache.
///  k, v      T [tokens, numKvHeads, headDim].
///  cuQLens   int32 [batch + 1]: the tokens of sequence b are rows
///            cuQLens[b] to cuQLens[b + 1] - 1.
///  kvLens    int32 [batch]: tokens already cached in sequence b; its i-th
///            token of the step goes to slot kvLens[b] + i.
///  cache     paged only: K and V pools T [numBlocks, numKvHeads, blockSize,
///            headDim] (blockStride elements between blocks; 0 means
///            numKvHeads * blockSize * headDim), block tables int32 [batch,
///            maxBlocksPerSeq].
///  A slot with no storage (logical block >= maxBlocksPerSeq, block id < 0
///  or >= numBlocks) is not written, nor are rows at and beyond
///  cuQLens[batch] (a padded decode batch).
Status kvAppend(const KvAppendDims &dims, const void *k, const void *v,
                const int32_t *cuQLens, const int32_t *kvLens,
                const KvCacheView &cache, cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ROPE_KV_ROPEAPART_H

// rope_kv_write: fused (optional) QK RMSNorm + rotary embedding of q and k +
// append of K and V to the KV cache, in one pass over the projected qkv.
//
// Three named launchers over one templated kernel, one per phase:
//   packed      prefill, empty cache: q and k rotated in place in qkv;
//   continuous  extend/decode onto a non-empty cache: rotated q to its own
//               buffer, K and V appended after each sequence's cached tokens;
//   tree        speculative verify: as continuous, with explicit positions.
//
// Common to all three (types in kernels/common/RopeKvTypes.h):
//  - T is the activation dtype `dims.dtype`: FP16 or BF16; qkv, qOut, the
//    QK-norm weights and the KV cache are all T.
//  - qkv is T [batch, seq, numQHeads + 2 * numKvHeads, headDim], dense, heads
//    ordered q..., k..., v....
//  - cosSin is fp32 [cacheBatch, maxPos, rotaryDim]; row p holds cos of the
//    rotaryDim/2 frequencies, then their sin (kernels/common/RopeCosSin.h).
//  - qkNorm (optional): q and k weights T [headDim]; RMSNorm over headDim in
//    fp32 before the rotation.
//  - cache: paged K and V pools T [numBlocks, numKvHeads, blockSize, headDim]
//    (blockStride apart) with block tables int32 [batch, maxBlocksPerSeq], or
//    contiguous T [batch, 2, numKvHeads, capacity, headDim].
//  - seqLens (optional) int32 [batch]: tokens t >= seqLens[b] are padding
//    and nothing of them is written.
//  - All tensors are device memory, 16-byte aligned. Math is fp32; each
//    stored value is rounded once (round to nearest even).
//  - Elements at and beyond rotaryDim are not rotated (they are normalised
//    when QK-norm is on, and copied bit for bit when it is off).
//  - A token whose rotary position is outside [0, maxPos) is skipped: nothing
//    of it is written. A K/V slot with no storage (slot >= capacity, logical
//    block >= maxBlocksPerSeq, block id < 0 or >= numBlocks) is not written;
//    the token's q still is.
//  - Returns a failed Status (nothing launched) when shapes or pointers are
//    inconsistent, and a failed Status naming the CUDA error when the launch
//    fails. The launch is asynchronous on `stream`.
#ifndef STRATA_KERNELS_ROPE_KV_ROPEKVWRITE_H
#define STRATA_KERNELS_ROPE_KV_ROPEKVWRITE_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

namespace strata::kernels {

/// Packed (prefill, empty cache).
///  qkv     T [batch, seq, Hq+Hkv+Hkv, headDim], in/out: q and k heads are
///          rotated in place, v heads are left as they are.
///  cache   K and V of token t are written to slot t.
///  Rotary position of token t is t (every sequence starts at 0), so
///  seq <= cosSin.maxPos and seq <= cache capacity are checked on entry.
///  seqLens int32 [batch] or null.
Status ropeKvWritePacked(const RopeKvDims &dims, void *qkv,
                         const CosSinCache &cosSin, const QkNormParams &qkNorm,
                         const KvCacheView &cache, const int32_t *seqLens,
                         cudaStream_t stream);

/// Continuous (extend / decode on a non-empty cache).
///  qkv     T [batch, seq, Hq+Hkv+Hkv, headDim], read only.
///  qOut    T [batch, seq, Hq, headDim]: rotated q.
///  kvLens  int32 [batch]: tokens already cached in sequence b. Token t is
///          written to slot kvLens[b] + t and rotates by that position.
///  seqLens int32 [batch] or null (ragged chunks in a padded batch).
Status ropeKvWriteContinuous(const RopeKvDims &dims, const void *qkv,
                             void *qOut, const int32_t *kvLens,
                             const CosSinCache &cosSin,
                             const QkNormParams &qkNorm,
                             const KvCacheView &cache, const int32_t *seqLens,
                             cudaStream_t stream);

/// Tree (speculative verify).
///  qkv     T [batch, seq, Hq+Hkv+Hkv, headDim], read only.
///  qOut    T [batch, seq, Hq, headDim]: rotated q.
///  kvLens  int32 [batch]: token t is written to slot kvLens[b] + t.
///  posIds  int32 [batch, seq]: rotary position of each token (its depth in
///          the draft tree plus the cached length), independent of its slot.
///  seqLens int32 [batch] or null.
Status ropeKvWriteTree(const RopeKvDims &dims, const void *qkv, void *qOut,
                       const int32_t *kvLens, const int32_t *posIds,
                       const CosSinCache &cosSin, const QkNormParams &qkNorm,
                       const KvCacheView &cache, const int32_t *seqLens,
                       cudaStream_t stream);

/// Which of the two kernels runs a launch. Both compute the same values bit
/// for bit; they differ in how they keep memory busy (docs/kernels.md).
///  PerThread  each thread loads, rotates and stores whole 16-byte vectors
///             of a token's heads: the shortest chain, for small launches
///             (decode), where latency decides the time.
///  Streamed   a producer warp streams token rows into shared memory with
///             bulk copies while four warps rotate and store: for large
///             launches, where bandwidth decides it.
///  Auto       Streamed from kStreamedMinHeadTokens (token, head) pairs on,
///             PerThread below.
enum class RopeKvKernel : uint8_t { Auto, PerThread, Streamed };
constexpr int64_t kStreamedMinHeadTokens = 16384;

/// The body shared by the three launchers: validates `args` and launches the
/// kernel for its variant (`kernel` chooses between the two
/// implementations; the launchers above take Auto).
Status launchRopeKvWrite(const RopeKvArgs &args, cudaStream_t stream,
                         RopeKvKernel kernel = RopeKvKernel::Auto);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ROPE_KV_ROPEKVWRITE_H

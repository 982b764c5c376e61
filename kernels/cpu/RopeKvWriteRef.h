// CPU references of the three rope_kv_write variants (see
// kernels/rope_kv/RopeKvWrite.h for the GPU launchers; the operands and their
// layouts are the same, with every pointer in host memory).
//
// Written plainly: one token and head at a time, fp32 arithmetic, one
// rounding to the storage type per stored element through HalfTypes.h (f32
// storage, which only the reference runs, is stored unrounded), so the
// result holds the bits the GPU stores up to fp32 rounding differences. The
// same shape check runs first (validateRopeKv), and out-of-range device-side
// indices are treated exactly as the GPU kernel treats them.
#ifndef STRATA_KERNELS_CPU_ROPEKVWRITEREF_H
#define STRATA_KERNELS_CPU_ROPEKVWRITEREF_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

namespace strata::kernels {

/// Packed (prefill, empty cache): rotates q and k of qkv in place; K and V of
/// token t go to cache slot t; rotation position t.
Status ropeKvWritePackedRef(const RopeKvDims &dims, void *qkv,
                            const CosSinCache &cosSin,
                            const QkNormParams &qkNorm,
                            const KvCacheView &cache,
                            const int32_t *seqLens = nullptr);

/// Continuous (extend/decode): rotated q to qOut; K and V of token t go to
/// slot kvLens[b] + t, which is also the rotation position.
Status ropeKvWriteContinuousRef(const RopeKvDims &dims, const void *qkv,
                                void *qOut, const int32_t *kvLens,
                                const CosSinCache &cosSin,
                                const QkNormParams &qkNorm,
                                const KvCacheView &cache,
                                const int32_t *seqLens = nullptr);

/// Tree (speculative verify): as continuous, but token t of sequence b
/// rotates by posIds[b * seq + t].
Status ropeKvWriteTreeRef(const RopeKvDims &dims, const void *qkv, void *qOut,
                          const int32_t *kvLens, const int32_t *posIds,
                          const CosSinCache &cosSin, const QkNormParams &qkNorm,
                          const KvCacheView &cache,
                          const int32_t *seqLens = nullptr);

/// The shared body: validates `args`, then runs its variant.
Status ropeKvWriteRef(const RopeKvArgs &args);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_ROPEKVWRITEREF_H

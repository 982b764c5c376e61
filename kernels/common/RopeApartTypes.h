// The dimensions of the separate rope and kv_append kernels
// (kernels/rope_kv/RopeApart.h; CPU references in
// kernels/cpu/RopeApartRef.h), apart from the launchers so that host-only
// code can name them.
#ifndef STRATA_KERNELS_COMMON_ROPEAPARTTYPES_H
#define STRATA_KERNELS_COMMON_ROPEAPARTTYPES_H

#include "kernels/common/ActDType.h"
#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cstdint>

namespace strata::kernels {

struct RopeRotateDims {
  int64_t tokens = 0;
  int32_t numHeads = 0;
  /// Even, at most 256.
  int32_t headDim = 0;
  /// Leading elements of each head that rotate; even and at most headDim.
  /// Elements at and beyond rotaryDim are copied unchanged.
  int32_t rotaryDim = 0;
  RopePairingKind pairing = RopePairingKind::Neox;
  ActDType dtype = ActDType::BF16;
};

struct KvAppendDims {
  /// Sequences of the step.
  int64_t batch = 0;
  /// Rows of k and v: cuQLens[batch] of them belong to sequences.
  int64_t tokens = 0;
  int32_t numKvHeads = 0;
  /// Multiple of 8, at most 256.
  int32_t headDim = 0;
  ActDType dtype = ActDType::BF16;
};

/// The checks both the GPU launcher and the CPU reference run first: the
/// dtype (fp16, bf16), the shapes, the pointers (unless there is nothing
/// to do) and a shared rotary table.
Status validateRopeRotate(const RopeRotateDims &dims, const void *x,
                          const void *out, const int32_t *positions,
                          const CosSinCache &cosSin);
Status validateKvAppend(const KvAppendDims &dims, const void *k,
                        const void *v, const int32_t *cuQLens,
                        const int32_t *kvLens, const KvCacheView &cache);
/// Elements between two paged blocks (cache.blockStride, or its default).
int64_t kvAppendBlockStride(const KvAppendDims &dims,
                            const KvCacheView &cache);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_ROPEAPARTTYPES_H

// CPU references of the separate rope and kv_append kernels
// (kernels/rope_kv/RopeApart.h): the same operands and layouts with every
// pointer in host memory, one element at a time, fp32 arithmetic with one
// product rounded at a time (as the GPU kernel computes it), so both store
// the same bits.
#ifndef STRATA_KERNELS_CPU_ROPEAPARTREF_H
#define STRATA_KERNELS_CPU_ROPEAPARTREF_H

#include "kernels/common/RopeApartTypes.h"
#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

namespace strata::kernels {

Status ropeRotateRef(const RopeRotateDims &dims, const void *x, void *out,
                     const int32_t *positions, const CosSinCache &cosSin);

Status kvAppendRef(const KvAppendDims &dims, const void *k, const void *v,
                   const int32_t *cuQLens, const int32_t *kvLens,
                   const KvCacheView &cache);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_ROPEAPARTREF_H

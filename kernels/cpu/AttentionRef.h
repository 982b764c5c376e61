// CPU reference of softmax attention over the KV cache (prefill, extend,
// decode and tree verify; see kernels/common/AttentionTypes.h).
//
// Written plainly: for each query and head, scores in fp32 over every
// visible key, a max-subtracted softmax, the weighted sum of V in fp32,
// one rounding to the activation dtype (none for f32; q, out and the
// cache are all in dims.dtype). Host pointers; validates the
// lengths and tree structure the GPU launchers cannot see.
#ifndef STRATA_KERNELS_CPU_ATTENTIONREF_H
#define STRATA_KERNELS_CPU_ATTENTIONREF_H

#include "kernels/common/AttentionTypes.h"
#include "kernels/common/Status.h"

namespace strata::kernels {

Status attentionRef(const AttentionDims &dims, const AttentionTensors &t);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_ATTENTIONREF_H

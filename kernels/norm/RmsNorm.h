// RMSNorm and fused residual add + RMSNorm.
//
//   rmsNorm:     out[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * w
//   addRmsNorm:  sum[r] = round(xScale * x[r] + residualScale * residual[r]);
//                out[r] = rmsNorm(sum[r])
//
// T is `dtype` (FP16 or BF16) for every tensor; x, residual, out and sum are
// row-major T [rows, cols] (rows = tokens of all sequences flattened; for the
// per-head QK-norm rows = tokens * heads and cols = headDim), w is T [cols].
// Math is fp32 and each stored value is rounded once; addRmsNorm normalises
// the rounded sum it stores, as kernels/cpu/DenseRef.h does.
//  - cols is a multiple of 8 in [8, 32768]; pointers are device memory and
//    16-byte aligned (one 16-byte vector per thread access). Checked.
//  - Aliasing: out may alias x; sum may alias x or residual (each element is
//    read by the thread that writes it, before the write).
//  - Asynchronous on `stream`; returns a failed Status (nothing launched) on
//    a bad shape or pointer, or naming the CUDA error of the launch.
#ifndef STRATA_KERNELS_NORM_RMSNORM_H
#define STRATA_KERNELS_NORM_RMSNORM_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace strata::kernels {

/// x T [rows, cols], w T [cols] -> out T [rows, cols].
Status rmsNorm(ActDType dtype, int64_t rows, int64_t cols, const void *x,
               const void *w, float eps, void *out, cudaStream_t stream);

/// x, residual T [rows, cols], w T [cols] -> sum T [rows, cols] (the next
/// residual) and out T [rows, cols] (the normalised input of the next
/// projection). The scales (finite) are MiniMax's beta (block output x) and
/// alpha (residual stream); 1 and 1 elsewhere.
Status addRmsNorm(ActDType dtype, int64_t rows, int64_t cols, const void *x,
                  const void *residual, const void *w, float eps,
                  float xScale, float residualScale, void *out, void *sum,
                  cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_NORM_RMSNORM_H

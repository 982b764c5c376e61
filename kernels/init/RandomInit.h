// Device-side drawing of random weights, value for value what the runtime's
// host WeightStore::random draws (runtime/Weights.cpp): element i of a
// tensor named N is
//   std * sqrt(-2 ln(1 - u(seed, h, 2i))) * cos(2 pi u(seed, h, 2i + 1))
// with u = counterUniform (kernels/cpu/SamplingRef.h) and h = FNV-1a(N),
// computed in double, rounded to float, then to the storage dtype. Drawing
// an 8B-parameter model this way takes well under a second on the GPU
// instead of minutes on one host thread.
//
//   out   `count` elements of `dtype` (F32, F16 or BF16 as plan::DType
//         numbers 0, 1, 2), device memory.
// Asynchronous on `stream`; a failed Status names a bad argument or the
// CUDA error of the launch.
#ifndef STRATA_KERNELS_INIT_RANDOMINIT_H
#define STRATA_KERNELS_INIT_RANDOMINIT_H

#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace strata::kernels {

enum class InitDType : uint8_t { F32 = 0, F16 = 1, BF16 = 2 };

/// Normal(0, std) draws as described above.
Status randomNormalFill(InitDType dtype, int64_t count, uint64_t seed,
                        uint64_t nameHash, double std, void *out,
                        cudaStream_t stream);

/// Every element set to `value` (norm weights 1, biases 0).
Status constantFill(InitDType dtype, int64_t count, float value, void *out,
                    cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_INIT_RANDOMINIT_H

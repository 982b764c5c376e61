// Device-side fill of benchmark inputs: random values of realistic
// magnitude generated on the GPU, so that gigabytes of rotating input sets
// need no host round trip. Included by one translation unit per benchmark
// binary.
#ifndef STRATA_BENCH_BENCHFILL_CUH
#define STRATA_BENCH_BENCHFILL_CUH

#include <cuda_bf16.h>

#include <cstdint>

namespace strata::bench {

/// Fills n bf16 values with a hash-based approximation of N(0, 1) (sum of
/// four uniforms, rescaled to unit variance).
static __global__ void fillNormalBf16(__nv_bfloat16 *p, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 0x9e3779b9u ^ seed;
    float sum = 0.f;
    for (int r = 0; r < 4; ++r) {
      x ^= x >> 16;
      x *= 0x7feb352du;
      x ^= x >> 15;
      x *= 0x846ca68bu;
      x ^= x >> 16;
      sum += (x >> 8) * (1.0f / 16777216.0f);
    }
    p[i] = __float2bfloat16_rn((sum - 2.0f) * 1.7320508f);
  }
}

} // namespace strata::bench

#endif // STRATA_BENCH_BENCHFILL_CUH

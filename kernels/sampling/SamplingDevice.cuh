// Device pieces shared by the sampling kernels: the order-preserving key of
// a logit and the counter-based uniform of kernels/cpu/SamplingRef.cpp.
#ifndef STRATA_KERNELS_SAMPLING_SAMPLINGDEVICE_CUH
#define STRATA_KERNELS_SAMPLING_SAMPLINGDEVICE_CUH

#include <cstdint>

namespace strata::kernels::sampling {

/// Unsigned key with the order of the float: a larger logit has a larger
/// key, so (key << 32 | ~id) orders by logit, then by lowest id.
__device__ __forceinline__ uint32_t logitKey(float f) {
  uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float keyLogit(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  return __uint_as_float(u);
}

__device__ __forceinline__ uint64_t packKeyId(float f, uint32_t id) {
  return (uint64_t(logitKey(f)) << 32) | uint64_t(0xffffffffu - id);
}

__device__ __forceinline__ uint32_t unpackId(uint64_t packed) {
  return 0xffffffffu - uint32_t(packed);
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ double counterUniform(uint64_t seed, uint64_t seqId,
                                                 uint64_t step) {
  uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ seqId) ^ step);
  return double(h >> 11) * (1.0 / 9007199254740992.0);
}

__device__ __forceinline__ uint64_t warpMaxU64(uint64_t v) {
  for (int o = 16; o > 0; o /= 2) {
    uint64_t other = __shfl_xor_sync(0xffffffffu, v, o);
    v = other > v ? other : v;
  }
  return v;
}

/// Block-wide max; every thread gets the result. `scratch` holds 32 values.
__device__ __forceinline__ uint64_t blockMaxU64(uint64_t v, uint64_t *scratch) {
  v = warpMaxU64(v);
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    scratch[threadIdx.x / 32] = v;
  __syncthreads();
  uint64_t r = 0;
  for (int w = 0; w < int(blockDim.x / 32); ++w)
    r = scratch[w] > r ? scratch[w] : r;
  return r;
}

} // namespace strata::kernels::sampling

#endif // STRATA_KERNELS_SAMPLING_SAMPLINGDEVICE_CUH

// Device helpers of the lightning kernels: 16-bit type traits, cp.async,
// ldmatrix and the m16n8k16 tensor-core MMA (sm_80+ mma.sync; Hopper runs it
// on the same tensor cores as wgmma at a lower issue rate, which is enough
// for these small per-chunk products).
//
// Fragment layouts (g = lane / 4, t = lane % 4), PTX ISA "mma.m16n8k16":
//   A 16x16: a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B 16x8:  b0 (k 2t..2t+1, n g)  b1 (k 2t+8..2t+9, n g)
//   C 16x8:  c0,c1 (g, 2t..2t+1)  c2,c3 (g+8, 2t..2t+1)
#ifndef STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGDEVICE_CUH
#define STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGDEVICE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/MmaSync.cuh"

#include <cstdint>

namespace strata::kernels::lightning {

template <typename T> struct Half2Traits;

template <> struct Half2Traits<__nv_bfloat16> {
  using T2 = __nv_bfloat162;
  static constexpr bool kIsBf16 = true;
  static __device__ __forceinline__ T2 fromFloat2(float a, float b) {
    return __floats2bfloat162_rn(a, b);
  }
  static __device__ __forceinline__ float2 toFloat2(T2 x) {
    return __bfloat1622float2(x);
  }
  static __device__ __forceinline__ float toFloat(__nv_bfloat16 x) {
    return __bfloat162float(x);
  }
  static __device__ __forceinline__ __nv_bfloat16 fromFloat(float x) {
    return __float2bfloat16_rn(x);
  }
};

template <> struct Half2Traits<__half> {
  using T2 = __half2;
  static constexpr bool kIsBf16 = false;
  static __device__ __forceinline__ T2 fromFloat2(float a, float b) {
    return __floats2half2_rn(a, b);
  }
  static __device__ __forceinline__ float2 toFloat2(T2 x) {
    return __half22float2(x);
  }
  static __device__ __forceinline__ float toFloat(__half x) {
    return __half2float(x);
  }
  static __device__ __forceinline__ __half fromFloat(float x) {
    return __float2half_rn(x);
  }
};

/// Packs two floats into one 32-bit register of two T (low half first).
template <typename T>
__device__ __forceinline__ uint32_t packFloat2(float a, float b) {
  auto v = Half2Traits<T>::fromFloat2(a, b);
  return *reinterpret_cast<uint32_t *>(&v);
}

template <typename T>
__device__ __forceinline__ float2 unpackFloat2(uint32_t r) {
  return Half2Traits<T>::toFloat2(
      *reinterpret_cast<typename Half2Traits<T>::T2 *>(&r));
}

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The shared wrappers (kernels/common/MmaSync.cuh), taking generic
// pointers into shared memory.
__device__ __forceinline__ void cpAsync16(void *dst, const void *src,
                                          bool valid) {
  kernels::cpAsync16(smemAddr(dst), src, valid);
}
using kernels::cpAsyncCommit;
using kernels::cpAsyncWait;
using kernels::mma16816;

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], const void *p) {
  kernels::ldmatrixX4(r, smemAddr(p));
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4],
                                                const void *p) {
  kernels::ldmatrixX4Trans(r, smemAddr(p));
}

} // namespace strata::kernels::lightning

#endif // STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGDEVICE_CUH

// 16-byte vectors of eight fp16/bf16 values, unpacked to and packed from
// fp32 registers: the access unit of the memory-bound dense kernels.
#ifndef STRATA_KERNELS_ELEMENTWISE_VEC16_CUH
#define STRATA_KERNELS_ELEMENTWISE_VEC16_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace strata::kernels::vec16 {

template <typename T> struct Pair;
template <> struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
  static __device__ __forceinline__ float2 toFloat2(type v) {
    return __bfloat1622float2(v);
  }
  static __device__ __forceinline__ type fromFloat2(float2 f) {
    return __float22bfloat162_rn(f);
  }
};
template <> struct Pair<__half> {
  using type = __half2;
  static __device__ __forceinline__ float2 toFloat2(type v) {
    return __half22float2(v);
  }
  static __device__ __forceinline__ type fromFloat2(float2 f) {
    return __float22half2_rn(f);
  }
};

template <typename T>
__device__ __forceinline__ void unpack(const uint4 &raw, float (&x)[8]) {
  const auto *h = reinterpret_cast<const typename Pair<T>::type *>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = Pair<T>::toFloat2(h[i]);
    x[2 * i] = f.x;
    x[2 * i + 1] = f.y;
  }
}

template <typename T>
__device__ __forceinline__ uint4 pack(const float (&x)[8]) {
  uint4 raw;
  auto *h = reinterpret_cast<typename Pair<T>::type *>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i)
    h[i] = Pair<T>::fromFloat2(make_float2(x[2 * i], x[2 * i + 1]));
  return raw;
}

template <typename T> __device__ __forceinline__ float toFloat(T v) {
  return static_cast<float>(v);
}
template <typename T> __device__ __forceinline__ T fromFloat(float f);
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat(float f) {
  return __float2bfloat16_rn(f);
}
template <> __device__ __forceinline__ __half fromFloat(float f) {
  return __float2half_rn(f);
}

} // namespace strata::kernels::vec16

#endif // STRATA_KERNELS_ELEMENTWISE_VEC16_CUH

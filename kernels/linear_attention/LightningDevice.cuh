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

/// 16-byte global -> shared copy that bypasses L1; fills zeros when !valid
/// (src is then not read but must still be a mapped address).
__device__ __forceinline__ void cpAsync16(void *dst, const void *src,
                                          bool valid) {
  int srcBytes = valid ? 16 : 0;
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smemAddr(dst)),
      "l"(src), "r"(srcBytes));
}

__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smemAddr(p)));
}

__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4],
                                                const void *p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smemAddr(p)));
}

/// c += a * b on one m16n8k16 tile, fp32 accumulate.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4],
                                         uint32_t b0, uint32_t b1) {
  if constexpr (Half2Traits<T>::kIsBf16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                   "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                   "r"(b1));
  }
}

} // namespace strata::kernels::lightning

#endif // STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGDEVICE_CUH

// Warpgroup MMA (wgmma, sm_90a) for the attention kernel's rows
// configuration: A from registers (the same per-warp fragment as
// mma.sync m16n8k16) or from shared memory, B from shared memory, both
// through matrix descriptors; fp32 accumulators in the mma.sync C layout
// repeated over N / 8 tiles. The operand lists are spelled out in macros
// per N (16, 64 and 128) because inline PTX needs literal strings.
#ifndef STRATA_KERNELS_ATTENTION_WGMMA_CUH
#define STRATA_KERNELS_ATTENTION_WGMMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace strata::kernels::attention_detail {

/// Descriptor of a 128-byte-swizzled shared-memory operand: byte address,
/// leading and stride byte offsets (PTX ISA "matrix descriptor format").
/// Swizzle atoms (8 rows x 128 bytes) must start at 1024-byte boundaries.
__device__ __forceinline__ uint64_t sw128Desc(uint32_t addr, uint32_t lbo,
                                              uint32_t sbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

/// The descriptor of the operand `bytes` further on (a multiple of 16):
/// the address field holds address / 16 in 14 bits, so while every
/// address stays below 256 KB (all of shared memory) the sum never
/// carries into the next field.
__device__ __forceinline__ uint64_t descAdvance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmmaWaitAll() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
/// Waits until at most N committed groups are in flight (groups complete
/// in commit order).
template <int N> __device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// cp.async writes shared memory through the generic proxy, wgmma reads it
/// through the async proxy: each thread fences its copies before the
/// barrier that publishes a stage.
__device__ __forceinline__ void fenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/// Registers a wgmma uses are defined (accumulators) or must stay
/// unchanged (A operands) only up to its wait: this pins every access to
/// them on the right side of the wait and of the next issue in the
/// compiler's schedule.
template <typename E, int N>
__device__ __forceinline__ void fenceOperands(E (&r)[N][4]) {
  static_assert(sizeof(E) == 4, "32-bit registers");
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if constexpr (std::is_same_v<E, float>)
        asm volatile("" : "+f"(r[i][j])::"memory");
      else
        asm volatile("" : "+r"(r[i][j])::"memory");
    }
}

/// Sets the registers per thread of the executing warpgroup (every warp of
/// it executes this): a decrease returns registers to the block's pool, an
/// increase waits for them. ptxas honours it only when the kernel's
/// register count at entry is known (launch bounds with a minimum number
/// of blocks per SM).
template <int N, bool INC>
__device__ __forceinline__ void warpgroupSetMaxRegs() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg range");
  if constexpr (INC)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
  else
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// One function per (N, type, B major-ness): d (+)= A B over 16 of K.
#define STRATA_WGMMA_ACC(i)                                                    \
  "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define STRATA_WGMMA_ACC8                                                      \
  STRATA_WGMMA_ACC(0), STRATA_WGMMA_ACC(1), STRATA_WGMMA_ACC(2),               \
      STRATA_WGMMA_ACC(3), STRATA_WGMMA_ACC(4), STRATA_WGMMA_ACC(5),           \
      STRATA_WGMMA_ACC(6), STRATA_WGMMA_ACC(7)
#define STRATA_WGMMA_ACC8_15                                                   \
  STRATA_WGMMA_ACC(8), STRATA_WGMMA_ACC(9), STRATA_WGMMA_ACC(10),              \
      STRATA_WGMMA_ACC(11), STRATA_WGMMA_ACC(12), STRATA_WGMMA_ACC(13),        \
      STRATA_WGMMA_ACC(14), STRATA_WGMMA_ACC(15)
// The accumulator operands %0-%31 (N = 64) and %32-%63 (the rest of N = 128).
#define STRATA_WGMMA_D32                                                       \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "     \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "     \
  "%30, %31"
#define STRATA_WGMMA_D32_63                                                    \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "     \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, "     \
  "%60, %61, %62, %63"
#define STRATA_WGMMA_AB "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc)

// N = 16: the scores of a 16-key sliver (the new keys of a split item,
// AttentionRowsKernel.cuh).
#define STRATA_WGMMA_N16(NAME, TY, TRANS_B)                                    \
  __device__ __forceinline__ void NAME(float(&d)[2][4], const uint32_t(&a)[4], \
                                       uint64_t desc, int accumulate) {        \
    asm volatile(                                                              \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"                           \
        "wgmma.mma_async.sync.aligned.m64n16k16.f32." TY "." TY                \
        " {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, "         \
        "p, 1, 1, " #TRANS_B ";\n}\n"                                          \
        : STRATA_WGMMA_ACC(0), STRATA_WGMMA_ACC(1)                             \
        : STRATA_WGMMA_AB, "r"(accumulate));                                   \
  }

#define STRATA_WGMMA_N64(NAME, TY, TRANS_B)                                    \
  __device__ __forceinline__ void NAME(float(&d)[8][4], const uint32_t(&a)[4], \
                                       uint64_t desc, int accumulate) {        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                  \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY       \
                 " {" STRATA_WGMMA_D32                                         \
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1, " #TRANS_B ";\n}\n"   \
                 : STRATA_WGMMA_ACC8                                           \
                 : STRATA_WGMMA_AB, "r"(accumulate));                          \
  }

#define STRATA_WGMMA_N128(NAME, TY, TRANS_B)                                   \
  __device__ __forceinline__ void NAME(float(&d)[16][4],                       \
                                       const uint32_t(&a)[4], uint64_t desc,   \
                                       int accumulate) {                       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                  \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY      \
                 " {" STRATA_WGMMA_D32 ", " STRATA_WGMMA_D32_63                \
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1, " #TRANS_B ";\n}\n"   \
                 : STRATA_WGMMA_ACC8, STRATA_WGMMA_ACC8_15                     \
                 : STRATA_WGMMA_AB, "r"(accumulate));                          \
  }

// A from shared memory (K-major, like B): QK^T reads Q from shared memory,
// which keeps the 32 registers per thread of its fragments free for the
// 128-key score tile.
#define STRATA_WGMMA_SS_N64(NAME, TY)                                          \
  __device__ __forceinline__ void NAME(float(&d)[8][4], uint64_t descA,        \
                                       uint64_t descB, int accumulate) {       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                  \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY       \
                 " {" STRATA_WGMMA_D32 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"      \
                 : STRATA_WGMMA_ACC8                                           \
                 : "l"(descA), "l"(descB), "r"(accumulate));                   \
  }

#define STRATA_WGMMA_SS_N128(NAME, TY)                                         \
  __device__ __forceinline__ void NAME(float(&d)[16][4], uint64_t descA,       \
                                       uint64_t descB, int accumulate) {       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                  \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY      \
                 " {" STRATA_WGMMA_D32 ", " STRATA_WGMMA_D32_63                \
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"                            \
                 : STRATA_WGMMA_ACC8, STRATA_WGMMA_ACC8_15                     \
                 : "l"(descA), "l"(descB), "r"(accumulate));                   \
  }

STRATA_WGMMA_SS_N64(wgmmaSsBf16N64, "bf16")
STRATA_WGMMA_SS_N128(wgmmaSsBf16N128, "bf16")
STRATA_WGMMA_SS_N64(wgmmaSsF16N64, "f16")
STRATA_WGMMA_SS_N128(wgmmaSsF16N128, "f16")

STRATA_WGMMA_N16(wgmmaBf16N16K, "bf16", 0)
STRATA_WGMMA_N64(wgmmaBf16N64K, "bf16", 0)
STRATA_WGMMA_N64(wgmmaBf16N64T, "bf16", 1)
STRATA_WGMMA_N128(wgmmaBf16N128T, "bf16", 1)
STRATA_WGMMA_N16(wgmmaF16N16K, "f16", 0)
STRATA_WGMMA_N64(wgmmaF16N64K, "f16", 0)
STRATA_WGMMA_N64(wgmmaF16N64T, "f16", 1)
STRATA_WGMMA_N128(wgmmaF16N128T, "f16", 1)

#undef STRATA_WGMMA_N16
#undef STRATA_WGMMA_N64
#undef STRATA_WGMMA_N128
#undef STRATA_WGMMA_SS_N64
#undef STRATA_WGMMA_SS_N128
#undef STRATA_WGMMA_AB
#undef STRATA_WGMMA_D32_63
#undef STRATA_WGMMA_D32
#undef STRATA_WGMMA_ACC8_15
#undef STRATA_WGMMA_ACC8
#undef STRATA_WGMMA_ACC

/// d (+)= A B for a 64 x N tile over 16 of K; TRANS_B: B is stored N-major.
template <typename T, int N, bool TRANS_B> struct Wgmma;
template <> struct Wgmma<__nv_bfloat16, 16, false> {
  static constexpr auto run = wgmmaBf16N16K;
};
template <> struct Wgmma<__nv_bfloat16, 64, false> {
  static constexpr auto run = wgmmaBf16N64K;
};
template <> struct Wgmma<__nv_bfloat16, 64, true> {
  static constexpr auto run = wgmmaBf16N64T;
};
template <> struct Wgmma<__nv_bfloat16, 128, true> {
  static constexpr auto run = wgmmaBf16N128T;
};
template <> struct Wgmma<__half, 16, false> {
  static constexpr auto run = wgmmaF16N16K;
};
template <> struct Wgmma<__half, 64, false> {
  static constexpr auto run = wgmmaF16N64K;
};
template <> struct Wgmma<__half, 64, true> {
  static constexpr auto run = wgmmaF16N64T;
};
template <> struct Wgmma<__half, 128, true> {
  static constexpr auto run = wgmmaF16N128T;
};

/// d (+)= A B for a 64 x N tile over 16 of K, A and B both K-major in
/// shared memory.
template <typename T, int N> struct WgmmaSS;
template <> struct WgmmaSS<__nv_bfloat16, 64> {
  static constexpr auto run = wgmmaSsBf16N64;
};
template <> struct WgmmaSS<__nv_bfloat16, 128> {
  static constexpr auto run = wgmmaSsBf16N128;
};
template <> struct WgmmaSS<__half, 64> {
  static constexpr auto run = wgmmaSsF16N64;
};
template <> struct WgmmaSS<__half, 128> {
  static constexpr auto run = wgmmaSsF16N128;
};

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_WGMMA_CUH

// The sm_80-style building blocks the tensor-core kernels share: 16-byte
// cp.async copies into shared memory, ldmatrix fragment loads and the
// mma.sync m16n8k16 product with fp32 accumulation. Addresses of shared
// memory are shared-window (cvta) addresses.
#ifndef STRATA_KERNELS_COMMON_MMASYNC_CUH
#define STRATA_KERNELS_COMMON_MMASYNC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace strata::kernels {

/// 16 bytes global -> shared, bypassing L1; with valid == false the
/// destination is zero-filled and src is not read (it must still be a
/// mapped address).
__device__ __forceinline__ void cpAsync16(uint32_t dst, const void *src,
                                          bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0));
}
/// An L2 policy for data read once: its lines are evicted first, so that
/// lines read again (lengths, tables, partial results) stay.
__device__ __forceinline__ uint64_t l2EvictFirst() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n"
               : "=l"(policy));
  return policy;
}
/// cpAsync16 under an L2 policy (l2EvictFirst).
__device__ __forceinline__ void cpAsync16(uint32_t dst, const void *src,
                                          bool valid, uint64_t policy) {
  asm volatile(
      "cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::
          "r"(dst),
      "l"(src), "r"(valid ? 16 : 0), "l"(policy));
}
__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
/// Waits for every cp.async this thread has issued, committed or not (a
/// wait_group covers committed groups only; copies tracked by an mbarrier
/// arrival are never committed).
__device__ __forceinline__ void cpAsyncWaitAll() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}
/// Waits until at most N of this thread's committed groups are in flight.
template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrixX4(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t *r, uint32_t addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}
__device__ __forceinline__ void ldmatrixX2(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}

/// c += a b on one m16n8k16 tile (row-major A fragment a[4], column-major
/// B fragment b0, b1), fp32 accumulate; T is __nv_bfloat16 or __half.
template <typename T>
__device__ __forceinline__ void mma16816(float *c, const uint32_t *a,
                                         uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                   "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                   "r"(b1));
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_MMASYNC_CUH

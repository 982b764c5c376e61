// Split-phase barriers of the wgmma attention path: shared-memory
// mbarriers that track a stage's cp.async copies (full) and its last
// readers (empty), and the named barriers that make the two consumer
// warpgroups take turns at the tensor cores. All addresses are
// shared-memory (cvta) addresses of 8-byte aligned mbarrier objects.
#ifndef STRATA_KERNELS_ATTENTION_BARRIERS_CUH
#define STRATA_KERNELS_ATTENTION_BARRIERS_CUH

#include <cstdint>

namespace strata::kernels::attention_detail {

/// One phase completes after `count` arrivals.
__device__ __forceinline__ void mbarInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar),
               "r"(count)
               : "memory");
}

__device__ __forceinline__ void mbarArrive(uint32_t bar) {
  asm volatile(
      "mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar)
      : "memory");
}

/// Returns once the phase of parity `parity` has completed (phase k of a
/// barrier has parity k & 1; a waiter is never two phases behind here).
__device__ __forceinline__ void mbarWait(uint32_t bar, uint32_t parity) {
  asm volatile("{\n.reg .pred done;\n"
               "WAIT:\n"
               "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, "
               "[%0], %1;\n"
               "@!done bra WAIT;\n}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}

/// The barrier receives one arrival (counted in its init count) once every
/// cp.async this thread has issued so far has landed.
__device__ __forceinline__ void cpAsyncArriveNoinc(uint32_t bar) {
  asm volatile(
      "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar)
      : "memory");
}

/// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads:
/// sync waits for the barrier to fill, arrive only adds to it.
__device__ __forceinline__ void namedBarSync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void namedBarArrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_BARRIERS_CUH

// Split-phase barriers of the pipelined kernels: shared-memory mbarriers
// that track a stage's copies (full: cp.async, bulk or tensor copies) and
// its last readers (empty), the bulk and tensor global-to-shared copies
// that complete on one, and the named barriers that make attention's two
// consumer warpgroups take turns at the tensor cores, and the cluster
// barrier and loads from another block's shared memory by which a
// cluster's blocks combine their results. All addresses are shared-memory
// (cvta) addresses; mbarrier objects are 8-byte aligned.
#ifndef STRATA_KERNELS_COMMON_BARRIERS_CUH
#define STRATA_KERNELS_COMMON_BARRIERS_CUH

#include <cstdint>

namespace strata::kernels {

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

/// mbarArrive where `cond` holds, as a predicated instruction (no branch).
__device__ __forceinline__ void mbarArriveIf(uint32_t bar, bool cond) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %1, 0;\n"
      " @p mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n}\n" ::"r"(
          bar),
      "r"(int(cond))
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

/// Makes the initialised barriers visible to the copy engine (the async
/// proxy) before any bulk copy is told to complete on them.
__device__ __forceinline__ void mbarInitFence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// One arrival that also raises the bytes the current phase waits for by
/// `bytes`: the phase completes once its arrivals are in and that many
/// bytes of bulk copies have landed.
__device__ __forceinline__ void mbarArriveExpectTx(uint32_t bar,
                                                   uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, "
               "[%0], %1;\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

/// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from
/// global memory to shared memory on the copy engine; the bytes count
/// towards barrier `bar`'s current phase when they land.
__device__ __forceinline__ void bulkCopyToShared(uint32_t dst, const void *src,
                                                 uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

/// Copies the box of the 4-dimensional tensor map `map` (TensorMap.h; a
/// kernel parameter declared __grid_constant__) whose first element is at
/// coordinates (c0, c1, c2, c3), innermost first, to shared memory at `dst`
/// (1024-byte aligned for the 128-byte swizzle) on the copy engine;
/// elements outside the tensor land as zeros. The box's bytes count
/// towards barrier `bar`'s current phase when they land.
__device__ __forceinline__ void tensorCopyToShared4d(uint32_t dst,
                                                     const void *map, int c0,
                                                     int c1, int c2, int c3,
                                                     uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile"
               ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
               "[%6];\n" ::"r"(dst),
               "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
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

/// A counter in global memory shared by blocks of one grid: the atomics
/// release at GPU scope what the calling thread wrote, and what a block
/// barrier ordered before them, and acquire what earlier releases of the
/// counter released; the load only acquires.
__device__ __forceinline__ int32_t atomicAddAcqRel(int32_t *counter,
                                                   int32_t v) {
  int32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(counter), "r"(v)
               : "memory");
  return old;
}
__device__ __forceinline__ int32_t atomicOrAcqRel(int32_t *counter, int32_t v) {
  int32_t old;
  asm volatile("atom.acq_rel.gpu.global.or.b32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(counter), "r"(v)
               : "memory");
  return old;
}
__device__ __forceinline__ int32_t loadAcquire(const int32_t *counter) {
  int32_t v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n"
               : "=r"(v)
               : "l"(counter)
               : "memory");
  return v;
}

/// The GPU's global timer, in nanoseconds.
__device__ __forceinline__ uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}

/// The cluster barrier, split: every non-exited thread of the cluster
/// arrives (releasing its earlier writes), and wait returns once they all
/// have (acquiring theirs). Threads that have exited are not waited for.
__device__ __forceinline__ void clusterArrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}
__device__ __forceinline__ void clusterWait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

/// This block's rank in its cluster.
__device__ __forceinline__ uint32_t clusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// The shared::cluster address of `addr` (this block's shared memory) in
/// the block of rank `rank` of the cluster.
__device__ __forceinline__ uint32_t clusterMapShared(uint32_t addr,
                                                     uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(out)
               : "r"(addr), "r"(rank));
  return out;
}

/// Loads from a shared::cluster address (clusterMapShared).
__device__ __forceinline__ float clusterLoadF32(uint32_t addr) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n"
               : "=f"(v)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ uint4 clusterLoad16(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_BARRIERS_CUH

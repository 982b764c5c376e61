// Device and launch side of programmatic dependent launch (see
// DependentLaunch.h for when and why).
//
// A kernel launched through launchDependent() must call pdlWait() before
// its first access to memory that another kernel writes (activations,
// caches, outputs), and before any early return: a block that exits
// without waiting could let the grid finish before its predecessor has,
// and the next kernel's wait would then no longer cover that predecessor.
// Reads of memory no kernel writes (weights, rotary tables, step inputs
// uploaded from the host) may come before it. pdlLaunchDependents() right
// after the wait lets the next kernel be scheduled once every block of this
// one has started; it then occupies only slots this kernel leaves free, and
// waits in turn. Since every kernel here waits before it triggers, a kernel
// that starts finds all kernels before its predecessor complete.
#ifndef STRATA_KERNELS_COMMON_PDL_CUH
#define STRATA_KERNELS_COMMON_PDL_CUH

#include "kernels/common/DependentLaunch.h"

#include <cuda_runtime.h>

namespace strata::kernels {

/// Blocks until the previous kernel on the stream has completed and its
/// writes are visible; returns at once when there is no such dependency.
__device__ __forceinline__ void pdlWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/// Allows the next kernel on the stream to be scheduled early.
__device__ __forceinline__ void pdlLaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/// kernel<<<grid, block, smem, stream>>>(args...) in clusters of
/// `clusterX` blocks along x (gridDim.x a multiple of it; 1: no clusters),
/// with the programmatic stream serialization attribute when
/// dependentLaunchEnabled().
template <typename... Params, typename... Args>
cudaError_t launchDependentClusters(void (*kernel)(Params...), dim3 grid,
                                    dim3 block, size_t smem,
                                    cudaStream_t stream, unsigned clusterX,
                                    Args &&...args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (clusterX > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = clusterX;
    attr[n].val.clusterDim.y = 1;
    attr[n].val.clusterDim.z = 1;
    ++n;
  }
  if (dependentLaunchEnabled()) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  config.attrs = attr;
  config.numAttrs = n;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

/// launchDependentClusters without clusters.
template <typename... Params, typename... Args>
cudaError_t launchDependent(void (*kernel)(Params...), dim3 grid, dim3 block,
                            size_t smem, cudaStream_t stream, Args &&...args) {
  return launchDependentClusters(kernel, grid, block, smem, stream, 1u,
                                 std::forward<Args>(args)...);
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_PDL_CUH

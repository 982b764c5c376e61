// Raising a kernel's dynamic shared memory limit once instead of on every
// launch. cudaFuncSetAttribute(..., MaxDynamicSharedMemorySize, ...) is a
// per-function, per-device setting; made before every launch it is a
// driver call on the host path of every launch, in each launcher whose
// kernels take more than the default 48 KB.
#ifndef STRATA_KERNELS_COMMON_SMEMLIMIT_H
#define STRATA_KERNELS_COMMON_SMEMLIMIT_H

#include <cuda_runtime.h>

namespace strata::kernels {

/// Makes sure `kernel` (a __global__ function) may be launched with `bytes`
/// of dynamic shared memory on the current device: the attribute is set the
/// first time a device, kernel and at least that many bytes are seen, and
/// remembered. A failure is returned (and not remembered). A device reset
/// (cudaDeviceReset) drops function attributes: call
/// forgetSmemLimits() after one.
cudaError_t ensureDynamicSmem(const void *kernel, int bytes);

/// Typed form for a kernel function pointer.
template <typename... Params>
cudaError_t ensureDynamicSmem(void (*kernel)(Params...), int bytes) {
  return ensureDynamicSmem(reinterpret_cast<const void *>(kernel), bytes);
}

/// Forgets every limit set through ensureDynamicSmem (after a device reset).
void forgetSmemLimits();

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_SMEMLIMIT_H

#include "kernels/common/DeviceLimits.h"

#include "kernels/common/CudaCheck.h"

#include <map>
#include <mutex>

namespace strata::kernels {

Status currentDeviceLimits(DeviceLimits &out) {
  static std::mutex mutex;
  static std::map<int, DeviceLimits> cached;
  int dev = 0;
  STRATA_CUDA_RETURN_IF_ERROR(cudaGetDevice(&dev), "device query");
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cached.find(dev);
  if (it == cached.end()) {
    DeviceLimits d;
    STRATA_CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, dev),
        "device query: SM count");
    STRATA_CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&d.smemPerSm,
                               cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                               dev),
        "device query: shared memory per SM");
    STRATA_CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&d.smemPerBlockOptin,
                               cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
        "device query: shared memory per block");
    it = cached.emplace(dev, d).first;
  }
  out = it->second;
  return Status::success();
}

} // namespace strata::kernels

#include "runtime/cuda/DeviceMemory.h"

#include "kernels/common/CudaCheck.h"

namespace strata {

namespace {

std::string describe(const std::string &what, size_t bytes) {
  return "allocating " + std::to_string(bytes) + " bytes for " + what;
}

} // namespace

template <MemoryKind Kind>
kernels::Status OwnedBuffer<Kind>::allocate(size_t bytes,
                                            const std::string &what) {
  reset();
  bytes = bytes ? bytes : 1;
  STRATA_CUDA_RETURN_IF_ERROR(Kind == MemoryKind::Device
                                  ? cudaMalloc(&ptr_, bytes)
                                  : cudaHostAlloc(&ptr_, bytes,
                                                  cudaHostAllocDefault),
                              describe(what, bytes).c_str());
  bytes_ = bytes;
  return kernels::Status::success();
}

template <MemoryKind Kind> void OwnedBuffer<Kind>::reset() {
  if (ptr_) {
    if (Kind == MemoryKind::Device)
      cudaFree(ptr_);
    else
      cudaFreeHost(ptr_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

template class OwnedBuffer<MemoryKind::Device>;
template class OwnedBuffer<MemoryKind::Pinned>;

} // namespace strata

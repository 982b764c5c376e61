#include "runtime/cuda/DeviceMemory.h"

#include "kernels/common/CudaCheck.h"

namespace strata {

namespace {

std::string describe(const std::string &what, size_t bytes) {
  return "allocating " + std::to_string(bytes) + " bytes for " + what;
}

} // namespace

kernels::Status DeviceBuffer::allocate(size_t bytes, const std::string &what) {
  reset();
  bytes = bytes ? bytes : 1;
  STRATA_CUDA_RETURN_IF_ERROR(cudaMalloc(&ptr_, bytes),
                              describe(what, bytes).c_str());
  bytes_ = bytes;
  return kernels::Status::success();
}

void DeviceBuffer::reset() {
  if (ptr_)
    cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

kernels::Status PinnedBuffer::allocate(size_t bytes, const std::string &what) {
  reset();
  bytes = bytes ? bytes : 1;
  STRATA_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault),
                              describe(what, bytes).c_str());
  bytes_ = bytes;
  return kernels::Status::success();
}

void PinnedBuffer::reset() {
  if (ptr_)
    cudaFreeHost(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

} // namespace strata

// An owning, typed device allocation for the GPU tests and the benchmarks:
// allocate, copy a host vector in or out, free on scope exit.
//
// Neither caller has a Status to hand back (a test fails its case, a
// benchmark exits), so what happens on a CUDA failure is the caller's
// choice: `Check` is a type with
//   static void check(cudaError_t err, const char *what);
// that does not return when `err` is not cudaSuccess. `what` names the
// operation for the message. The runtime has its own arena (runtime/cuda)
// and does not use this.
#ifndef STRATA_KERNELS_COMMON_DEVICEBUFFER_H
#define STRATA_KERNELS_COMMON_DEVICEBUFFER_H

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace strata::kernels {

template <typename E, typename Check> class BasicDeviceBuffer {
public:
  /// `count` elements, uninitialised. At least one element is allocated, so
  /// that get() is a valid pointer even for an empty tensor: launchers that
  /// check their pointers before looking at the sizes accept it.
  explicit BasicDeviceBuffer(size_t count) : count_(count) {
    Check::check(cudaMalloc(reinterpret_cast<void **>(&ptr_),
                            std::max<size_t>(count_, 1) * sizeof(E)),
                 "cudaMalloc");
  }
  /// A device copy of `host`.
  explicit BasicDeviceBuffer(const std::vector<E> &host)
      : BasicDeviceBuffer(host.size()) {
    upload(host);
  }
  BasicDeviceBuffer(const BasicDeviceBuffer &) = delete;
  BasicDeviceBuffer &operator=(const BasicDeviceBuffer &) = delete;
  ~BasicDeviceBuffer() { cudaFree(ptr_); }

  /// Copies `host`, which must have size() elements, to the device.
  void upload(const std::vector<E> &host) {
    Check::check(host.size() == count_ ? cudaSuccess : cudaErrorInvalidValue,
                 "upload of a host vector whose size differs from the "
                 "buffer's");
    if (count_)
      Check::check(cudaMemcpy(ptr_, host.data(), count_ * sizeof(E),
                              cudaMemcpyHostToDevice),
                   "cudaMemcpy to the device");
  }
  /// The contents, after all work on the device has finished: an error of
  /// an earlier launch is reported here rather than read back as data.
  std::vector<E> download() const {
    std::vector<E> host(count_);
    Check::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (count_)
      Check::check(cudaMemcpy(host.data(), ptr_, count_ * sizeof(E),
                              cudaMemcpyDeviceToHost),
                   "cudaMemcpy to the host");
    return host;
  }

  E *get() const { return ptr_; }
  size_t size() const { return count_; }

private:
  E *ptr_ = nullptr;
  size_t count_ = 0;
};

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_DEVICEBUFFER_H

// Owning handles of device and pinned host memory for the CUDA backend.
#ifndef STRATA_RUNTIME_CUDA_DEVICEMEMORY_H
#define STRATA_RUNTIME_CUDA_DEVICEMEMORY_H

#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata {

/// Sub-allocations inside one device buffer start at multiples of 256 bytes
/// (what cudaMalloc guarantees, and what vectorised kernels need).
inline uint64_t deviceAlign(uint64_t bytes) { return (bytes + 255) / 256 * 256; }

/// Where an OwnedBuffer's bytes live.
enum class MemoryKind {
  Device, ///< cudaMalloc
  Pinned, ///< page-locked host memory (asynchronous copies need it)
};

/// Bytes of one kind, freed on destruction; empty when never allocated.
template <MemoryKind Kind> class OwnedBuffer {
public:
  OwnedBuffer() = default;
  ~OwnedBuffer() { reset(); }
  OwnedBuffer(const OwnedBuffer &) = delete;
  OwnedBuffer &operator=(const OwnedBuffer &) = delete;
  OwnedBuffer(OwnedBuffer &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  OwnedBuffer &operator=(OwnedBuffer &&o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.ptr_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }

  /// Allocates `bytes` (at least 1), dropping what was held; `what` names
  /// the buffer in the error ("KV cache: cudaErrorMemoryAllocation ...").
  kernels::Status allocate(size_t bytes, const std::string &what);
  void reset();

  void *get() const { return ptr_; }
  template <typename T> T *as() const { return static_cast<T *>(ptr_); }
  size_t bytes() const { return bytes_; }

private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

using DeviceBuffer = OwnedBuffer<MemoryKind::Device>;
using PinnedBuffer = OwnedBuffer<MemoryKind::Pinned>;

} // namespace strata

#endif // STRATA_RUNTIME_CUDA_DEVICEMEMORY_H

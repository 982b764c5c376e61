// Status: the one error convention of every kernel launcher and CPU
// reference kernel.
//
// A launcher checks its shapes and pointers before touching the device and
// checks every CUDA status after; either failure comes back as a Status
// holding one line of text that names the operation and the mismatch
// ("rope_kv_write(continuous): headDim 100 is not a multiple of 8").
// Launchers never throw: the runtime calls them from code paths that must not
// unwind (CUDA graph capture, the exception-free compiler side), and it
// decides itself whether a failure becomes an exception, an error message or
// an abort. The type is [[nodiscard]] so that a dropped failure is a
// compile-time warning.
#ifndef STRATA_KERNELS_COMMON_STATUS_H
#define STRATA_KERNELS_COMMON_STATUS_H

#include <string>
#include <utility>

namespace strata::kernels {

class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;

  static Status success() { return Status(); }
  /// A failure; the message must not be empty (an empty one would read as
  /// success), so an empty message is replaced by a generic one.
  static Status error(std::string message) {
    Status s;
    s.message_ = message.empty() ? "unknown kernel error" : std::move(message);
    return s;
  }

  bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  /// Empty on success.
  const std::string &message() const { return message_; }

private:
  std::string message_;
};

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_STATUS_H

// Turns CUDA runtime failures into kernels::Status (see Status.h).
#ifndef STRATA_KERNELS_COMMON_CUDACHECK_H
#define STRATA_KERNELS_COMMON_CUDACHECK_H

#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <string>

namespace strata::kernels {

inline Status cudaStatus(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return Status::success();
  return Status::error(std::string(what) + ": " + cudaGetErrorName(err) + " (" +
                       cudaGetErrorString(err) + ")");
}

} // namespace strata::kernels

/// Returns a failed Status from the enclosing function when `expr` is not
/// cudaSuccess; `what` names the operation for the message.
#define STRATA_CUDA_RETURN_IF_ERROR(expr, what)                                \
  do {                                                                         \
    if (::strata::kernels::Status s_ =                                         \
            ::strata::kernels::cudaStatus((expr), (what));                     \
        !s_)                                                                   \
      return s_;                                                               \
  } while (0)

#endif // STRATA_KERNELS_COMMON_CUDACHECK_H

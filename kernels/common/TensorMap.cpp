#include "kernels/common/TensorMap.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

namespace strata::kernels {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encodeFunction() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                         cudaEnableDefault,
                                         &found) != cudaSuccess) {
      // The error is this query's: the caller copies another way, and its
      // next launch must not report it.
      cudaGetLastError();
      return PFN_cuTensorMapEncodeTiled_v12000(nullptr);
    }
    return found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f)
               : PFN_cuTensorMapEncodeTiled_v12000(nullptr);
  }();
  return fn;
}

} // namespace

bool encodeSwizzledMap2B(CUtensorMap &map, const void *base, int rank,
                         const uint64_t *dims, const uint64_t *strides,
                         const uint32_t *box) {
  if (rank < 1 || rank > 5 || box[0] * 2 > 128)
    return false;
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encodeFunction();
  if (!encode)
    return false;
  cuuint64_t d[5], s[4];
  cuuint32_t b[5], e[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    e[i] = 1;
    if (i + 1 < rank)
      s[i] = strides[i];
  }
  return encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, cuuint32_t(rank),
                const_cast<void *>(base), d, s, b, e,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

} // namespace strata::kernels

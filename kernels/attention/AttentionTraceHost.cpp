// attentionTrace and attentionTraceClear (Attention.h): the per-block
// records of the trace build (AttentionTrace.cuh), read from the decode or
// the rows translation unit.
#include "kernels/attention/AttentionTrace.h"
#include "kernels/common/CudaCheck.h"

#include <string>

#ifdef STRATA_ATTENTION_TRACE
#include <cuda_runtime.h>

namespace strata::kernels::attention_detail {
// Defined in AttentionDecode.cu and AttentionRows.cu, each reading its own
// translation unit's records (AttentionTrace.cuh).
cudaError_t decodeTraceCopy(AttentionTraceBlock *out, int64_t blocks);
cudaError_t rowsTraceCopy(AttentionTraceBlock *out, int64_t blocks);
} // namespace strata::kernels::attention_detail
#endif

namespace strata::kernels {

namespace {

#ifdef STRATA_ATTENTION_TRACE
Status copyTrace(AttentionKind kind, AttentionTraceBlock *out, int64_t blocks,
                 const char *what) {
  STRATA_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize(), what);
  STRATA_CUDA_RETURN_IF_ERROR(
      kind == AttentionKind::Decode
          ? attention_detail::decodeTraceCopy(out, blocks)
          : attention_detail::rowsTraceCopy(out, blocks),
      what);
  return Status::success();
}
#else
Status noTrace(const char *what) {
  return Status::error(std::string(what) +
                       ": this build records no trace (configure with "
                       "-DSTRATA_ATTENTION_TRACE=ON)");
}
#endif

} // namespace

Status attentionTrace(AttentionKind kind, AttentionTraceBlock *out,
                      int64_t blocks) {
  const char *what = "attentionTrace";
  if (blocks < 0 || blocks > kAttentionTraceBlocks || (blocks > 0 && !out))
    return Status::error(std::string(what) + ": blocks " +
                         std::to_string(blocks) + " must be in [0, " +
                         std::to_string(kAttentionTraceBlocks) +
                         "] with a destination for them");
#ifdef STRATA_ATTENTION_TRACE
  if (blocks == 0)
    return Status::success();
  return copyTrace(kind, out, blocks, what);
#else
  (void)kind;
  return noTrace(what);
#endif
}

Status attentionTraceClear(AttentionKind kind) {
#ifdef STRATA_ATTENTION_TRACE
  return copyTrace(kind, nullptr, 0, "attentionTraceClear");
#else
  (void)kind;
  return noTrace("attentionTraceClear");
#endif
}

} // namespace strata::kernels

// Paged decode (DecodeTraits, AttentionTraits.cuh): 16 query rows per
// block (the q heads of one kv head), the four warps taking their own
// slice of every stage's keys, three stages deep, two blocks per SM;
// split-KV across blocks with the merge done by the last block of each
// item.
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

Status attentionDecode(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream,
                       AttentionPath *path) {
  using namespace attention_detail;
  const char *name = "attention_decode";
  if (Status s =
          checkAttention(name, AttentionKind::Decode, dims, t, launch);
      !s)
    return s;
  return dims.headDim == 128
             ? launchTraits<DecodeTraits<128>>(name, AttentionKind::Decode,
                                               dims, t, launch, stream, path)
             : launchTraits<DecodeTraits<64>>(name, AttentionKind::Decode,
                                              dims, t, launch, stream, path);
}

#ifdef STRATA_ATTENTION_TRACE
namespace attention_detail {
// This translation unit's records (AttentionTraceHost.cpp reads them).
cudaError_t decodeTraceCopy(AttentionTraceBlock *out, int64_t blocks) {
  return attentionTraceCopy(out, blocks);
}
} // namespace attention_detail
#endif

} // namespace strata::kernels

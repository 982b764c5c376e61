// Paged decode: 16 query rows per block (the q heads of one kv head), the
// four warps taking 16 keys each of every 64-key stage (32 of 128 at
// headDim 64), three stages deep: 96 KB, two blocks per SM; split-KV
// across blocks with the merge done by the last block of each item.
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

Status attentionDecode(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream) {
  // 8 loader threads per key row: a warp's copy writes 128 contiguous
  // bytes of each of 4 key rows (AttentionRows.cu). b=1 128K and b=64 8K
  // 6% faster, b=32 3%; b=1 8K 1.4% slower with events (each thread then
  // looks up twice the keys before its first copies), the same in a graph.
  return attention_detail::launchAny<1, 4, 16, 3, 3, 32, 1, false, 8>(
      "attention_decode", AttentionKind::Decode, dims, t, launch, stream);
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

// Prefill, extend and tree verify: 128 query rows per block (two
// warpgroups of 64 on wgmma sharing every key stage, a producer warpgroup
// issuing the copies, one block per SM); 64-key stages 4 deep, or for long
// prefills and extends at headDim 128 128-key stages 3 deep (rowsWide,
// AttentionLaunch.cuh). Split-KV only when the items are too few to fill
// the GPU (short extends, trees over long caches). Built for sm_90a only
// (kernels/CMakeLists.txt).
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

namespace {

using attention_detail::launchAny;

Status launchRows(const char *name, AttentionKind kind,
                  const AttentionDims &dims, const AttentionTensors &t,
                  const AttentionLaunch &launch, cudaStream_t stream) {
  if (attention_detail::rowsWide(kind, dims.headDim, launch.maxQLen))
    return launchAny<8, 1, 128, 3, 4, 64, 1, true, 4>(name, kind, dims, t,
                                                      launch, stream);
  // Prefill and extend on 64-key stages: 8 loader threads per key row, so
  // that a warp's copy covers 128 contiguous bytes of each of 4 key rows
  // instead of 64 of each of 8 (Nsight Compute counted 41% of an 8K prefill's
  // shared-memory wavefronts as excess, all in the 4-thread copies; 3% with 8).
  // A 100-token extend over 8K ran 3.5% faster. A tree verify keeps 4 (with 8
  // it ran 2.5% longer in a graph), and so do 128-key stages, whose 24-register
  // producer would handle twice the keys per thread (11% longer at 8K tokens).
  const bool slivers = attention_detail::rowsSlivers(kind, dims, launch);
  if (kind == AttentionKind::Tree)
    return slivers ? launchAny<8, 1, 64, 4, 4, 64, 1, true, 4, true>(
                         name, kind, dims, t, launch, stream)
                   : launchAny<8, 1, 64, 4, 4, 64, 1, true, 4>(
                         name, kind, dims, t, launch, stream);
  return slivers ? launchAny<8, 1, 64, 4, 4, 64, 1, true, 8, true>(
                       name, kind, dims, t, launch, stream)
                 : launchAny<8, 1, 64, 4, 4, 64, 1, true, 8>(name, kind, dims,
                                                             t, launch, stream);
}

} // namespace

Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream) {
  return launchRows("attention_prefill", AttentionKind::Prefill, dims, t,
                    launch, stream);
}

Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream) {
  return launchRows("attention_extend", AttentionKind::Extend, dims, t, launch,
                    stream);
}

Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream) {
  return launchRows("attention_tree", AttentionKind::Tree, dims, t, launch,
                    stream);
}

#ifdef STRATA_ATTENTION_TRACE
namespace attention_detail {
// This translation unit's records (AttentionTraceHost.cpp reads them).
cudaError_t rowsTraceCopy(AttentionTraceBlock *out, int64_t blocks) {
  return attentionTraceCopy(out, blocks);
}
} // namespace attention_detail
#endif

} // namespace strata::kernels

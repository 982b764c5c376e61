// Prefill, extend and tree verify: 128 query rows per block (two
// warpgroups of 64 on wgmma sharing every 64-key stage, a producer
// warpgroup issuing the copies, 4 stages, one block per SM); split-KV
// only when the items are too few to fill the GPU (short extends, trees
// over long caches). Built for sm_90a only (kernels/CMakeLists.txt).
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

using attention_detail::launchAny;

Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<8, 1, 64, 4, 4, 64, 1, true>(
      "attention_prefill", AttentionKind::Prefill, dims, t, launch, stream);
}

Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<8, 1, 64, 4, 4, 64, 1, true>(
      "attention_extend", AttentionKind::Extend, dims, t, launch, stream);
}

Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<8, 1, 64, 4, 4, 64, 1, true>(
      "attention_tree", AttentionKind::Tree, dims, t, launch, stream);
}

} // namespace strata::kernels

// Prefill, extend and tree verify: 64 query rows per block (4 warps x 16
// rows sharing every 32-key stage at headDim 128, 64-key at 64), three
// blocks per SM (registers capped at 168: 48 KB of stages each); split-KV
// only when the items are too few to fill the GPU (short extends, trees
// over long caches).
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

using attention_detail::launchAny;

Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<4, 1, 32, 3, 3, 64, 3>(
      "attention_prefill", AttentionKind::Prefill, dims, t, launch, stream);
}

Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<4, 1, 32, 3, 3, 64, 3>(
      "attention_extend", AttentionKind::Extend, dims, t, launch, stream);
}

Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<4, 1, 32, 3, 3, 64, 3>("attention_tree", AttentionKind::Tree,
                                          dims, t, launch, stream);
}

} // namespace strata::kernels

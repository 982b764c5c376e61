// Prefill, extend and tree verify: 64 query rows per block (4 warps x 16
// rows sharing every 32-key stage, three stages); split-KV only when the
// items are too few to fill the GPU (short extends, trees over long
// caches). Registers bound the occupancy: capped so that three blocks fit
// an SM (a few bytes spill), this measured 18% faster at 8K tokens than
// 64-key stages at two blocks per SM (docs/benchmarks.md).
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

using attention_detail::launchAny;

Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<4, 1, 32, 3, 3, 32, 3>(
      "attention_prefill", AttentionKind::Prefill, dims, t, launch, stream);
}

Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<4, 1, 32, 3, 3, 32, 3>(
      "attention_extend", AttentionKind::Extend, dims, t, launch, stream);
}

Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream) {
  return launchAny<4, 1, 32, 3, 3, 32, 3>("attention_tree", AttentionKind::Tree,
                                       dims, t, launch, stream);
}

} // namespace strata::kernels

// Prefill, extend and tree verify: 128 query rows per block (two
// warpgroups of 64 on wgmma sharing every key stage, a producer warpgroup
// issuing the copies, one block per SM), in the configurations of
// AttentionTraits.cuh that configId picks (AttentionLaunch.cuh). Split-KV
// only when the items are too few to fill the GPU (short extends, trees
// over long caches). Built for sm_90a only (kernels/CMakeLists.txt).
#include "kernels/attention/AttentionLaunch.cuh"

namespace strata::kernels {

namespace {

using namespace attention_detail;

/// Configuration Traits<D> at the launch's head dim.
template <template <int> class Traits>
Status launchHeadDim(const char *name, AttentionKind kind,
                     const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream,
                     AttentionPath *path) {
  return dims.headDim == 128
             ? launchTraits<Traits<128>>(name, kind, dims, t, launch, stream,
                                         path)
             : launchTraits<Traits<64>>(name, kind, dims, t, launch, stream,
                                        path);
}

Status launchRows(const char *name, AttentionKind kind,
                  const AttentionDims &dims, const AttentionTensors &t,
                  const AttentionLaunch &launch, cudaStream_t stream,
                  AttentionPath *path) {
  if (Status s = checkAttention(name, kind, dims, t, launch); !s)
    return s;
  switch (configId(kind, dims, launch)) {
  case AttentionConfig::LongPrefillExtend: // headDim 128 only (rowsWide)
    return launchTraits<LongPrefillExtendTraits>(name, kind, dims, t, launch,
                                                 stream, path);
  case AttentionConfig::PrefillExtend:
    return launchHeadDim<PrefillExtendTraits>(name, kind, dims, t, launch,
                                              stream, path);
  case AttentionConfig::ExtendSlivers:
    return launchHeadDim<ExtendSliversTraits>(name, kind, dims, t, launch,
                                              stream, path);
  case AttentionConfig::TreeVerify:
    return launchHeadDim<TreeVerifyTraits>(name, kind, dims, t, launch,
                                           stream, path);
  case AttentionConfig::TreeVerifySlivers:
    return launchHeadDim<TreeVerifySliversTraits>(name, kind, dims, t, launch,
                                                  stream, path);
  case AttentionConfig::PagedDecode:
    break;
  }
  return Status::error(std::string(name) +
                       ": internal error: no rows configuration for this "
                       "launch");
}

} // namespace

Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream,
                        AttentionPath *path) {
  return launchRows("attention_prefill", AttentionKind::Prefill, dims, t,
                    launch, stream, path);
}

Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream,
                       AttentionPath *path) {
  return launchRows("attention_extend", AttentionKind::Extend, dims, t, launch,
                    stream, path);
}

Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream,
                     AttentionPath *path) {
  return launchRows("attention_tree", AttentionKind::Tree, dims, t, launch,
                    stream, path);
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

// Host side shared by the attention launchers: entry checks, the split
// count, the workspace layout and the launch of one kernel configuration.
// Each launcher .cu instantiates only the configurations it uses, so the
// three translation units compile in parallel.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONLAUNCH_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONLAUNCH_CUH

#include "kernels/attention/Attention.h"
#include "kernels/attention/AttentionDecodeKernel.cuh"
#include "kernels/attention/AttentionRowsKernel.cuh"
#include "kernels/attention/AttentionSwitches.h"
#include "kernels/attention/AttentionTraits.cuh"
#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/common/SmemLimit.h"

#include <algorithm>
#include <cmath>

namespace strata::kernels::attention_detail {

/// Whether rows of this launch take 128-key stages (3 deep, Q in shared
/// memory; LongPrefillExtendTraits) instead of 64-key ones (4 deep): for
/// long prefills and extends at headDim 128, where a larger score tile
/// per stage pays. Shorter sequences lose more to the masked half of
/// their last, diagonal tile and to filling deeper stages, and so does a
/// tree verify's split of a few tiles.
inline bool rowsWide(AttentionKind kind, int headDim, int64_t maxQLen) {
  return headDim == 128 && maxQLen >= 4096 &&
         (kind == AttentionKind::Prefill || kind == AttentionKind::Extend);
}

/// The most 64-key stages of cached keys a split may have for its item's
/// new keys to go in slivers (rowsSlivers): past it, the stage the new
/// keys add to the last split is a small part of a split's time, and the
/// slivers' extra products no longer pay for themselves.
constexpr int64_t kSliverMaxStages = 12;

/// Whether a tree verify or an extend on 64-key stages gives its split
/// items' new keys to the first splits in 16-key slivers
/// (AttentionRowsKernel.cuh, SLIV): the switch is on, every item's new keys
/// fit one stage (at most 64 tokens a sequence), the launch splits, and a
/// split's cached keys are few stages (kSliverMaxStages), where the stage
/// the new keys add to the last split is much of a split's time. A chain
/// tree and an extend of the same bounds take the same path and stay equal
/// bit for bit.
inline bool rowsSlivers(AttentionKind kind, const AttentionDims &dims,
                        const AttentionLaunch &launch) {
  if (kind == AttentionKind::Prefill || kind == AttentionKind::Decode ||
      rowsWide(kind, dims.headDim, launch.maxQLen) || launch.maxQLen > 64 ||
      !attentionNewKeySliversEnabled())
    return false;
  // Planned only here, past the tests that rule out most launches (the
  // launch plans its workspace again).
  const int64_t splits = attentionNumSplits(kind, dims, launch);
  if (splits < 2)
    return false;
  const int64_t stagesPerSplit =
      (launch.maxKvLen + 64 * splits - 1) / (64 * splits);
  return stagesPerSplit <= kSliverMaxStages;
}

/// The configuration a launch of `kind` takes before the choice of
/// slivers, which leaves its shape and so the split count and the
/// workspace alone: rows on wgmma for prefill, extend and tree (one block
/// of 384 threads per SM, by registers), key-split warps for decode.
inline AttentionConfig baseConfigId(AttentionKind kind, int headDim,
                                    int64_t maxQLen) {
  if (kind == AttentionKind::Decode)
    return AttentionConfig::PagedDecode;
  if (rowsWide(kind, headDim, maxQLen))
    return AttentionConfig::LongPrefillExtend;
  return kind == AttentionKind::Tree ? AttentionConfig::TreeVerify
                                     : AttentionConfig::PrefillExtend;
}

/// The shape the split count and the workspace are planned for.
inline Config configFor(AttentionKind kind, int headDim, int64_t maxQLen) {
  return hostConfig(baseConfigId(kind, headDim, maxQLen), headDim);
}

/// The configuration a launch runs: the base one, or its sibling with
/// new-key slivers where rowsSlivers says so.
inline AttentionConfig configId(AttentionKind kind, const AttentionDims &dims,
                                const AttentionLaunch &launch) {
  const AttentionConfig base =
      baseConfigId(kind, dims.headDim, launch.maxQLen);
  if (!rowsSlivers(kind, dims, launch))
    return base;
  return base == AttentionConfig::TreeVerify
             ? AttentionConfig::TreeVerifySlivers
             : AttentionConfig::ExtendSlivers;
}

/// Rows items of at most this many splits are merged inside their
/// cluster (clusterMergeRows): the portable cluster size.
constexpr int kMaxClusterSplits = 8;

/// Clusters of `clusterX` blocks of `kernel` (`threads` threads, `smem`
/// bytes of dynamic shared memory each) that the device holds at once
/// (clusterX 1: blocks); queried once per device, kernel and cluster
/// size. 0 when the query fails.
int maxActiveClusters(const void *kernel, int threads, size_t smem,
                      int clusterX);
/// Entry checks common to every launcher (dims, pointers, alignment, the
/// phase-specific operands). `name` prefixes the message.
Status checkAttention(const char *name, AttentionKind kind,
                      const AttentionDims &dims, const AttentionTensors &t,
                      const AttentionLaunch &launch);

struct WorkspaceLayout {
  int32_t splits = 1;
  int64_t rowTiles = 0;
  int64_t items = 0;
  bool persist = false;   // a persistent grid (attentionPersistentEnabled)
  int64_t slots = 0;      // the blocks one wave holds (estimate)
  int32_t persistCap = 0; // attentionPersistentBlocks (0: none)
  size_t countersOff = 0, lseOff = 0, oOff = 0, bytes = 0;
};

WorkspaceLayout workspaceLayout(AttentionKind kind, const AttentionDims &dims,
                                const AttentionLaunch &launch);

/// The cache's fields of AttnParams (block geometry, capacity).
void setCacheGeometry(AttnParams &p, const AttentionDims &dims,
                      const KvCacheView &cache);

/// Rows kernels: the tensor maps of whole-tile copies (AttnParams) when
/// they are enabled and the cache allows them (Attention.h); otherwise
/// p.bulkRows stays 0.
void setTileMaps(AttnParams &p, const AttentionDims &dims,
                 const KvCacheView &cache, int stageKeys);

/// The kernel of configuration Tr: the rows kernel on wgmma, the decode
/// kernel on mma.sync.
template <typename T, typename Tr> constexpr auto kernelFor() {
  if constexpr (Tr::kWgmma)
    return attentionRowsKernel<T, Tr>;
  else
    return attentionDecodeKernel<T, Tr>;
}

/// Whether two configurations launch alike (threads, shared memory, rows,
/// stages): what the workspace plan depends on.
inline bool sameShape(const Config &a, const Config &b) {
  return a.headDim == b.headDim && a.threads == b.threads &&
         a.rows == b.rows && a.stageKeys == b.stageKeys &&
         a.stages == b.stages && a.partialBytes == b.partialBytes &&
         a.resident == b.resident && a.wgmma == b.wgmma &&
         a.qInSmem == b.qInSmem && a.smemBytes == b.smemBytes;
}

/// Launches configuration Tr in dtype T after checkAttention passed, and
/// writes the path it took to `path` (when given) once it has launched.
template <typename T, typename Tr>
Status launchConfig(const char *name, AttentionKind kind,
                    const AttentionDims &dims, const AttentionTensors &t,
                    const AttentionLaunch &launch, cudaStream_t stream,
                    AttentionPath *path) {
  constexpr int D = Tr::kHeadDim;
  constexpr bool WG = Tr::kWgmma;
  // The workspace and the split count were planned from configFor: the
  // instantiated kernel must launch as that configuration.
  constexpr Config cfg = Config::of<Tr>();
  if (dims.headDim != D ||
      !sameShape(configFor(kind, dims.headDim, launch.maxQLen), cfg))
    return Status::error(std::string(name) +
                         ": internal error: the launched kernel is not the "
                         "configuration the workspace was planned for");
  WorkspaceLayout ws = workspaceLayout(kind, dims, launch);
  AttentionPath taken;
  taken.config = Tr::kId;
  if (dims.batch == 0 || ws.rowTiles == 0) {
    if (path)
      *path = taken;
    return Status::success();
  }
  AttnParams p{};
  p.q = static_cast<const uint16_t *>(t.q);
  p.out = static_cast<uint16_t *>(t.out);
  p.cuQLens = t.cuQLens;
  p.kvLens = t.kvLens;
  p.parentIds = t.parentIds;
  p.positions = t.positions;
  p.k = static_cast<const uint16_t *>(t.cache.k);
  p.paged = t.cache.layout == KvCacheLayout::Paged;
  p.v = static_cast<const uint16_t *>(p.paged ? t.cache.v : nullptr);
  p.blockTables = t.cache.blockTables;
  setCacheGeometry(p, dims, t.cache);
  p.numQHeads = dims.numQHeads;
  p.numKvHeads = dims.numKvHeads;
  p.group = dims.numQHeads / dims.numKvHeads;
  p.scaleLog2 = dims.scale * 1.4426950408889634f;
  p.window = int32_t(std::min<int64_t>(dims.slidingWindow, INT32_MAX));
  p.numSplits = ws.splits;
  p.rowTiles = int32_t(ws.rowTiles);
  if (ws.splits > 1 || ws.persist) {
    auto *base = static_cast<unsigned char *>(launch.workspace);
    p.counters = reinterpret_cast<int32_t *>(base + ws.countersOff);
    if (ws.splits > 1) {
      p.partLse = reinterpret_cast<float *>(base + ws.lseOff);
      p.partO = base + ws.oOff;
    }
  }
  if constexpr (WG)
    setTileMaps(p, dims, t.cache, Tr::kStageKeys);
  const size_t smem = cfg.smemBytes;
  auto kernel = kernelFor<T, Tr>();
  STRATA_CUDA_RETURN_IF_ERROR(ensureDynamicSmem(kernel, int(smem)), name);
  // Split-KV: decode items are a few rows, merged by their last block. A
  // rows item is 128 rows, whose partials one block merging alone read for
  // longer than the splits took: its splits merge together, as one cluster
  // of blocks when every item's cluster fits on the GPU at once (a cluster
  // takes its blocks' SMs from one GPC); else by the item's blocks through
  // the workspace, each waiting for its siblings' partials, where the
  // device holds the whole grid at once (no waiting block then keeps a
  // sibling from starting); else in a merge kernel spread over the GPU
  // that follows (a dependent launch: it waits for this one).
  dim3 grid(unsigned(ws.rowTiles * ws.splits), unsigned(dims.numKvHeads),
            unsigned(dims.batch));
  if constexpr (WG) {
    const void *k = reinterpret_cast<const void *>(kernel);
    p.clusterMerge =
        ws.splits > 1 && ws.splits <= kMaxClusterSplits &&
        attentionClusterMergeEnabled() &&
        ws.items <= maxActiveClusters(k, cfg.threads, smem, ws.splits);
    p.peerMerge = ws.splits > 1 && !p.clusterMerge &&
                  attentionPeerMergeEnabled() &&
                  int64_t(grid.x) * grid.y * grid.z <=
                      maxActiveClusters(k, cfg.threads, smem, 1);
  }
  p.peerWaitNs = int32_t(attentionPeerWaitNs());
  // Persistent (workspaceLayout's choice): a grid of the blocks the GPU
  // holds at once (the estimate where the query fails; a test may cap it),
  // each taking items in turn; the next item's Q and first tiles then load
  // under the current one's end.
  if (WG && ws.persist) {
    int64_t resident = maxActiveClusters(reinterpret_cast<const void *>(kernel),
                                         cfg.threads, smem, 1);
    if (resident <= 0)
      resident = ws.slots;
    if (ws.persistCap > 0)
      resident = std::min<int64_t>(resident, ws.persistCap);
    p.persistItems = int32_t(ws.items);
    grid = dim3(unsigned(std::min(ws.items, resident)), 1, 1);
  }
  STRATA_CUDA_RETURN_IF_ERROR(
      launchDependentClusters(kernel, grid, dim3(cfg.threads), smem, stream,
                              p.clusterMerge ? unsigned(ws.splits) : 1u, p),
      name);
  const bool mergeKernel =
      WG && ws.splits > 1 && !p.clusterMerge && !p.peerMerge;
  if constexpr (WG) {
    if (mergeKernel) {
      constexpr int ROWS = Tr::kRows, MT = 256;
      const int blocksPerTile = ROWS * D / 4 / MT;
      dim3 mgrid(unsigned(ws.rowTiles * blocksPerTile),
                 unsigned(dims.numKvHeads), unsigned(dims.batch));
      STRATA_CUDA_RETURN_IF_ERROR(
          ws.splits <= 8
              ? launchDependent(attentionMergeKernel<T, D, ROWS, 8>, mgrid,
                                dim3(MT), 0, stream, p, blocksPerTile)
              : launchDependent(attentionMergeKernel<T, D, ROWS, 17>, mgrid,
                                dim3(MT), 0, stream, p, blocksPerTile),
          name);
    }
  }
  taken.launched = true;
  taken.numSplits = ws.splits;
  taken.merge = ws.splits <= 1   ? AttentionMerge::None
                : !WG            ? AttentionMerge::LastBlock
                : p.clusterMerge ? AttentionMerge::Cluster
                : p.peerMerge    ? AttentionMerge::Peers
                                 : AttentionMerge::Kernel;
  taken.persistent = p.persistItems > 0;
  taken.blocks = int64_t(grid.x) * grid.y * grid.z;
  taken.tensorCopyRows = p.bulkRows;
  if (path)
    *path = taken;
  return Status::success();
}

/// Configuration Tr in the launch's dtype.
template <typename Tr>
Status launchTraits(const char *name, AttentionKind kind,
                    const AttentionDims &dims, const AttentionTensors &t,
                    const AttentionLaunch &launch, cudaStream_t stream,
                    AttentionPath *path) {
  return dims.dtype == ActDType::BF16
             ? launchConfig<__nv_bfloat16, Tr>(name, kind, dims, t, launch,
                                               stream, path)
             : launchConfig<__half, Tr>(name, kind, dims, t, launch, stream,
                                        path);
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONLAUNCH_CUH

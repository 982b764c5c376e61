// Host side shared by the attention launchers: entry checks, the split
// count, the workspace layout and the launch of one kernel configuration.
// Each launcher .cu instantiates only the configurations it uses, so the
// three translation units compile in parallel.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONLAUNCH_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONLAUNCH_CUH

#include "kernels/attention/Attention.h"
#include "kernels/attention/AttentionKernel.cuh"
#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/common/SmemLimit.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace strata::kernels::attention_detail {

/// Shape of a kernel configuration (see AttentionKernel.cuh).
struct Config {
  int wm, wn, kw, nst;
  int minBlocks;      // __launch_bounds__ minimum blocks per SM
  bool wgmma = false; // warpgroup MMA (sm_90a) instead of mma.sync
  int resident = 0; // blocks per SM, when registers (not shared memory) decide
  // wgmma: a producer warpgroup issues the copies beside the compute warps
  int threads() const { return 32 * wm * wn + (wgmma ? kProducerThreads : 0); }
  int rows() const { return 16 * wm; }
  // Bytes per element of the split partial outputs: T for rows items
  // (AttentionMerge.cuh says why), fp32 for decode.
  int partialBytes() const { return wgmma ? 2 : 4; }
  int stageKeys() const { return kw * wn; }
  size_t smemBytes(int headDim) const {
    // wgmma: room to align the stages; with 128-key stages the Q tile
    // follows them (AttentionKernel.cuh, QS)
    size_t stages = size_t(nst) * 2 * stageKeys() * headDim * 2 +
                    (wgmma ? 1024 : 0) +
                    (wgmma && kw == 128 ? size_t(rows()) * headDim * 2 : 0);
    // The blocks' ends reuse the stages (AttentionEpilogue.cuh): rows
    // merged in a cluster stage O as T and its log-sum-exps
    // (kRowsStageStride), decode every warp's fp32 O and its m and l.
    size_t warps = size_t(wm) * wn;
    size_t epilogue =
        wgmma ? size_t(rows()) * (headDim / 2 + 4 + 1) * 4
              : (warps * 16 * size_t(headDim + 8) + 2 * warps * 16) * 4;
    return std::max(stages, epilogue);
  }
};

/// Whether rows of this launch take 128-key stages (3 deep, Q in shared
/// memory) instead of 64-key ones (4 deep): for long prefills and extends
/// at headDim 128, where they were 7% faster at 8K tokens. Shorter
/// sequences lose more to the masked half of their last, diagonal tile
/// and to filling deeper stages (4 x 2048 tokens: 3-6% slower), and so
/// does a tree verify's split of a few tiles (4-5%).
inline bool rowsWide(AttentionKind kind, int headDim, int64_t maxQLen) {
  return headDim == 128 && maxQLen >= 4096 &&
         (kind == AttentionKind::Prefill || kind == AttentionKind::Extend);
}

/// The most 64-key stages of cached keys a split may have for its item's
/// new keys to go in slivers (rowsSlivers). Measured for 64-token trees
/// in 8 splits, in a graph: 3 stages a split 10.05 against 12.2 us, 5
/// 12.1 against 13.2, 9 15.8 against 15.9, 17 23.5 against 23.3.
constexpr int64_t kSliverMaxStages = 12;

/// Whether a tree verify or an extend on 64-key stages gives its split
/// items' new keys to the first splits in 16-key slivers
/// (AttentionKernel.cuh, SLIV): the switch is on, every item's new keys
/// fit one stage (at most 64 tokens a sequence), the launch splits, and a
/// split's cached keys are few stages (kSliverMaxStages), where the stage
/// the new keys add to the last split is much of a split's time. Over long
/// caches the slivers saved no time (docs/benchmarks.md). A chain tree and
/// an extend of the same bounds take the same path and stay equal bit for
/// bit.
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

/// Rows configuration on wgmma for prefill/extend/tree (one block of 384
/// threads per SM, by registers); key-split warps for decode, where
/// headDim 64 affords 32 keys per warp in the same shared memory.
inline Config configFor(AttentionKind kind, int headDim, int64_t maxQLen) {
  if (kind == AttentionKind::Decode)
    return headDim == 64 ? Config{1, 4, 32, 3, 1} : Config{1, 4, 16, 3, 1};
  return rowsWide(kind, headDim, maxQLen) ? Config{8, 1, 128, 3, 1, true, 1}
                                          : Config{8, 1, 64, 4, 1, true, 1};
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
/// Launches that merged their splits in clusters
/// (attentionClusterMergeLaunches) or by their own blocks
/// (attentionPeerMergeLaunches), persistent ones
/// (attentionPersistentLaunches) and those with new-key slivers
/// (attentionNewKeySliverLaunches).
extern std::atomic<uint64_t> clusterMergeLaunches, peerMergeLaunches,
    persistentLaunches, sliverLaunches;

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

template <typename T, int D, int WM, int WN, int KW, int NST, int MINB, bool WG,
          int TPR, bool SLIV = false>
Status launchConfig(const char *name, AttentionKind kind,
                    const AttentionDims &dims, const AttentionTensors &t,
                    const AttentionLaunch &launch, cudaStream_t stream) {
  // The workspace and the split count were planned from configFor: the
  // instantiated kernel must be that configuration.
  const Config cfg = configFor(kind, D, launch.maxQLen);
  if (cfg.wm != WM || cfg.wn != WN || cfg.kw != KW || cfg.nst != NST ||
      cfg.minBlocks != MINB || cfg.wgmma != WG)
    return Status::error(std::string(name) +
                         ": internal error: the launched kernel is not the "
                         "configuration the workspace was planned for");
  WorkspaceLayout ws = workspaceLayout(kind, dims, launch);
  if (dims.batch == 0 || ws.rowTiles == 0)
    return Status::success();
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
    setTileMaps(p, dims, t.cache, KW * WN);
  const size_t smem = cfg.smemBytes(D);
  auto kernel = attentionKernel<T, D, WM, WN, KW, NST, MINB, WG, TPR, SLIV>;
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
        ws.items <= maxActiveClusters(k, cfg.threads(), smem, ws.splits);
    p.peerMerge = ws.splits > 1 && !p.clusterMerge &&
                  attentionPeerMergeEnabled() &&
                  int64_t(grid.x) * grid.y * grid.z <=
                      maxActiveClusters(k, cfg.threads(), smem, 1);
  }
  p.peerWaitNs = int32_t(attentionPeerWaitNs());
  // Persistent (workspaceLayout's choice): a grid of the blocks the GPU
  // holds at once (the estimate where the query fails; a test may cap it),
  // each taking items in turn; the next item's Q and first tiles then load
  // under the current one's end.
  if (WG && ws.persist) {
    int64_t resident = maxActiveClusters(reinterpret_cast<const void *>(kernel),
                                         cfg.threads(), smem, 1);
    if (resident <= 0)
      resident = ws.slots;
    if (ws.persistCap > 0)
      resident = std::min<int64_t>(resident, ws.persistCap);
    p.persistItems = int32_t(ws.items);
    grid = dim3(unsigned(std::min(ws.items, resident)), 1, 1);
  }
  STRATA_CUDA_RETURN_IF_ERROR(
      launchDependentClusters(kernel, grid, dim3(cfg.threads()), smem, stream,
                              p.clusterMerge ? unsigned(ws.splits) : 1u, p),
      name);
  if (p.clusterMerge)
    clusterMergeLaunches.fetch_add(1, std::memory_order_relaxed);
  if (p.peerMerge)
    peerMergeLaunches.fetch_add(1, std::memory_order_relaxed);
  if (p.persistItems > 0)
    persistentLaunches.fetch_add(1, std::memory_order_relaxed);
  if (SLIV)
    sliverLaunches.fetch_add(1, std::memory_order_relaxed);
  if constexpr (WG) {
    if (ws.splits > 1 && !p.clusterMerge && !p.peerMerge) {
      constexpr int ROWS = 16 * WM, MT = 256;
      static_assert(ROWS * D / 4 % MT == 0, "whole merge blocks per tile");
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
  return Status::success();
}

/// Dispatch over dtype and head dim for one configuration (TPR: loader
/// threads per key row, AttentionKernel.cuh).
template <int WM, int WN, int KW, int NST, int NST64, int KW64, int MINB,
          bool WG, int TPR, bool SLIV = false>
Status launchAny(const char *name, AttentionKind kind,
                 const AttentionDims &dims, const AttentionTensors &t,
                 const AttentionLaunch &launch, cudaStream_t stream) {
  if (Status s = checkAttention(name, kind, dims, t, launch); !s)
    return s;
  const bool bf16 = dims.dtype == ActDType::BF16;
  if (dims.headDim == 128)
    return bf16 ? launchConfig<__nv_bfloat16, 128, WM, WN, KW, NST, MINB, WG,
                               TPR, SLIV>(name, kind, dims, t, launch, stream)
                : launchConfig<__half, 128, WM, WN, KW, NST, MINB, WG, TPR,
                               SLIV>(name, kind, dims, t, launch, stream);
  return bf16 ? launchConfig<__nv_bfloat16, 64, WM, WN, KW64, NST64, MINB, WG,
                             TPR, SLIV>(name, kind, dims, t, launch, stream)
              : launchConfig<__half, 64, WM, WN, KW64, NST64, MINB, WG, TPR,
                             SLIV>(name, kind, dims, t, launch, stream);
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONLAUNCH_CUH

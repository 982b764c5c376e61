// Entry checks, split count, workspace layout and cluster occupancy of
// the attention launchers (no kernel here).
#include "kernels/attention/AttentionLaunch.cuh"
#include "kernels/attention/AttentionSwitches.h"
#include "kernels/common/DeviceLimits.h"
#include "kernels/common/TensorMap.h"

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace strata::kernels {

namespace attention_detail {

namespace {

Status fail(const char *name, const std::string &message) {
  return Status::error(std::string(name) + ": " + message);
}

bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

/// The split count only shapes the grid: when the device cannot be queried
/// (the launch then fails with CUDA's own error) it plans for 132 SMs.
int smCount() {
  DeviceLimits d;
  return currentDeviceLimits(d) ? d.sms : 132;
}

size_t alignUp(size_t x) { return (x + 255) / 256 * 256; }

std::atomic<bool> persistent{true};       // attentionPersistentEnabled
std::atomic<int32_t> persistentBlocks{0}; // attentionPersistentBlocks

/// Blocks of this configuration that one wave holds: what the split count
/// fills.
int64_t blockSlots(const Config &cfg) {
  const size_t perSm = 227 * 1024;
  int blocksPerSm = int(std::max<size_t>(
      1, std::min<size_t>(3, perSm / (cfg.smemBytes + 1024))));
  if (cfg.resident > 0)
    blocksPerSm = std::min(blocksPerSm, cfg.resident);
  return int64_t(smCount()) * blocksPerSm;
}

/// Bytes of the workspace for `items` work items of `splits` splits each.
size_t workspaceBytes(const Config &cfg, int64_t items, int64_t splits) {
  const size_t partRows = size_t(items) * splits * cfg.rows;
  return alignUp(size_t(items) * 4) + alignUp(partRows * 4) +
         partRows * cfg.headDim * cfg.partialBytes;
}

} // namespace

Status checkAttention(const char *name, AttentionKind kind,
                      const AttentionDims &d, const AttentionTensors &t,
                      const AttentionLaunch &launch) {
  if (Status s = requireDeviceActDType(name, d.dtype); !s)
    return s;
  if (d.batch < 0 || d.batch > 65535)
    return fail(name,
                "batch " + std::to_string(d.batch) + " must be in [0, 65535]");
  if (d.headDim != 64 && d.headDim != 128)
    return fail(name,
                "headDim " + std::to_string(d.headDim) + " must be 64 or 128");
  if (d.numQHeads <= 0 || d.numKvHeads <= 0 || d.numQHeads % d.numKvHeads != 0)
    return fail(name, "numQHeads " + std::to_string(d.numQHeads) +
                          " must be a positive multiple of numKvHeads " +
                          std::to_string(d.numKvHeads));
  // The kernel takes row maxima over unscaled scores (see softmaxTile).
  if (!(d.scale > 0.f) || !std::isfinite(d.scale))
    return fail(name, "scale must be a positive finite number, got " +
                          std::to_string(d.scale));
  if (d.slidingWindow < 0)
    return fail(name, "slidingWindow must be >= 0, got " +
                          std::to_string(d.slidingWindow));
  if (!t.q || !t.out || !t.cuQLens || !t.kvLens || !t.cache.k)
    return fail(name, "q, out, cuQLens, kvLens and the cache must be given");
  if (!aligned16(t.q) || !aligned16(t.out) || !aligned16(t.cache.k) ||
      !aligned16(t.cache.v))
    return fail(name, "q, out, K and V must be 16-byte aligned");
  const KvCacheView &c = t.cache;
  if (c.layout == KvCacheLayout::Paged) {
    if (!c.v || !c.blockTables || c.blockSize <= 0 || c.numBlocks < 0 ||
        c.maxBlocksPerSeq <= 0 || c.maxBlocksPerSeq > INT32_MAX ||
        c.blockSize > INT32_MAX)
      return fail(name, "a paged cache needs V, block tables, blockSize > 0 "
                        "and maxBlocksPerSeq > 0");
    if (c.blockStride % 8 != 0)
      return fail(name, "blockStride must be a multiple of 8 elements");
  } else if (c.capacity <= 0) {
    return fail(name, "a contiguous cache needs capacity > 0");
  }
  const bool tree = kind == AttentionKind::Tree;
  if (tree != (t.parentIds != nullptr))
    return fail(name, tree ? "tree attention needs parentIds"
                           : "parentIds is only taken by attentionTree");
  if (!tree && t.positions)
    return fail(name, "positions are only taken by attentionTree");
  if (launch.maxQLen < 1 || launch.maxQLen > (int64_t(1) << 24))
    return fail(name, "maxQLen " + std::to_string(launch.maxQLen) +
                          " must be in [1, 2^24]");
  if (kind == AttentionKind::Decode && launch.maxQLen != 1)
    return fail(name, "decode takes one query per sequence (maxQLen 1), got " +
                          std::to_string(launch.maxQLen));
  if (launch.maxKvLen < 0 || launch.maxKvLen > INT32_MAX)
    return fail(name, "maxKvLen must be in [0, 2^31)");
  if (launch.numSplits < 0 || launch.numSplits > 1024)
    return fail(name, "numSplits must be in [0, 1024]");
  WorkspaceLayout ws = workspaceLayout(kind, d, launch);
  if ((ws.splits > 1 || ws.persist) &&
      (!launch.workspace || launch.workspaceBytes < ws.bytes ||
       !aligned16(launch.workspace)))
    return fail(name, (ws.persist ? std::string("a persistent launch")
                                  : "split-KV over " +
                                        std::to_string(ws.splits) + " splits") +
                          " needs a 16-byte aligned workspace of " +
                          std::to_string(ws.bytes) + " bytes, got " +
                          std::to_string(launch.workspaceBytes));
  return Status::success();
}

WorkspaceLayout workspaceLayout(AttentionKind kind, const AttentionDims &d,
                                const AttentionLaunch &launch) {
  WorkspaceLayout ws;
  const Config cfg = configFor(kind, d.headDim, launch.maxQLen);
  const int64_t group =
      d.numKvHeads > 0 ? std::max(1, d.numQHeads / d.numKvHeads) : 1;
  ws.rowTiles =
      (std::max<int64_t>(launch.maxQLen, 0) * group + cfg.rows - 1) /
      cfg.rows;
  ws.items = d.batch * d.numKvHeads * ws.rowTiles;
  int32_t splits = launch.numSplits;
  if (splits == 0) {
    // Enough blocks for one full wave; no split shorter than two stages.
    const int64_t target = blockSlots(cfg);
    const int64_t byLength =
        std::max<int64_t>(1, launch.maxKvLen / (2 * cfg.stageKeys));
    // At most one wave: with fewer items than block slots, split each item
    // so that the items fill the slots; otherwise whole waves as they come.
    splits = 1;
    if (ws.items > 0 && ws.items < target)
      splits = int32_t(std::max<int64_t>(
          1, std::min<int64_t>({target / ws.items, byLength, 256})));
  }
  ws.splits = std::max(1, splits);
  ws.slots = blockSlots(cfg);
  // Rows on 128-key stages, one split and more items than a wave holds (or
  // than a test's cap on the grid): a persistent grid, whose two counters
  // are the workspace.
  ws.persistCap = persistentBlocks.load(std::memory_order_relaxed);
  const int64_t wave =
      ws.persistCap > 0 ? std::min<int64_t>(ws.slots, ws.persistCap) : ws.slots;
  if (ws.splits == 1 && cfg.qInSmem && ws.items > wave &&
      ws.items <= INT32_MAX && persistent.load(std::memory_order_relaxed)) {
    ws.persist = true;
    ws.countersOff = 0;
    ws.bytes = alignUp(2 * sizeof(int32_t));
  }
  if (ws.splits > 1) {
    const size_t rows = size_t(ws.items) * ws.splits * cfg.rows;
    ws.countersOff = 0;
    ws.lseOff = alignUp(size_t(ws.items) * 4);
    ws.oOff = ws.lseOff + alignUp(rows * 4);
    ws.bytes = workspaceBytes(cfg, ws.items, ws.splits);
  }
  return ws;
}

namespace {
std::atomic<bool> tensorCopies{true};
std::atomic<bool> clusterMerge{true};
std::atomic<bool> peerMerge{true};
std::atomic<bool> newKeySlivers{true};
std::atomic<uint32_t> peerWaitNs{2000000};
} // namespace

int maxActiveClusters(const void *kernel, int threads, size_t smem,
                      int clusterX) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess)
    return 0;
  using Key = std::tuple<int, const void *, int, size_t, int>;
  static std::mutex mutex;
  static std::map<Key, int> known;
  const Key key{device, kernel, threads, smem, clusterX};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(key); it != known.end())
    return it->second;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(clusterX));
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = unsigned(clusterX);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) !=
      cudaSuccess) {
    (void)cudaGetLastError(); // the query's error is not the stream's
    clusters = 0;
  }
  known.emplace(key, clusters);
  return clusters;
}

void setCacheGeometry(AttnParams &p, const AttentionDims &dims,
                      const KvCacheView &c) {
  p.numBlocks = c.numBlocks;
  p.blockStride = c.blockStride
                      ? c.blockStride
                      : int64_t(dims.numKvHeads) * c.blockSize * dims.headDim;
  p.capacity = c.capacity;
  p.blockSize = int32_t(std::max<int64_t>(c.blockSize, 1));
  p.blockShift = -1;
  for (int shift = 0; shift < 31; ++shift)
    if (int64_t(1) << shift == p.blockSize)
      p.blockShift = shift;
  p.maxBlocksPerSeq = int32_t(c.maxBlocksPerSeq);
}

void setTileMaps(AttnParams &p, const AttentionDims &dims, const KvCacheView &c,
                 int stageKeys) {
  p.bulkRows = 0;
  if (!tensorCopies.load(std::memory_order_relaxed))
    return;
  // A box is 64 elements (128 bytes, one swizzle span) of bulkRows slots
  // of one head: paged, at most a page (boxes start at page boundaries or
  // stage-sized steps within one); contiguous, a whole stage.
  const uint64_t D = uint64_t(dims.headDim), H = uint64_t(dims.numKvHeads);
  if (c.layout == KvCacheLayout::Paged) {
    if (p.blockShift < 0 || p.blockSize < 8 || c.numBlocks < 1)
      return;
    const int32_t rows = std::min(p.blockSize, int32_t(stageKeys));
    const uint64_t bs = uint64_t(p.blockSize);
    const uint64_t extent[4] = {D, bs, H, uint64_t(c.numBlocks)};
    const uint64_t strides[3] = {D * 2, bs * D * 2,
                                 uint64_t(p.blockStride) * 2};
    const uint32_t box[4] = {64, uint32_t(rows), 1, 1};
    if (!encodeSwizzledMap2B(p.kMap, c.k, 4, extent, strides, box) ||
        !encodeSwizzledMap2B(p.vMap, c.v, 4, extent, strides, box))
      return;
    p.bulkRows = rows;
    return;
  }
  const uint64_t cap = uint64_t(c.capacity);
  const uint64_t extent[4] = {D, cap, H, 2 * uint64_t(dims.batch)};
  const uint64_t strides[3] = {D * 2, cap * D * 2, H * cap * D * 2};
  const uint32_t box[4] = {64, uint32_t(stageKeys), 1, 1};
  if (!encodeSwizzledMap2B(p.kMap, c.k, 4, extent, strides, box))
    return;
  p.vMap = p.kMap; // V of sequence b is plane 2 b + 1
  p.bulkRows = stageKeys;
}

} // namespace attention_detail

bool attentionTensorCopiesEnabled() {
  return attention_detail::tensorCopies.load(std::memory_order_relaxed);
}

void setAttentionTensorCopiesEnabled(bool enabled) {
  attention_detail::tensorCopies.store(enabled, std::memory_order_relaxed);
}

bool attentionClusterMergeEnabled() {
  return attention_detail::clusterMerge.load(std::memory_order_relaxed);
}

void setAttentionClusterMergeEnabled(bool enabled) {
  attention_detail::clusterMerge.store(enabled, std::memory_order_relaxed);
}

bool attentionPeerMergeEnabled() {
  return attention_detail::peerMerge.load(std::memory_order_relaxed);
}

void setAttentionPeerMergeEnabled(bool enabled) {
  attention_detail::peerMerge.store(enabled, std::memory_order_relaxed);
}

uint32_t attentionPeerWaitNs() {
  return attention_detail::peerWaitNs.load(std::memory_order_relaxed);
}

void setAttentionPeerWaitNs(uint32_t ns) {
  attention_detail::peerWaitNs.store(std::min<uint32_t>(ns, INT32_MAX),
                                     std::memory_order_relaxed);
}

bool attentionNewKeySliversEnabled() {
  return attention_detail::newKeySlivers.load(std::memory_order_relaxed);
}

void setAttentionNewKeySliversEnabled(bool enabled) {
  attention_detail::newKeySlivers.store(enabled, std::memory_order_relaxed);
}

bool attentionPersistentEnabled() {
  return attention_detail::persistent.load(std::memory_order_relaxed);
}

void setAttentionPersistentEnabled(bool enabled) {
  attention_detail::persistent.store(enabled, std::memory_order_relaxed);
}

int32_t attentionPersistentBlocks() {
  return attention_detail::persistentBlocks.load(std::memory_order_relaxed);
}

void setAttentionPersistentBlocks(int32_t blocks) {
  attention_detail::persistentBlocks.store(std::max(blocks, 0),
                                           std::memory_order_relaxed);
}

const char *attentionConfigName(AttentionConfig config) {
  switch (config) {
  case AttentionConfig::PagedDecode:
    return "PagedDecode";
  case AttentionConfig::PrefillExtend:
    return "PrefillExtend";
  case AttentionConfig::ExtendSlivers:
    return "ExtendSlivers";
  case AttentionConfig::TreeVerify:
    return "TreeVerify";
  case AttentionConfig::TreeVerifySlivers:
    return "TreeVerifySlivers";
  case AttentionConfig::LongPrefillExtend:
    return "LongPrefillExtend";
  }
  return "unknown";
}

int32_t attentionTensorCopyRows(AttentionKind kind, const AttentionDims &dims,
                                const KvCacheView &cache, int64_t maxQLen) {
  using namespace attention_detail;
  const Config cfg = configFor(kind, dims.headDim, maxQLen);
  if (!cfg.wgmma)
    return 0;
  AttnParams p{};
  setCacheGeometry(p, dims, cache);
  setTileMaps(p, dims, cache, cfg.stageKeys);
  return p.bulkRows;
}

int32_t attentionNumSplits(AttentionKind kind, const AttentionDims &dims,
                           const AttentionLaunch &launch) {
  return attention_detail::workspaceLayout(kind, dims, launch).splits;
}

size_t attentionWorkspaceBytes(AttentionKind kind, const AttentionDims &dims,
                               const AttentionLaunch &launch) {
  return attention_detail::workspaceLayout(kind, dims, launch).bytes;
}

size_t attentionWorkspaceBound(AttentionKind kind, const AttentionDims &dims) {
  using namespace attention_detail;
  // The launcher splits only when the items are fewer than the block slots
  // of a wave, and then into at most slots / items splits: items * splits
  // never exceeds the slots. Both stage shapes of the rows configuration
  // (maxQLen below and from 4096) are covered.
  size_t bound = 0;
  for (int64_t maxQLen : {int64_t(1), int64_t(4096)}) {
    const Config cfg = configFor(kind, dims.headDim, maxQLen);
    const int64_t slots = blockSlots(cfg);
    bound = std::max(bound, workspaceBytes(cfg, slots, 1));
  }
  // A persistent grid's two counters (prefill and extend, 128-key stages).
  if (kind == AttentionKind::Prefill || kind == AttentionKind::Extend)
    bound = std::max(bound, attention_detail::alignUp(2 * sizeof(int32_t)));
  return bound;
}

} // namespace strata::kernels

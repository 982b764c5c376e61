// Softmax attention over the KV cache on tensor cores: prefill, extend,
// paged decode and tree verify, four named launchers over one templated
// kernel (kernels/attention/AttentionKernel.cuh). The operands and their
// meaning are those of the CPU reference (kernels/common/AttentionTypes.h,
// kernels/cpu/AttentionRef.h); every launcher computes what attentionRef
// computes, up to fp32 summation order and the rounding of the softmax
// weights to T before they multiply V.
//
// Common to every launcher:
//  - T = dims.dtype (BF16 or FP16) for q, out and the cache; math is fp32.
//  - q    T [totalQ, numQHeads, headDim]; row r of sequence b is
//         cuQLens[b] + r. out has the same shape; rows of every sequence
//         are written, nothing else is.
//  - cuQLens int32 [batch + 1], kvLens int32 [batch], device memory. They
//         are read by the kernel, so one captured graph serves every step
//         whose lengths stay within the maxQLen / maxKvLen it was built for.
//         They, positions and block tables are step inputs no kernel may
//         write: under a dependent launch (Pdl.cuh) they are read before
//         the wait for the previous kernel. Decode, extend and tree verify
//         also copy cached slots (those before the sequence's new tokens)
//         before that wait: the kernel launched right before it may write
//         the new tokens' slots (rope_kv_write does), never older ones.
//  - cache: paged ([numBlocks][numKvHeads, blockSize, headDim] pools with
//         int32 block tables [batch, maxBlocksPerSeq]) or contiguous
//         ([batch, 2, numKvHeads, capacity, headDim]); see RopeKvTypes.h.
//         Any block size >= 1 works. A visible slot without storage (block
//         id outside [0, numBlocks), logical block beyond the table, slot
//         beyond the capacity) reads as zeros; the reference rejects it.
//  - headDim 64 or 128; numQHeads a multiple of numKvHeads (GQA: the q
//         heads of one kv head are processed together, so K and V are read
//         once per kv head); scale (> 0) multiplies q.k; slidingWindow 0 or W
//         (a query at position p sees keys at p - W + 1 .. p).
//  - All pointers device memory, 16-byte aligned. Launches are
//         asynchronous on `stream`, never synchronise, and are safe inside
//         CUDA graph capture.
//  - A failed Status, nothing launched, when shapes, pointers or the
//         workspace are wrong; a failed Status naming the CUDA error when a
//         launch fails.
//
// Split-KV. Each (sequence, kv head, tile of query rows) is a work item;
// when there are too few to fill the GPU, the keys of an item are split
// into `numSplits` ranges computed by separate blocks, each writing its
// partial output and log-sum-exp to the workspace. Decode: the last block
// of an item to finish (an atomic counter per item) merges them and resets
// the counter. Prefill, extend and tree: the item's blocks, one cluster,
// merge them through their shared memory (attentionClusterMergeEnabled);
// else, where the GPU holds the whole grid at once, the item's blocks
// merge them from the workspace once all have stored theirs
// (attentionPeerMergeEnabled); else a second kernel, launched right after
// on the same stream, does. The split count is fixed at launch
// (the grid is sized for it); each block derives its key range from the kvLens
// it reads, so shorter contexts leave trailing splits empty.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTION_H
#define STRATA_KERNELS_ATTENTION_ATTENTION_H

#include "kernels/common/AttentionTypes.h"
#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace strata::kernels {

/// Launch-time bounds and the split-KV workspace.
struct AttentionLaunch {
  /// Upper bound of any sequence's query count in this launch (1 for
  /// decode). Sizes the grid; larger sequences are not fully computed.
  int64_t maxQLen = 0;
  /// Upper bound of kvLens; picks the split count when numSplits is 0.
  int64_t maxKvLen = 0;
  /// 0: chosen from the work items, maxKvLen and the SM count so that the
  /// GPU is filled. 1: no split (no workspace needed, unless the launch
  /// runs persistent: attentionPersistentEnabled).
  int32_t numSplits = 0;
  /// Device memory of attentionWorkspaceBytes() bytes, zero-filled once
  /// when allocated (every launch leaves its counters at zero again). May
  /// be null when attentionWorkspaceBytes() is 0.
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
};

/// Which kernel configuration a launcher uses; exposed for the workspace
/// query and for benchmarks.
enum class AttentionKind : uint8_t { Prefill, Extend, Decode, Tree };

/// The split count a launch of `kind` will use for these dims and bounds
/// (resolving numSplits == 0), on the current device.
int32_t attentionNumSplits(AttentionKind kind, const AttentionDims &dims,
                           const AttentionLaunch &launch);

/// Workspace bytes a launch of `kind` needs (0 when it neither splits nor
/// runs persistent).
size_t attentionWorkspaceBytes(AttentionKind kind, const AttentionDims &dims,
                               const AttentionLaunch &launch);

/// The most workspace any launch of `kind` with these heads and head dim
/// can need when the launcher picks the split count (numSplits 0), for any
/// batch and lengths: one allocation serves every step (dims.batch is not
/// read).
size_t attentionWorkspaceBound(AttentionKind kind, const AttentionDims &dims);

/// Prefill: kvLens[b] == qLen of sequence b (empty cache before the step);
/// causal. t.parentIds must be null.
Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream);

/// Extend (chunked prefill onto a cache): queries see the kvLens[b] - qLen
/// cached slots and causally each other. t.parentIds must be null.
Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream);

/// Paged decode: one query per sequence (launch.maxQLen must be 1). Four
/// warps split each key tile among themselves, then split-KV across blocks.
Status attentionDecode(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream);

/// Tree verify: t.parentIds [totalQ] (parent index among the sequence's
/// queries, -1 for a root, parents before children) is required;
/// t.positions [totalQ] optional (sliding-window positions of the queries
/// and of their cache slots). A chain (parent i - 1) equals extend.
Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream);

/// Prefill, extend and tree verify copy whole K and V tiles with tensor
/// copies (the copy engine, through tensor maps of the cache) where the
/// cache allows: a paged cache with a power-of-two block size of 8 or
/// more, or a contiguous one. Other caches, tiles that end past their key
/// range and paged tiles that start inside a page (a window's first) go
/// by cp.async. On by default; the switch (process-wide, read at launch)
/// lets tests and benchmarks run the cp.async path alone.
bool attentionTensorCopiesEnabled();
void setAttentionTensorCopiesEnabled(bool enabled);

/// Slots per tensor copy that a launch of `kind` bounded by maxQLen would
/// use on this cache (a page, or a stage of a contiguous cache); 0 when
/// all its tiles would go by cp.async (decode, the switch off, a cache
/// the maps cannot describe, or a map the driver refused to encode). The
/// maps are encoded as a launch encodes them. For tests and benchmarks.
int32_t attentionTensorCopyRows(AttentionKind kind, const AttentionDims &dims,
                                const KvCacheView &cache, int64_t maxQLen);

/// Prefill, extend and tree verify merge the splits of a work item (2 to
/// 8 of them) inside one cluster of blocks, through shared memory, where
/// every item's cluster fits on the GPU at once; otherwise, and with this
/// switch off, a merge kernel follows. On by default; the switch
/// (process-wide, read at launch) lets tests and benchmarks run the merge
/// kernel.
bool attentionClusterMergeEnabled();
void setAttentionClusterMergeEnabled(bool enabled);
/// Launches so far in this process whose splits were merged in clusters;
/// tests check with it which merge a launch took.
uint64_t attentionClusterMergeLaunches();

/// Where clusters do not merge them, the splits of a rows item are merged
/// by the item's own blocks through the workspace, each block waiting for
/// its siblings' partials, when the GPU holds every block of the launch
/// at once; otherwise, and with this switch off, by the merge kernel. On
/// by default; for tests and benchmarks, as above.
bool attentionPeerMergeEnabled();
void setAttentionPeerMergeEnabled(bool enabled);
/// Launches so far in this process whose splits were merged by their own
/// blocks.
uint64_t attentionPeerMergeLaunches();

/// Split tree verifies and extends of at most 64 tokens a sequence whose
/// splits hold few stages of cached keys (at most 12 of 64 keys each) cut
/// only their cached keys into splits; the new keys go in 16-key slivers
/// to splits 0, 1, ..., each taking one after its own keys. In the last
/// split they made it a stage longer than the others (a 64-token tree
/// over 1K: 10.0 against 12.2 us in a graph). On by default; the switch
/// (process-wide, read at launch) lets tests and benchmarks run the new
/// keys in the last split.
bool attentionNewKeySliversEnabled();
void setAttentionNewKeySliversEnabled(bool enabled);
/// Launches so far in this process that took new-key slivers.
uint64_t attentionNewKeySliverLaunches();

/// Long prefills and extends (128-key stages) of one split with more work
/// items (128 query rows of one kv head) than the GPU holds blocks run
/// persistent: a grid of the blocks it holds at once, each taking the next
/// item not yet taken from a counter in the workspace (two int32, reset by
/// the launch's last block). On by default; the switch (process-wide, read
/// at launch) lets tests and benchmarks run one block per item.
bool attentionPersistentEnabled();
void setAttentionPersistentEnabled(bool enabled);
/// Launches so far in this process that ran persistent.
uint64_t attentionPersistentLaunches();
/// The most blocks a persistent grid takes (process-wide, read at launch;
/// 0, the default: as many as the GPU holds at once). A launch with more
/// items than this runs persistent, so that tests make a few blocks take
/// many items at sizes compute-sanitizer gets through.
int32_t attentionPersistentBlocks();
void setAttentionPersistentBlocks(int32_t blocks);
/// How long such a block waits for its siblings before it leaves its rows
/// to the last of them to arrive (default 2 ms, at most 2^31 - 1 ns):
/// where the GPU is shared with other work and a sibling cannot start, a
/// slower merge rather than a wait without end. Tests shorten it to run
/// that path.
uint32_t attentionPeerWaitNs();
void setAttentionPeerWaitNs(uint32_t ns);

/// One block's time marks (AttentionTrace.cuh): %globaltimer ns at its
/// start, when its first key tile had landed, at the end of its main loop
/// and at its end; its SM and its key tiles. Blocks without rows (and, in
/// a rows launch, blocks without tiles) leave firstTileNs 0.
struct AttentionTraceBlock {
  uint64_t startNs = 0, firstTileNs = 0, loopEndNs = 0, endNs = 0;
  int32_t sm = 0, tiles = 0;
};
/// Blocks a launch records, by linear block index (x fastest).
constexpr int64_t kAttentionTraceBlocks = 8192;

/// Copies the records of the first `blocks` blocks of the last launch of
/// `kind` (decode, or the rows kernels of prefill, extend and tree, which
/// share one record) to `out` (host memory), after synchronising the
/// device. Only a build with the CMake option STRATA_ATTENTION_TRACE
/// records; any other build returns a failed Status saying so. Blocks that
/// did not run in that launch keep older records: clear them first with
/// attentionTraceClear.
Status attentionTrace(AttentionKind kind, AttentionTraceBlock *out,
                      int64_t blocks);
/// Zeroes the records of `kind`'s kernels (same builds as attentionTrace).
Status attentionTraceClear(AttentionKind kind);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ATTENTION_ATTENTION_H

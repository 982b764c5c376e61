// Softmax attention over the KV cache on tensor cores: prefill, extend,
// paged decode and tree verify, four named launchers over two kernels
// (kernels/attention/AttentionDecodeKernel.cuh for decode,
// AttentionRowsKernel.cuh for the others), each instantiated on the named
// configurations of AttentionTraits.cuh. The operands and their
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
  /// runs persistent: AttentionPath::persistent).
  int32_t numSplits = 0;
  /// Device memory of attentionWorkspaceBytes() bytes, zero-filled once
  /// when allocated (every launch leaves its counters at zero again). May
  /// be null when attentionWorkspaceBytes() is 0.
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
};

/// Which launcher: the phase a launch serves. Exposed for the workspace
/// query and for benchmarks.
enum class AttentionKind : uint8_t { Prefill, Extend, Decode, Tree };

/// The kernel configurations behind the launchers, by what each is for
/// (AttentionTraits.cuh holds their tile shapes and invariants).
enum class AttentionConfig : uint8_t {
  /// Decode: 16 rows a block, four warps splitting each stage's keys.
  PagedDecode,
  /// Prefill and extend: 128 rows a block on 64-key stages.
  PrefillExtend,
  /// Split extends of at most 64 tokens a sequence over few cached
  /// stages: PrefillExtend with the new keys in 16-key slivers spread over
  /// the first splits.
  ExtendSlivers,
  /// Tree verify: 128 rows a block on 64-key stages.
  TreeVerify,
  /// Split tree verifies of at most 64 tokens a sequence over few cached
  /// stages: TreeVerify with the new keys in slivers.
  TreeVerifySlivers,
  /// Prefill and extend of maxQLen >= 4096 at headDim 128: 128-key
  /// stages, persistent when the items outnumber the blocks the GPU holds.
  LongPrefillExtend,
};

/// The configuration's name as written above ("PagedDecode", ...).
const char *attentionConfigName(AttentionConfig config);

/// How the partial results of a launch's splits were merged.
enum class AttentionMerge : uint8_t {
  None,      ///< one split: nothing to merge
  LastBlock, ///< decode: by the last block of each item to finish
  Cluster,   ///< rows: by the item's blocks, one cluster, in shared memory
  Peers,     ///< rows: by the item's blocks through the workspace
  Kernel,    ///< rows: by a merge kernel launched right after
};

/// The path a launch took, filled by a launcher that succeeded: which
/// configuration ran, over how many splits and blocks, how its splits
/// were merged, whether it ran persistent and how its tiles were copied.
struct AttentionPath {
  AttentionConfig config = AttentionConfig::PagedDecode;
  /// False when there was nothing to compute (batch 0): no kernel was
  /// launched, and the fields below keep their defaults.
  bool launched = false;
  int32_t numSplits = 1;
  AttentionMerge merge = AttentionMerge::None;
  /// A persistent grid: fewer blocks than items, each taking items in turn.
  bool persistent = false;
  /// Blocks of the attention kernel's grid.
  int64_t blocks = 0;
  /// Slots per tensor copy of whole K and V tiles; 0: every tile went by
  /// cp.async (always for decode).
  int32_t tensorCopyRows = 0;
};

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

/// Every launcher writes the path it took to `path` when one is given and
/// the launch succeeds.
///
/// Prefill: kvLens[b] == qLen of sequence b (empty cache before the step);
/// causal. t.parentIds must be null.
Status attentionPrefill(const AttentionDims &dims, const AttentionTensors &t,
                        const AttentionLaunch &launch, cudaStream_t stream,
                        AttentionPath *path = nullptr);

/// Extend (chunked prefill onto a cache): queries see the kvLens[b] - qLen
/// cached slots and causally each other. t.parentIds must be null.
Status attentionExtend(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream,
                       AttentionPath *path = nullptr);

/// Paged decode: one query per sequence (launch.maxQLen must be 1). Four
/// warps split each key tile among themselves, then split-KV across blocks.
Status attentionDecode(const AttentionDims &dims, const AttentionTensors &t,
                       const AttentionLaunch &launch, cudaStream_t stream,
                       AttentionPath *path = nullptr);

/// Tree verify: t.parentIds [totalQ] (parent index among the sequence's
/// queries, -1 for a root, parents before children) is required;
/// t.positions [totalQ] optional (sliding-window positions of the queries
/// and of their cache slots). A chain (parent i - 1) equals extend.
Status attentionTree(const AttentionDims &dims, const AttentionTensors &t,
                     const AttentionLaunch &launch, cudaStream_t stream,
                     AttentionPath *path = nullptr);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ATTENTION_ATTENTION_H

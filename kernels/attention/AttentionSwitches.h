// Process-wide switches of the attention launchers' paths, for tests and
// benchmarks that run one path alone. Each is read at launch; every one
// is on by default, which is what the engine runs. Which path a launch
// took comes back in its AttentionPath (Attention.h).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONSWITCHES_H
#define STRATA_KERNELS_ATTENTION_ATTENTIONSWITCHES_H

#include "kernels/attention/Attention.h"

#include <cstdint>

namespace strata::kernels {

/// Prefill, extend and tree verify copy whole K and V tiles with tensor
/// copies (the copy engine, through tensor maps of the cache) where the
/// cache allows: a paged cache with a power-of-two block size of 8 or
/// more, or a contiguous one. Other caches, tiles that end past their key
/// range and paged tiles that start inside a page (a window's first) go
/// by cp.async. Off: every tile goes by cp.async.
bool attentionTensorCopiesEnabled();
void setAttentionTensorCopiesEnabled(bool enabled);

/// Slots per tensor copy that a launch of `kind` bounded by maxQLen would
/// use on this cache (a page, or a stage of a contiguous cache); 0 when
/// all its tiles would go by cp.async (decode, the switch off, a cache
/// the maps cannot describe, or a map the driver refused to encode). The
/// maps are encoded as a launch encodes them.
int32_t attentionTensorCopyRows(AttentionKind kind, const AttentionDims &dims,
                                const KvCacheView &cache, int64_t maxQLen);

/// Prefill, extend and tree verify merge the splits of a work item (2 to
/// 8 of them) inside one cluster of blocks, through shared memory, where
/// every item's cluster fits on the GPU at once. Off: the next merge that
/// applies (AttentionMerge::Peers, else Kernel).
bool attentionClusterMergeEnabled();
void setAttentionClusterMergeEnabled(bool enabled);

/// Where clusters do not merge them, the splits of a rows item are merged
/// by the item's own blocks through the workspace, each block waiting for
/// its siblings' partials, when the GPU holds every block of the launch
/// at once. Off: the merge kernel.
bool attentionPeerMergeEnabled();
void setAttentionPeerMergeEnabled(bool enabled);

/// Split tree verifies and extends of at most 64 tokens a sequence whose
/// splits hold few stages of cached keys cut only their cached keys into
/// splits; the new keys go in 16-key slivers to splits 0, 1, ..., each
/// taking one after its own keys, instead of making the last split a
/// stage longer than the others. Off: the new keys in the last split.
bool attentionNewKeySliversEnabled();
void setAttentionNewKeySliversEnabled(bool enabled);

/// Long prefills and extends (128-key stages) of one split with more work
/// items (128 query rows of one kv head) than the GPU holds blocks run
/// persistent: a grid of the blocks it holds at once, each taking the next
/// item not yet taken from a counter in the workspace (two int32, reset by
/// the launch's last block). Off: one block per item.
bool attentionPersistentEnabled();
void setAttentionPersistentEnabled(bool enabled);
/// The most blocks a persistent grid takes (0, the default: as many as
/// the GPU holds at once). A launch with more items than this runs
/// persistent, so that tests make a few blocks take many items at sizes
/// compute-sanitizer gets through.
int32_t attentionPersistentBlocks();
void setAttentionPersistentBlocks(int32_t blocks);

/// How long a block merging with its peers waits for its siblings before
/// it leaves its rows to the last of them to arrive (default 2 ms, at
/// most 2^31 - 1 ns): where the GPU is shared with other work and a
/// sibling cannot start, a merge by one block rather than a wait without
/// end. Tests shorten it to run that path.
uint32_t attentionPeerWaitNs();
void setAttentionPeerWaitNs(uint32_t ns);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONSWITCHES_H

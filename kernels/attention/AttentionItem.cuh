// Work items of the attention kernels (AttentionDecodeKernel.cuh,
// AttentionRowsKernel.cuh): where a block's
// item lies in the grid (locateItem) and its rows and key range (setItem).
// An item is one row tile of one kv head of one sequence, and with
// split-KV one split of its keys. The producer warpgroup and the compute
// warps each hold their own AttnItem; a persistent block's producer walks
// its items and hands each to the compute warps through shared memory.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONITEM_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONITEM_CUH

#include "kernels/attention/AttentionDevice.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// An item's place: row tile, split, kv head, sequence.
struct ItemPlace {
  int rowTile, split, kvHead;
  int64_t seq;
};

/// An item's rows and keys (setItem). Rows [row0, row0 + ROWS) of the
/// item's rowsTotal (new tokens * group); keys [ks, ke) in nTiles stages;
/// prefix: the cached slots before the new tokens; newKeys: new keys
/// given to slivers (SLIV). headRow, contigRow:
/// the kv head's rows in a page, the sequence's in a contiguous cache.
/// pos: the tree's positions of the new tokens, or null. tileBase: stages
/// of a persistent block's earlier items.
struct AttnItem {
  ItemPlace at;
  int32_t qBegin, prefix, rowsTotal, row0, ks, ke, nTiles, newKeys;
  int64_t headRow, contigRow;
  const int32_t *pos = nullptr;
  int32_t tileBase = 0;
};

/// A persistent block's producer hands each item to the compute warps
/// through slot k % 2 of these fields (itemBar + 8 * (k % 2) completes
/// when item k is written; a negative row tile: no more items), so that
/// they start it without global loads or divisions of their own.
enum ItemSlot : int {
  kRowTile,
  kSplit,
  kKvHead,
  kSeq,
  kQBegin,
  kPrefix,
  kRows,
  kKs,
  kKe,
  kTiles,
  kTileBase,
  kSlotInts
};

/// Places item L (persistent) or the block's item; false when there is no
/// such item. Grid: see attentionRowsKernel and attentionDecodeKernel.
__device__ __forceinline__ bool locateItem(const AttnParams &p, int32_t L,
                                           bool persist, bool clustered,
                                           ItemPlace &at) {
  // Without branches: each would make the persistent loops' control flow
  // look divergent to the compiler, which then keeps their uniform
  // values (stage addresses, descriptors) in ordinary registers.
  const int32_t j = int32_t(blockIdx.x), x = L % p.rowTiles,
                hb = L / p.rowTiles;
  // Last row tiles first: under a causal mask they see the most keys,
  // and started last they would run alone at the end of the grid.
  at.rowTile = p.rowTiles - 1 -
               (persist     ? x
                : clustered ? j / p.numSplits
                            : j % p.rowTiles);
  at.split = persist ? 0 : clustered ? j % p.numSplits : j / p.rowTiles;
  at.kvHead = persist ? hb % p.numKvHeads : int(blockIdx.y);
  at.seq = persist ? hb / p.numKvHeads : int64_t(blockIdx.z);
  return !persist || L < p.persistItems;
}

/// Reads the placed item's lengths and sets its rows and key range; false
/// when it has no rows (an item past a shorter sequence's end). Causal
/// rows end at their own slot, tree rows at their own slot too (a parent
/// precedes its children, see Attention.h); a window starts at the
/// smallest query position - W + 1. Without QS, with a window, every
/// thread of the block calls it (a block barrier; sInfo: a shared word).
template <int ROWS, int SK, bool QS, bool SLIV>
__device__ __forceinline__ bool setItem(const AttnParams &p, AttnItem &it,
                                        int tid, int32_t *sInfo) {
  const int G = p.group;
  const int64_t b = it.at.seq;
  it.qBegin = __ldg(p.cuQLens + b);
  int32_t qLen = __ldg(p.cuQLens + b + 1) - it.qBegin;
  int32_t kvLen = __ldg(p.kvLens + b);
  if constexpr (QS) {
    it.qBegin = __reduce_max_sync(0xffffffffu, it.qBegin);
    qLen = __reduce_max_sync(0xffffffffu, qLen);
    kvLen = __reduce_max_sync(0xffffffffu, kvLen);
  }
  if (kvLen < qLen) // malformed; never read unwritten slots beyond qLen
    kvLen = qLen;
  it.prefix = kvLen - qLen;
  it.rowsTotal = qLen * G;
  it.row0 = it.at.rowTile * ROWS;
  if (!QS && it.row0 >= it.rowsTotal)
    return false;
  const int32_t tokLo = it.row0 / G;
  const int32_t tokHi = (min(it.row0 + ROWS, it.rowsTotal) - 1) / G;
  it.pos = !QS && p.positions ? p.positions + it.qBegin : nullptr;
  const int32_t kvEnd = min(kvLen, it.prefix + tokHi + 1);
  int32_t kvStart = 0;
  if (p.window > 0) {
    if constexpr (QS) {
      // No positions: the smallest is the first row's slot (and no block
      // barrier, which a persistent block's roles could not share).
      kvStart = max(0, it.prefix + tokLo - p.window + 1);
    } else {
      if (tid == 0)
        sInfo[0] = 0x7fffffff;
      __syncthreads();
      if (tid <= tokHi - tokLo) {
        int32_t t = tokLo + tid;
        atomicMin(&sInfo[0], it.pos ? __ldg(it.pos + t) : it.prefix + t);
      }
      __syncthreads();
      kvStart = max(0, sInfo[0] - p.window + 1);
      if (it.pos) // new keys are placed by their positions, not their slots
        kvStart = min(kvStart, it.prefix);
    }
  }
  // SLIV, split items whose new tokens' keys fit one stage (a tree
  // verify, a short extend): the splits cut the cached keys alone, and
  // the new keys go in 16-key slivers to splits 0, 1, ... (the compute
  // warps' end, AttentionRowsKernel.cuh). In the last split they make its
  // range a stage longer than the others', and that stage is the item's
  // critical path; the launcher takes SLIV where a split's cached stages
  // are few (rowsSlivers, AttentionLaunch.cuh).
  it.newKeys = 0;
  if constexpr (SLIV)
    if (p.numSplits > 1 && kvEnd > it.prefix && kvEnd - it.prefix <= SK &&
        kvStart < it.prefix)
      it.newKeys = kvEnd - it.prefix;
  const int32_t cutEnd = kvEnd - it.newKeys;
  const int32_t range = max(cutEnd - kvStart, 0);
  int32_t chunk = (range + p.numSplits - 1) / p.numSplits;
  chunk = (chunk + SK - 1) / SK * SK;
  it.ks = min(kvStart + it.at.split * chunk, cutEnd);
  it.ke = min(it.ks + chunk, cutEnd);
  it.nTiles = (it.ke - it.ks + SK - 1) / SK;
  it.headRow = int64_t(it.at.kvHead) * p.blockSize;
  it.contigRow = (b * 2 * p.numKvHeads + it.at.kvHead) * int64_t(p.capacity);
  return it.row0 < it.rowsTotal;
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONITEM_CUH

// The producer warpgroup of the attention kernel's wgmma configuration
// (AttentionRowsKernel.cuh, FlashAttention-3 structure): it only issues
// copies. Per item, Q (QS) and the K and V tiles go into the stage ring,
// by tensor copies of whole tiles where the launcher encoded tensor maps,
// else by cp.async; full and empty mbarriers hand each stage to the
// compute warpgroups and back. A persistent block's producer walks its
// items and hands each to the compute warps through shared memory; a
// split with new-key slivers copies the new keys after its own tiles and
// computes the slivers' masks (AttentionSlivers.cuh).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONPRODUCER_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONPRODUCER_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionItem.cuh"
#include "kernels/attention/AttentionSlivers.cuh"
#include "kernels/attention/AttentionTraits.cuh"
#include "kernels/common/Barriers.cuh"
#include "kernels/common/Pdl.cuh"

#include <cstdint>
#include <type_traits>

namespace strata::kernels::attention_detail {

/// The block's shared memory as the producer sees it: the stage ring at
/// smemBase (NST stages of K then V), Q at qBase (QS), the stages' full
/// and empty mbarriers (NST each), qBar / qFreeBar (QS: Q landed, Q free),
/// itemBar (two: item slot k % 2 written), visBar (SLIV: the slivers'
/// masks written), the item slots, the persistent ticket words, the
/// slivers' masks (a word per row) and the window's word (setItem).
struct ProducerShared {
  uint32_t smemBase, qBase, fullBar, emptyBar, qBar, qFreeBar, itemBar, visBar;
  int32_t (*sItem)[kSlotInts];
  int32_t *sTicket, *sInfo;
  uint64_t *sNewVis;
};

/// Runs the producer warpgroup (threads [0, kProducerThreads)) of a block
/// until its last item's copies are issued and have landed. cur: the
/// block's first item, placed and set (setItem); taken: the item it holds
/// (persistent). Loader places (LoaderPlaces, AttentionBlock.cuh): thread tid moves chunks
/// tid % TPR + m * TPR of key rows keyInPass + j * (threads / TPR), at
/// shared-memory offsets sOff[m] within a pass; kSrc / vSrc: the K and V
/// cache plus the thread's first chunk.
template <int D, int SK, int NST, int ROWS, int TPR, bool QS, bool SLIV,
          int CPT>
__device__ __forceinline__ void
runProducer(const AttnParams &p, AttnItem &cur, int32_t &taken, bool persist,
            bool clustered, const ProducerShared &sh, int keyInPass,
            const uint32_t (&sOff)[CPT], const uint16_t *kSrc,
            const uint16_t *vSrc) {
  constexpr int NTP = kProducerThreads;
  constexpr int CH = D / 8;
  constexpr int STAGE_BYTES = 2 * SK * D * 2;
  constexpr uint32_t ROW_BYTES = 128;
  constexpr int KEYS_PER_PASS = NTP / TPR;
  constexpr int KEYS_PER_THREAD = SK / KEYS_PER_PASS;
  static_assert(CPT == CH / TPR, "chunks per thread and key row");
  const int tid = threadIdx.x, lane = tid & 31;
  const int G = p.group;
  const bool tree = p.parentIds != nullptr;
  int &rowTile = cur.at.rowTile, &split = cur.at.split, &kvHead = cur.at.kvHead;
  int64_t &b = cur.at.seq;
  int32_t &qBegin = cur.qBegin, &prefix = cur.prefix,
          &rowsTotal = cur.rowsTotal, &row0 = cur.row0, &ks = cur.ks,
          &ke = cur.ke, &nTiles = cur.nTiles, &newKeys = cur.newKeys;
  const int64_t &headRow = cur.headRow, &contigRow = cur.contigRow;
  const int32_t *&pos = cur.pos;
  int32_t &tileBase = cur.tileBase;
  const uint32_t smemBase = sh.smemBase, qBase = sh.qBase, fullBar = sh.fullBar,
                 emptyBar = sh.emptyBar, qBar = sh.qBar, qFreeBar = sh.qFreeBar,
                 itemBar = sh.itemBar, visBar = sh.visBar;
  int32_t(*sItem)[kSlotInts] = sh.sItem;
  int32_t *sTicket = sh.sTicket;
  uint64_t *sNewVis = sh.sNewVis;
  auto locate = [&](int32_t L, ItemPlace &at) -> bool {
    return locateItem(p, L, persist, clustered, at);
  };
  auto placeItem = [&] { return locate(taken, cur.at); };
  auto setItem = [&]() -> bool {
    return attention_detail::setItem<ROWS, SK, QS, SLIV>(p, cur, tid, sh.sInfo);
  };
  // The producer warpgroup only issues copies: its registers go to the
  // compute warpgroups.
  warpgroupSetMaxRegs<kProducerRegs<QS>, false>();
  // A split with new-key slivers: a tree's new tokens' parents (at
  // most 64: newKeys), two a lane of every producer warp, for the
  // slivers' masks (after the copies).
  const bool slivers = SLIV && 16 * split < newKeys;
  int32_t newPar[2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
    newPar[i] = slivers && tree && lane + 32 * i < newKeys
                    ? __ldg(p.parentIds + qBegin + lane + 32 * i)
                    : -1;
  // Slots before the new tokens were written by earlier steps, not by
  // the previous kernel (Attention.h): the stages that hold only such
  // slots go out before the dependency wait and stream in under the
  // previous kernel's tail, as decode's do; the wait comes before the
  // first stage that reaches a new token's slot, and before Q.
  bool waited = false;
  auto waitOnce = [&] {
    if (!waited) {
      pdlWait();
      pdlLaunchDependents();
      waited = true;
    }
  };
  // QS: an item's Q first, one row per producer thread: the compute
  // warpgroups' first products wait for it. Rows past the item are
  // zero. A persistent block's later items wait until the compute
  // warps' last products with the previous Q are done.
  auto issueQ = [&](int done) {
    waitOnce();
    if (done > 0)
      mbarWait(qFreeBar, (done - 1) & 1);
    if (tid == 0) {
      int32_t *slot = sItem[done & 1];
      slot[kRowTile] = rowTile;
      slot[kSplit] = split;
      slot[kKvHead] = kvHead;
      slot[kSeq] = int32_t(b);
      slot[kQBegin] = qBegin;
      slot[kPrefix] = prefix;
      slot[kRows] = rowsTotal;
      slot[kKs] = ks;
      slot[kKe] = ke;
      slot[kTiles] = nTiles;
      slot[kTileBase] = tileBase;
      mbarArrive(itemBar + 8 * (done & 1));
    }
    static_assert(!QS || ROWS == NTP, "a producer thread per row of Q");
    const int32_t row = row0 + tid;
    const bool valid = row < rowsTotal;
    const int32_t tok = valid ? row / G : 0;
    const int g = valid ? row - tok * G : 0;
    const uint16_t *src =
        p.q + ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * G + g) * D;
#pragma unroll
    for (int ch = 0; ch < CH; ++ch)
      cpAsync16(qBase + uint32_t((ch / 8) * (ROWS * 128) + tid * 128 +
                                 ((ch % 8) ^ (tid & 7)) * 16),
                src + ch * 8, valid);
    cpAsyncArriveNoinc(qBar);
  };
  // Persistent: the block's next item, the first not yet taken, to
  // every producer thread (thread 0 takes it; two buffers, a barrier
  // of the producer warps between).
  int tk = 0;
  auto takeItem = [&] {
    if (tid == 0)
      sTicket[tk] = atomicAdd(p.counters, 1) + int32_t(gridDim.x);
    namedBarSync(4, NTP);
    taken = sTicket[tk];
    tk ^= 1;
  };
  // Persistent: the Q rows of the block's next item into L2, an item
  // ahead, so that their copies (after the compute warps are done
  // with this item's Q) read L2 instead of device memory.
  auto prefetchNextQ = [&] {
    ItemPlace upcoming;
    if (!locate(taken, upcoming))
      return;
    const int rt = upcoming.rowTile, kh = upcoming.kvHead;
    const int64_t bb = upcoming.seq;
    const int32_t qb = __ldg(p.cuQLens + bb),
                  rows = (__ldg(p.cuQLens + bb + 1) - qb) * G,
                  row = rt * ROWS + tid;
    if (row < rows) {
      const int32_t tok = row / G, g = row - tok * G;
      prefetchL2(p.q + ((int64_t(qb) + tok) * p.numQHeads + kh * G + g) * D,
                 D * 2);
    }
  };
  // The copy loop per cache layout (contiguous, paged with a
  // power-of-two block size, other paged): the layout tests are made
  // once instead of per key, where they had made the producer issue
  // about 290 instructions per 64-key tile, a third of its scheduler's
  // issue slots beside two compute warps. A stage's block-table
  // lookups go right before its copies: the producer runs NST stages
  // ahead of the readers, which hides their round trip.
  auto produce = [&](auto layout) {
    constexpr int L = decltype(layout)::value;
    const int32_t *table = p.blockTables + b * p.maxBlocksPerSeq;
    const int64_t rowBase = (L == 0 ? contigRow : headRow) * D;
    const uint16_t *kHead = kSrc + rowBase, *vHead = vSrc + rowBase;
    // Whole tiles go by tensor copies when the launcher encoded the
    // maps: one thread per box looks up the box's page, expects its
    // bytes on the stage's barrier and issues its copies (landing in
    // the maps' 128-byte swizzle, the stage layout); the others only
    // arrive. Box i goes to lane i / 4 of producer warp i % 4, so that
    // no one warp's serial issue bounds the stage rate. An invalid page
    // lies outside the map and reads as zeros. Tiles that end past the
    // range (slots not the sequence's own) or start inside a box take
    // the cp.async path: the tensor-copied tiles are the first nBulk,
    // and each path has a loop of its own (not one loop with a test per
    // tile).
    int nBulk = 0;
    if (L != 2 && p.bulkRows > 0 && (L == 0 || (ks & (p.bulkRows - 1)) == 0))
      nBulk = (ke - ks) / SK;
    for (int t = 0; t < nBulk; ++t) {
      const int g = tileBase + t, st = g % NST;
      const int32_t tile0 = ks + t * SK;
      if (tile0 + SK > prefix)
        waitOnce();
      const int box = (tid & 31) * 4 + (tid >> 5);
      const int32_t sl = tile0 + box * p.bulkRows;
      const bool issuer = box * p.bulkRows < SK;
      int32_t c1 = sl, c3 = int32_t(b) * 2;
      if (L == 1) {
        c1 = sl & (p.blockSize - 1);
        const int32_t logical = sl >> p.blockShift;
        c3 =
            issuer && logical < p.maxBlocksPerSeq ? __ldg(table + logical) : -1;
      }
      // No wait for the first stage here (the cp.async path below
      // has one): tensor copies do not crowd the first tile's, and
      // short splits ended sooner without it.
      if (g >= NST)
        mbarWait(emptyBar + 8 * st, (g / NST - 1) & 1);
      const uint32_t bar = fullBar + 8 * st;
      // An issuer's bytes are expected before its copies can land (the
      // phase cannot end before every producer thread has arrived).
      if (issuer)
        mbarArriveExpectTx(bar, p.bulkRows * D * 2 * 2);
      else
        mbarArrive(bar);
      if (issuer) {
        const uint32_t kDst =
            smemBase + st * STAGE_BYTES + box * p.bulkRows * 128;
#pragma unroll
        for (int h = 0; h < D / 64; ++h) {
          tensorCopyToShared4d(kDst + h * (SK * 128), &p.kMap, h * 64, c1,
                               kvHead, c3, bar);
          tensorCopyToShared4d(kDst + SK * D * 2 + h * (SK * 128), &p.vMap,
                               h * 64, c1, kvHead, c3 + (L == 0), bar);
        }
      }
    }
    // The cp.async path. A stage's block-table entries are loaded a
    // stage ahead, before the copies of the stage before it: looked up
    // at their copies, as they had been, the loads queued behind the
    // thread's own copies issued before them, and the stage's last
    // copies behind those loads. One entry a lane: a warp's threads
    // copy SK / 4 key rows a stage, lane l loads the page of the warp's
    // key l and the copying threads take theirs by a shuffle (one
    // register carried instead of a thread's KEYS_PER_THREAD). Every
    // lane loads, at a clamped index, so that no branch precedes the
    // shuffles: after a divergent one ptxas wraps them as collective
    // operations and reschedules the whole kernel.
    constexpr int WARP_KEYS = 32 / TPR; // a warp's keys in one pass
    static_assert(WARP_KEYS * KEYS_PER_THREAD <= 32, "a lane per key");
    auto lookup = [&](int32_t t) -> int32_t {
      const int32_t sl = ks + t * SK + (lane / WARP_KEYS) * KEYS_PER_PASS +
                         (tid / 32) * WARP_KEYS + lane % WARP_KEYS;
      if (L == 0)
        return -1;
      const int32_t logical = L == 1 ? sl >> p.blockShift : sl / p.blockSize;
      const int32_t id = __ldg(table + min(logical, p.maxBlocksPerSeq - 1));
      return t < nTiles && lane < WARP_KEYS * KEYS_PER_THREAD && sl < ke &&
                     logical < p.maxBlocksPerSeq
                 ? id
                 : -1;
    };
    int32_t ids = lookup(nBulk);
    for (int t = nBulk; t < nTiles; ++t) {
      const int g = tileBase + t, st = g % NST;
      const int32_t t0 = ks + t * SK + keyInPass;
      if (ks + (t + 1) * SK > prefix)
        waitOnce();
      // A block's third stage goes out only once its first has
      // landed: the first tile (and Q) then shares the memory system
      // with one more stage rather than all the others.
      if (g == 2)
        mbarWait(fullBar, 0);
      if (g >= NST)
        mbarWait(emptyBar + 8 * st, (g / NST - 1) & 1);
      const int32_t nextIds = lookup(t + 1);
      const uint32_t kBase = smemBase + st * STAGE_BYTES;
      const uint32_t vBase = kBase + SK * D * 2;
#pragma unroll
      for (int j = 0; j < KEYS_PER_THREAD; ++j) {
        const int32_t sl = t0 + j * KEYS_PER_PASS;
        int64_t off = -1;
        if constexpr (L == 0) {
          if (sl < ke && sl < p.capacity)
            off = int64_t(sl) * D;
        } else {
          const int32_t inBlock =
              L == 1 ? sl & (p.blockSize - 1) : sl % p.blockSize;
          const int32_t id =
              __shfl_sync(0xffffffffu, ids, j * WARP_KEYS + lane / TPR);
          if (id >= 0 && id < p.numBlocks)
            off = id * p.blockStride + inBlock * D;
        }
        const bool valid = off >= 0;
        const uint16_t *kRow = valid ? kHead + off : p.k;
        const uint16_t *vRow = valid ? vHead + off : p.k;
        constexpr uint32_t PASS_BYTES = KEYS_PER_PASS * ROW_BYTES;
        // TPR 4: chunk m of a thread is chunk tid % 4 + 4 m of the row:
        // column half m / 2, and within its 128 bytes the place of
        // chunk m % 2 (the swizzle XORs the low three bits only), so
        // two offsets. TPR 8: chunk tid % 8 + 8 m, column half m at one
        // place.
        static_assert((TPR == 4 && CPT <= 4) || (TPR == 8 && CPT <= 2),
                      "chunk places as assumed");
#pragma unroll
        for (int m = 0; m < CPT; ++m) {
          const uint32_t at =
              TPR == 8 ? j * PASS_BYTES + m * (SK * 128) + sOff[0]
                       : j * PASS_BYTES + (m / 2) * (SK * 128) + sOff[m % 2];
          cpAsync16(kBase + at, kRow + m * TPR * 8, valid);
          cpAsync16(vBase + at, vRow + m * TPR * 8, valid);
        }
      }
      cpAsyncArriveNoinc(fullBar + 8 * st);
      ids = nextIds;
    }
  };
  // The item's copies by the loop of its cache layout.
  auto produceItem = [&] {
    if (!p.paged)
      produce(std::integral_constant<int, 0>{});
    else if (p.blockShift >= 0)
      produce(std::integral_constant<int, 1>{});
    else
      produce(std::integral_constant<int, 2>{});
  };
  // Items in turn: the block's own, then those it takes (persistent),
  // skipping those without rows; the compute warps get each through
  // slot done % 2, and a negative row tile once none is left.
  for (int done = 0;;) {
    if constexpr (QS) {
      placeItem();
      if (persist && !setItem()) {
        takeItem();
      } else {
        if (!persist)
          setItem();
        issueQ(done);
        produceItem();
        if (!persist)
          break;
        // The next item is claimed only now, a few tiles before it is
        // needed: claimed when this one started, a block busy with a
        // heavy item would hold the next one too, and SMs would end far
        // apart.
        takeItem();
        prefetchNextQ();
        tileBase += nTiles;
        ++done;
      }
      if (taken >= p.persistItems) {
        // Slot done's last reader started item done - 2, before the
        // compute warps were done with item done - 1's Q.
        if (tid == 0) {
          if (done > 0)
            mbarWait(qFreeBar, (done - 1) & 1);
          sItem[done & 1][kRowTile] = -1;
          mbarArrive(itemBar + 8 * (done & 1));
          // The last block out resets the counters for the next launch
          // (every block has taken its last item by then).
          if (atomicAddAcqRel(p.counters + 1, 1) == int32_t(gridDim.x) - 1) {
            atomicExch(p.counters, 0);
            atomicExch(p.counters + 1, 0);
          }
        }
        break;
      }
    } else {
      produceItem();
      // A split with new-key slivers (setItem) then copies the new
      // keys, as one more tile after its own.
      if (!SLIV || done > 0 || 16 * split >= newKeys)
        break;
      tileBase = nTiles;
      ks = prefix;
      ke = prefix + newKeys;
      nTiles = 1;
      ++done;
    }
  }
  // The slivers' masks (AttentionSlivers.cuh), one row a thread, while
  // the compute warps are busy with the split's last tiles.
  if constexpr (SLIV) {
    if (slivers) {
      const int32_t row = row0 + tid;
      sNewVis[tid] = newKeysVisible(row < rowsTotal ? row / G : -1, tree,
                                    newPar, p.window, pos);
      mbarArrive(visBar);
    }
  }
  // No thread leaves with copies in flight. Its copies were never
  // committed to a group (the full barriers track them), so a
  // wait_group would not cover them; wait_all does.
  cpAsyncWaitAll();
  waitOnce(); // no thread leaves before the wait (Pdl.cuh)
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONPRODUCER_CUH

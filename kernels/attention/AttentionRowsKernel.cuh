// The rows kernel behind prefill, extend and tree verify (the wgmma
// configurations of AttentionTraits.cuh; FlashAttention-3 structure,
// warpgroup MMA on sm_90a, fp32 accumulation).
//
// Rows. The q heads of one kv head are processed together: row r of a
// work item is query token r / G, q head kvHead * G + r % G (G = group
// size). K and V tiles are then loaded once for all G heads.
//
// Warps. 128 rows per block: two compute warpgroups of 64 rows sharing
// each key stage (64 keys, or 128 for long prefills and extends, whose Q
// then sits in shared memory: QS), plus a producer warpgroup that only
// issues the copies (AttentionProducer.cuh). A K/V tile feeds 128 rows:
// with 64 the tiles' traffic from L2 bounds the kernel. The compute
// warpgroups take turns at the tensor cores, so that one's softmax runs
// under the other's products (see the main loop).
//
// Stages. K and V tiles go global -> shared NST stages deep, handed
// between producer and compute warps by mbarriers: whole tiles by tensor
// copies where the launcher encoded tensor maps of the cache, else by
// cp.async (16 bytes per thread). 16-byte chunks are XOR-swizzled by row
// in 128-byte rows, the descriptor's and the tensor maps' 128-byte
// swizzle. Keys outside the range are zero-filled so that masked weights
// never multiply garbage.
//
// Split-KV (Attention.h): each split's partial (O / l as T, log2-sum-exp)
// is merged in the item's cluster, by the item's own blocks or in
// attentionMergeKernel (AttentionMerge.cuh). Short split trees and
// extends (SLIV) give their new keys to the first splits in 16-key
// slivers (AttentionSlivers.cuh).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONROWSKERNEL_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONROWSKERNEL_CUH

#include "kernels/attention/AttentionBlock.cuh"
#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionEpilogue.cuh"
#include "kernels/attention/AttentionItem.cuh"
#include "kernels/attention/AttentionMerge.cuh"
#include "kernels/attention/AttentionProducer.cuh"
#include "kernels/attention/AttentionSlivers.cuh"
#include "kernels/attention/AttentionSoftmax.cuh"
#include "kernels/attention/AttentionTraits.cuh"
#include "kernels/attention/AttentionTrace.cuh"
#include "kernels/attention/Wgmma.cuh"
#include "kernels/common/Barriers.cuh"
#include "kernels/common/Pdl.cuh"

#include <cstdint>
#include <type_traits>

namespace strata::kernels::attention_detail {

/// Grid: x = rowTile + rowTiles * split (row tiles of one split adjacent,
/// so that they read the same keys while these are in L2), or with
/// p.clusterMerge rowTile * numSplits + split (an item's splits are one
/// cluster); y = kv head, z = sequence. Tr: one of the wgmma
/// configurations (AttentionTraits.cuh), which assert its invariants.
template <typename T, typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    attentionRowsKernel(const __grid_constant__ AttnParams p) {
  static_assert(Tr::kWgmma, "the rows kernel runs on wgmma");
  constexpr int D = Tr::kHeadDim;
  constexpr int KW = Tr::kKeysPerWarp, NST = Tr::kStages;
  constexpr int TPR = Tr::kLoadersPerRow;
  // SLIV: split items' new keys in slivers of the first splits (64-key
  // stages; setItem).
  constexpr bool SLIV = Tr::kSlivers;
  constexpr int NWARP = Tr::kComputeWarps;
  constexpr int NTC = Tr::kComputeThreads;
  constexpr int NTP = Tr::kProducers;
  // Q from shared memory (SS) with 128-key stages, else in registers (RS).
  constexpr bool QS = Tr::kQInSmem;
  // The dependency wait comes after the lengths, positions and block tables
  // are read (step inputs no kernel writes, Attention.h) and the first
  // stages' copies of cached keys issued (by the producer).
  using Ops = MmaOps<T>;
  constexpr int ROWS = Tr::kRows;
  constexpr int SK = Tr::kStageKeys; // keys per stage
  constexpr int STAGE_BYTES = Tr::kStageBytes;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int32_t sInfo[4];
  STRATA_ATTN_TRACE_BEGIN;

  // Threads [0, NTP) load, the rest compute; ctid and warp number the
  // compute threads and warps from 0.
  const int tid = threadIdx.x, lane = tid & 31;
  const bool producer = tid < NTP;
  const int ctid = computeThread<Tr>(tid), warp = ctid >> 5;
  const bool clustered = p.clusterMerge;
  const int G = p.group;
  // Persistent (p.persistItems > 0; 128-key stages, one split, launcher's
  // choice): a grid of the blocks the GPU holds at once, each taking items
  // one after another, so that an item's Q and first tiles stream in under
  // the previous item's last products and end instead of after a block
  // start. Items go in the order of the grid of one block per item (row
  // tiles of a kv head adjacent, the heaviest first: they share their keys
  // in L2), block j taking item j first and then the next one not yet
  // taken (a counter in the workspace), so that blocks that drew light
  // items take more. The producer walks the items; the compute warps get
  // each from it through shared memory.
  const bool persist = QS && p.persistItems > 0;
  int32_t taken = int32_t(blockIdx.x); // persistent: the block's item
  // The block's item (AttentionItem.cuh); the names below are its fields.
  AttnItem cur;
  int &rowTile = cur.at.rowTile, &split = cur.at.split, &kvHead = cur.at.kvHead;
  int64_t &b = cur.at.seq;
  auto locate = [&](int32_t L, ItemPlace &at) -> bool {
    return locateItem(p, L, persist, clustered, at);
  };
  auto placeItem = [&] { return locate(taken, cur.at); };

  // full[s] completes when the producer's copies of the tile in
  // stage s have landed (NTP arrivals: each thread's cp.async arrival, or
  // for tensor copies plain arrivals and one that expects the tile's
  // bytes), empty[s] when every compute warp has read it (NWARP arrivals);
  // QS: qBar when the producer's copies of an item's Q have landed, qFree
  // when every compute warp's last product with it is done (NWARP
  // arrivals: the next item's Q may overwrite it).
  __shared__ __align__(8) uint64_t stageBars[2 * NST + 4];
  const uint32_t fullBar =
      static_cast<uint32_t>(__cvta_generic_to_shared(stageBars));
  const uint32_t emptyBar = fullBar + 8 * NST;
  const uint32_t qBar = emptyBar + 8 * NST, qFreeBar = qBar + 8,
                 itemBar = qBar + 16;
  // QS: the producer hands each item to the compute warps through slot
  // k % 2 (ItemSlot, AttentionItem.cuh).
  __shared__ int32_t sItem[QS ? 2 : 1][kSlotInts];
  // 64-key stages, new-key slivers (setItem): bit a of row r is set when
  // new token a is visible to row r (in range, causal or an ancestor in
  // the tree, inside the window), written by the producer; visBar (qBar's
  // place, which only QS uses for Q) completes once they are.
  __shared__ uint64_t sNewVis[SLIV ? ROWS : 1];
  const uint32_t visBar = qBar;
  __shared__ int32_t sTicket[2];
  // Initialised before the lengths are read: the fence's latency then
  // passes under theirs (both precede the block barrier below).
  if (tid == 0) {
    for (int s = 0; s < NST; ++s) {
      mbarInit(fullBar + 8 * s, NTP);
      mbarInit(emptyBar + 8 * s, NWARP);
    }
    if (QS) {
      mbarInit(qBar, NTP);
      mbarInit(qFreeBar, NWARP);
      mbarInit(itemBar, 1);
      mbarInit(itemBar + 8, 1);
    } else if (SLIV) {
      mbarInit(visBar, NTP);
    }
    mbarInitFence(); // tensor copies complete on the full barriers
  }

  int32_t &qBegin = cur.qBegin, &prefix = cur.prefix,
          &rowsTotal = cur.rowsTotal, &row0 = cur.row0, &ks = cur.ks,
          &ke = cur.ke, &nTiles = cur.nTiles, &newKeys = cur.newKeys;
  const bool tree = p.parentIds != nullptr;
  auto setItem = [&]() -> bool {
    return attention_detail::setItem<ROWS, SK, QS, SLIV>(p, cur, tid, sInfo);
  };
  // A persistent block whose first item has no rows takes the next
  // (runProducer, AttentionProducer.cuh).
  placeItem();
  if (!setItem() && !persist) {
    pdlWait(); // no block leaves before the wait (Pdl.cuh)
    return;    // the whole item (every split) leaves: counters untouched
  }
  // Tiles of this block's earlier items: stage and barrier phase of tile t
  // of the item are those of tile tileBase + t (persistent).
  int32_t &tileBase = cur.tileBase;

  uint32_t smemBase = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  // swizzle atoms at 1024-byte boundaries (1 KB more is allocated)
  smemBase = (smemBase + 1023) & ~1023u;
  // The producer's loader places (AttentionBlock.cuh).
  LoaderPlaces<Tr> ld;
  setLoaderPlaces<Tr>(p, tid, ld);

  // QS: the block's Q tile [ROWS][D] after the stages, laid out like a K
  // tile (column halves of 128-byte swizzled rows).
  const uint32_t qBase = smemBase + NST * STAGE_BYTES;
  __syncthreads(); // the stage barriers are initialised
  if (producer) {
    runProducer<D, SK, NST, ROWS, TPR, QS, SLIV>(
        p, cur, taken, persist, clustered,
        ProducerShared{smemBase, qBase, fullBar, emptyBar, qBar, qFreeBar,
                       itemBar, visBar, sItem, sTicket, sInfo, sNewVis},
        ld.keyInPass, ld.sOff, ld.kSrc, ld.vSrc);
    return;
  }
  pdlWait(); // before Q, which the previous kernel may write
  pdlLaunchDependents();
  warpgroupSetMaxRegs<kComputeRegs<QS>, true>();

  // The compute warps' items: the block's one, or (persistent) its items
  // in turn, as the producer walks them.
  // Persistent: the count of items done lives in shared memory (a slot per
  // warp) while an item runs: in a register it had spilled the main loop.
  // Every lane of the warp writes it, the same value, between warp
  // barriers that order those writes after the lanes' reads.
  __shared__ int32_t sLoop[QS ? NWARP : 1];
  if (QS && !producer)
    sLoop[warp] = 0;
  __syncwarp();
  for (;;) {
    if constexpr (QS) {
      // Every value as a warp reduction: the compiler then knows it
      // uniform and keeps what derives from it (stage addresses,
      // descriptors) in uniform registers.
      const int k = __reduce_max_sync(0xffffffffu, sLoop[warp]);
      mbarWait(itemBar + 8 * (k & 1), (k >> 1) & 1);
      const int32_t *slot = sItem[k & 1];
      auto get = [&](int f) { return __reduce_max_sync(0xffffffffu, slot[f]); };
      rowTile = get(kRowTile);
      if (__any_sync(0xffffffffu, rowTile < 0))
        break;
      split = get(kSplit);
      kvHead = get(kKvHead);
      b = get(kSeq);
      qBegin = get(kQBegin);
      prefix = get(kPrefix);
      rowsTotal = get(kRows);
      ks = get(kKs);
      ke = get(kKe);
      nTiles = get(kTiles);
      tileBase = get(kTileBase);
      row0 = rowTile * ROWS;
    }
    STRATA_ATTN_TRACE_RESTART(persist);
    // Q: A fragments of each warp's 16 rows in registers (rows past the item
    // zero), or (QS) in shared memory, copied there by the producer.
    // Positions come only with trees (checked at launch), which never take
    // 128-key stages: without them that configuration fits its registers.
    int32_t rTok[2], rSlot[2], rPos[2];
    bool rValid[2];
    uint32_t qf[QS ? 1 : D / 16][4];
    int32_t wMaxPos, wMinSlot;
    setWarpRows<Tr>(p, cur, G, warp, lane, rTok, rSlot, rPos, rValid, wMaxPos,
                    wMinSlot, qf);

    float o[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float mRow[2] = {-INFINITY, -INFINITY}, lRow[2] = {0.f, 0.f};

    const int32_t *parents = tree ? p.parentIds + qBegin : nullptr;
    const MaskRows maskRows{p,          cur,     tree,    parents, rTok,
                            rSlot,    rPos,  wMaxPos, wMinSlot,
                            sNewVis,    visBar,  warp,    lane};
    // Masks and online softmax for the scores s of the keys from slot tLo
    // on (AttentionSoftmax.cuh).
    auto softmaxScores = [&](auto &s, const int32_t tLo, float(&pScale)[2]) {
      maskScores<true>(s, tLo, maskRows);
      onlineSoftmax(s, p.scaleLog2, mRow, lRow, pScale);
    };
    auto rescaleO = [&](const float(&pScale)[2]) {
      if (needRescale(pScale))
        scaleO<D>(o, pScale);
    };
    {
      // Warpgroups of 64 rows on wgmma, taking turns at the tensor cores
      // (named barriers 1 and 2). In its turn a warpgroup issues the scores
      // of tile it and then PV of tile it - 1, and hands over. It waits for
      // the scores only and runs their softmax while its own PV and the other
      // warpgroup's products occupy the tensor cores; then it waits for its
      // PV, rescales O and packs P for the next turn (O and the previous P
      // are the in-flight PV's operands until then). Stages are handed
      // between loaders and readers by mbarriers, so neither warpgroup waits
      // for the other except for its turn. (Waiting for both products before
      // the softmax left the tensor cores idle for part of every softmax; in
      // lockstep, one block barrier per tile, both warpgroups ran their
      // softmax at the same time.)
      const int wg = warp / 4;
      const uint32_t myTurn = 1 + wg, otherTurn = 2 - wg;
      float sAcc[KW / 8][4] = {};
      uint32_t pPrev[KW / 16][4] = {}; // P of tile it - 1 (A of its PV)
      // Turn t: wait for tile t's copies (t < nTiles) and for the turn.
      auto turnBegin = [&](int t) {
        if (t < nTiles)
          mbarWait(fullBar + 8 * ((tileBase + t) % NST),
                   ((tileBase + t) / NST) & 1);
        namedBarSync(myTurn, NTC);
        // The copies were made through the generic proxy by other threads
        // (observed through the mbarrier); wgmma reads through the async
        // proxy.
        fenceProxyAsyncShared();
        fenceOperands(o);
        fenceOperands(pPrev);
        fenceOperands(sAcc);
        wgmmaFence();
      };
      // Descriptors of stage 0's K and V, advanced by byte offsets: the
      // address field is computed once instead of per product.
      const uint64_t kDesc0 = sw128Desc(smemBase, 16, 1024);
      const uint64_t vDesc0 = sw128Desc(smemBase + SK * D * 2, SK * 128, 1024);
      auto issuePV = [&](int t) {
        // B = V, stored key-major (N = d contiguous): the transposed operand;
        // 16 keys are 2048 bytes, the halves of d SK * 128 apart.
        const uint64_t vd =
            descAdvance(vDesc0, ((tileBase + t) % NST) * STAGE_BYTES);
#pragma unroll
        for (int kk = 0; kk < KW / 16; ++kk)
          Wgmma<T, D, true>::run(o, pPrev[kk], descAdvance(vd, kk * 16 * 128),
                                 1);
        wgmmaCommit();
      };
      // QS: A = this warpgroup's 64 rows of Q, laid out like K.
      const uint64_t qDesc0 = sw128Desc(qBase + wg * 64 * 128, 16, 1024);
      auto issueS = [&](int t) {
        // B = K (key-major rows of d): one m64nKWk16 per 16 of d, 32 bytes
        // further into the swizzled 128-byte rows, the second 64 of d in the
        // tile's second half (Q likewise).
        const uint64_t kd =
            descAdvance(kDesc0, ((tileBase + t) % NST) * STAGE_BYTES);
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          const uint64_t kdk =
              descAdvance(kd, (kk / 4) * (SK * 128) + (kk % 4) * 32);
          if constexpr (QS)
            WgmmaSS<T, KW>::run(
                sAcc,
                descAdvance(qDesc0, (kk / 4) * (ROWS * 128) + (kk % 4) * 32),
                kdk, kk > 0);
          else
            Wgmma<T, KW, false>::run(sAcc, qf[kk], kdk, kk > 0);
        }
        wgmmaCommit();
      };
      // Hand the turn over; warpgroup 1 skips its last hand-over, which
      // nobody waits for.
      auto handOver = [&](int t) {
        if (wg == 0 || t < nTiles)
          namedBarArrive(otherTurn, NTC);
      };
      // Once PV of tile t - 1 is done and O rescaled: P and stage t - 1 are
      // free.
      auto afterPV = [&](int t) {
        fenceOperands(o);
        fenceOperands(pPrev);
        packP<T, KW>(sAcc, pPrev);
        if (t > 0 && lane == 0)
          mbarArrive(emptyBar + 8 * ((tileBase + t - 1) % NST));
      };
      // New-key slivers (setItem): split s takes keys [16 j, 16 j + 16) of
      // the new keys for j = s, s + numSplits, ..., from the stage after
      // its own tiles, both warpgroups for their own rows. Spread this way
      // the new keys cost each split a little instead of one split a stage.
      // The first sliver's scores go out in the last turn, beside the last
      // tile's PV, so that they and the sliver's softmax run under that PV
      // and the other warpgroup's.
      const int gNew = tileBase + nTiles, stNew = gNew % NST;
      const bool sliverInTurn = SLIV && 16 * split < newKeys && nTiles > 0;
      auto issueSliverS = [&](float(&sv)[2][4], int j) {
        const uint64_t kd =
            descAdvance(kDesc0, stNew * STAGE_BYTES + j * 16 * 128);
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)
          Wgmma<T, 16, false>::run(
              sv, qf[kk],
              descAdvance(kd, (kk / 4) * (SK * 128) + (kk % 4) * 32), kk > 0);
        wgmmaCommit();
      };
      // P of a sliver (16 keys: one A fragment) times its V rows into O.
      auto issueSliverPV = [&](const float(&sv)[2][4], int j) {
        uint32_t pv[1][4] = {
            {Ops::pack(sv[0][0], sv[0][1]), Ops::pack(sv[0][2], sv[0][3]),
             Ops::pack(sv[1][0], sv[1][1]), Ops::pack(sv[1][2], sv[1][3])}};
        fenceOperands(o);
        fenceOperands(pv);
        wgmmaFence();
        Wgmma<T, D, true>::run(
            o, pv[0], descAdvance(vDesc0, stNew * STAGE_BYTES + j * 16 * 128),
            1);
        wgmmaCommit();
        wgmmaWaitAll();
        fenceOperands(o);
      };
      // The first and last turns are peeled so that no wgmma sits under a
      // branch (ptxas serializes wgmma on divergent paths).
      if (nTiles > 0) {
        if (wg == 1)
          namedBarArrive(1, NTC); // warpgroup 0 goes first
        float pScale[2];
        if constexpr (QS)
          mbarWait(qBar, sLoop[warp] & 1); // turnBegin's fence covers Q
        turnBegin(0);
        STRATA_ATTN_TRACE_MARK(true, 1);
        issueS(0);
        handOver(0);
        wgmmaWaitAll();
        if constexpr (QS)
          mbarArriveIf(qFreeBar, nTiles == 1 && lane == 0);
        fenceOperands(sAcc);
        softmaxScores(sAcc, ks, pScale);
        rescaleO(pScale);
        afterPV(0);
        for (int it = 1; it < nTiles; ++it) {
          turnBegin(it);
          issueS(it);
          issuePV(it - 1);
          handOver(it);
          wgmmaWait<1>(); // the scores of tile it
          // The item's last scores: its Q is free (an arrival under a
          // predicate, not a branch, which would move the waits).
          if constexpr (QS)
            mbarArriveIf(qFreeBar, it == nTiles - 1 && lane == 0);
          fenceOperands(sAcc);
          softmaxScores(sAcc, ks + it * SK, pScale);
          // PV of tile it - 1. The wait sits behind a branch on the softmax's
          // result: ptxas schedules a wgmma wait as early as its basic block
          // allows, and in the softmax's block it had gone ahead of the
          // exponentials, so that the softmax never ran under this PV.
          if (needRescale(pScale)) {
            wgmmaWaitAll();
            fenceOperands(o);
            scaleO<D>(o, pScale);
          }
          wgmmaWaitAll();
          afterPV(it);
        }
        // SLIV: the first sliver's scores and softmax inside the last turn.
        float sv[2][4] = {};
        if constexpr (SLIV) {
          fenceOperands(sv);
          if (sliverInTurn) // turnBegin waits for the split's own tiles only
            mbarWait(fullBar + 8 * stNew, (gNew / NST) & 1);
        }
        turnBegin(nTiles);
        // Issued by every split (under a branch, ptxas would serialize
        // every wgmma of the kernel); those without a sliver read the
        // stage's first keys, inside shared memory, and never the result.
        if constexpr (SLIV)
          issueSliverS(sv, sliverInTurn ? split : 0);
        issuePV(nTiles - 1);
        handOver(nTiles);
        if constexpr (SLIV) {
          wgmmaWait<1>(); // the sliver's scores
          fenceOperands(sv);
          if (sliverInTurn) {
            ke = prefix + newKeys; // the range the masks see
            softmaxScores(sv, prefix + 16 * split, pScale);
            if (needRescale(pScale)) {
              wgmmaWaitAll();
              fenceOperands(o);
              scaleO<D>(o, pScale);
            }
          }
        }
        wgmmaWaitAll();
        fenceOperands(o);
        if (lane == 0)
          mbarArrive(emptyBar + 8 * ((tileBase + nTiles - 1) % NST));
        if (SLIV && sliverInTurn)
          issueSliverPV(sv, split);
        STRATA_ATTN_TRACE_MARK(true, 2);
      }
      // The other slivers (more than one a split, or a split without
      // tiles of its own) after the turns, one at a time.
      if constexpr (SLIV) {
        ke = prefix + newKeys; // the range the masks see
        for (int j = sliverInTurn ? split + p.numSplits : split;
             16 * j < newKeys; j += p.numSplits) {
          mbarWait(fullBar + 8 * stNew, (gNew / NST) & 1);
          fenceProxyAsyncShared();
          float sv[2][4] = {};
          fenceOperands(sv);
          wgmmaFence();
          issueSliverS(sv, j);
          wgmmaWaitAll();
          fenceOperands(sv);
          float pScale[2];
          softmaxScores(sv, prefix + 16 * j, pScale);
          rescaleO(pScale);
          issueSliverPV(sv, j);
        }
      }
    }
    // From here on only compute threads take part (the producer has left,
    // or in a persistent block fills the stages for the next item); the
    // stages become the epilogue's buffer (rows merged in a cluster, never
    // persistent) once every warp is done with them.
    cpAsyncWait<0>();
    if (clustered) // the end stages O in shared memory
      namedBarSync(3, NTC);

    const int64_t item =
        (b * p.numKvHeads + kvHead) * int64_t(p.rowTiles) + rowTile;
    const bool viaGlobal = p.numSplits > 1 && !clustered;
    const SplitOut<Tr, uint16_t> out =
        splitOut<Tr, uint16_t>(p, item, split, viaGlobal);
    const int validRows = min(ROWS, rowsTotal - row0);
    // Merged in a cluster, by their blocks or a kernel.
    rowsEpilogue<T, D, ROWS, NTC>(p, o, mRow, lRow, smem, warp, lane, ctid,
                                  row0, validRows, qBegin, kvHead, out.partO,
                                  out.partLse, clustered);
    if (viaGlobal && p.peerMerge)
      peerMergeRows<T, D, ROWS, NTC>(p, ctid, split, item, row0, validRows,
                                     qBegin, kvHead, &sInfo[1]);
    STRATA_ATTN_TRACE_END(ctid == 0, nTiles,
                          persist ? (b * p.numKvHeads + kvHead) * p.rowTiles +
                                        p.rowTiles - 1 - rowTile
                                  : -1);
    // Configurations that never run persistent leave by a warp vote: with
    // the plain test (a constant there) ptxas keeps the 64-key kernel's
    // main-loop values out of uniform registers. The 128-key kernel, the
    // other way round, loses them to the vote.
    if (QS ? !persist : __any_sync(0xffffffffu, true))
      break;
    const int doneItems = sLoop[warp] + 1;
    __syncwarp();
    sLoop[warp] = doneItems;
    __syncwarp();
  }
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONROWSKERNEL_CUH

// The one attention kernel behind every launcher of Attention.h
// (FlashAttention-2 structure, fp32 accumulation): mma.sync m16n8k16 for
// decode, warpgroup MMA (wgmma, sm_90a) for prefill, extend and tree.
//
// Rows. The q heads of one kv head are processed together: row r of a
// work item is query token r / G, q head kvHead * G + r % G (G = group
// size). K and V tiles are then loaded once for all G heads, which is what
// makes GQA decode memory bound on the cache alone.
//
// Warps. Each compute warp owns 16 rows and a KW-key slice of every
// shared-memory stage.
//  - WM = 8, WN = 1, WG (prefill, extend, tree): 128 rows per block, two
//    compute warpgroups of 64 rows sharing each key stage (64 keys, or 128
//    for long prefills and extends, whose Q then sits in shared memory:
//    QS), plus a producer warpgroup that only issues the copies
//    (FlashAttention-3 structure). A K/V tile feeds 128 rows: with 64 the
//    tiles' traffic from L2 bounded the kernel. The compute warpgroups take
//    turns at the tensor cores, so that one's softmax runs under the other's
//    products (see the main loop).
//  - WM = 1, WN = 4 (decode): 16 rows per block, each warp takes its own
//    KW keys of a 4*KW-key stage; the four partial softmax states are
//    merged through shared memory at the end.
//
// Stages. K and V tiles go global -> shared with cp.async (16 bytes per
// thread, L1 bypassed), NST stages deep (wgmma: handed between producer
// and compute warps by mbarriers, and whole tiles by tensor copies where
// the launcher encoded tensor maps of the cache); 16-byte chunks are
// XOR-swizzled by row so that ldmatrix reads are conflict free, and for
// wgmma the same XOR in 128-byte rows is the descriptor's and the tensor
// maps' 128-byte swizzle. Keys outside the range are zero-filled so that
// masked weights never multiply garbage.
//
// Split-KV (Attention.h): each split's partial (O / l, log2-sum-exp) goes
// to the workspace; decode items merge in their last block, row items in
// their cluster, by their own blocks or in attentionMergeKernel. Short
// split trees and extends (SLIV) give their new keys to the first splits
// in 16-key slivers (AttentionSlivers.cuh).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONKERNEL_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONKERNEL_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionEpilogue.cuh"
#include "kernels/attention/AttentionMerge.cuh"
#include "kernels/attention/AttentionSlivers.cuh"
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
/// cluster); y = kv head, z = sequence.
/// SLIV: split items' new keys in slivers of the first splits (64-key
/// stages; setItem), a configuration of its own so that other launches
/// keep their code (attentionNewKeySliversEnabled says where it runs).
template <typename T, int D, int WM, int WN, int KW, int NST, int MINB, bool WG,
          int TPR, bool SLIV>
__global__ void __launch_bounds__(32 * WM * WN + (WG ? kProducerThreads : 0),
                                  MINB)
    attentionKernel(const __grid_constant__ AttnParams p) {
  constexpr int NWARP = WM * WN;                 // compute warps
  constexpr int NTC = 32 * NWARP;                // compute threads
  constexpr int NTP = WG ? kProducerThreads : 0; // wgmma path
  constexpr int NT = NTC + NTP;
  static_assert(!WG || (WM == 8 && WN == 1 && (KW == 64 || KW == 128)),
                "wgmma takes two warpgroups of 64 rows sharing 64- or "
                "128-key stages (the turns and the register split assume "
                "two)");
  static_assert(16 * WM <= NT, "a block's tokens fit its threads");
  // wgmma with 128-key stages reads Q from shared memory (SS): the 32
  // registers per thread of Q's fragments are what the 128-key score tile
  // needs. With 64-key stages Q stays in registers (RS), which leaves
  // shared memory's bandwidth to K and V.
  constexpr bool QS = WG && KW == 128;
  static_assert(!SLIV || (WG && !QS), "slivers are a 64-key-stage scheme");
  // Register split of the wgmma path (setmaxnreg): the block starts with
  // 65536 / NT registers per thread (rounded down to 8); the producer keeps
  // what address arithmetic needs and the compute warps take the rest.
  constexpr int kProducerRegs = QS ? 24 : 40, kComputeRegs = QS ? 240 : 232;
  static_assert(!WG || NTP * kProducerRegs + NTC * kComputeRegs <=
                           (65536 / NT) / 8 * 8 * NT,
                "the register split fits the block's registers");
  // The dependency wait comes after the lengths, positions and block tables
  // are read (step inputs no kernel writes, Attention.h) and the first
  // stages' copies of cached keys issued (decode; the rows' producer).
  using Ops = MmaOps<T>;
  constexpr int ROWS = 16 * WM;
  constexpr int SK = KW * WN; // keys per stage
  constexpr int CH = D / 8;   // 16-byte chunks per row
  constexpr int STAGE_BYTES = 2 * SK * D * 2;
  static_assert(STAGE_BYTES % 1024 == 0, "stages keep swizzle atoms aligned");
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int32_t sInfo[4];
  STRATA_ATTN_TRACE_BEGIN;

  // wgmma path: threads [0, NTP) load, the rest compute; ctid and warp
  // number the compute threads and warps from 0.
  const int tid = threadIdx.x, lane = tid & 31;
  const bool producer = tid < NTP;
  const int ctid = producer ? 0 : tid - NTP, warp = ctid >> 5;
  const bool clustered = WG && p.clusterMerge;
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
  int rowTile, split, kvHead;
  int64_t b;
  // Places item L (persistent) or the block's item; false when there is no
  // such item.
  auto locate = [&](int32_t L, int &rt, int &sp, int &kh, int64_t &bb) -> bool {
    // Without branches: each would make the persistent loops' control flow
    // look divergent to the compiler, which then keeps their uniform
    // values (stage addresses, descriptors) in ordinary registers.
    const int32_t j = int32_t(blockIdx.x), x = L % p.rowTiles,
                  hb = L / p.rowTiles;
    // Last row tiles first: under a causal mask they see the most keys,
    // and started last they would run alone at the end of the grid.
    rt = p.rowTiles - 1 -
         (persist     ? x
          : clustered ? j / p.numSplits
                      : j % p.rowTiles);
    sp = persist ? 0 : clustered ? j % p.numSplits : j / p.rowTiles;
    kh = persist ? hb % p.numKvHeads : int(blockIdx.y);
    bb = persist ? hb / p.numKvHeads : int64_t(blockIdx.z);
    return !persist || L < p.persistItems;
  };
  auto placeItem = [&] { return locate(taken, rowTile, split, kvHead, b); };

  // wgmma path: full[s] completes when the producer's copies of the tile in
  // stage s have landed (NTP arrivals: each thread's cp.async arrival, or
  // for tensor copies plain arrivals and one that expects the tile's
  // bytes), empty[s] when every compute warp has read it (NWARP arrivals);
  // QS: qBar when the producer's copies of an item's Q have landed, qFree
  // when every compute warp's last product with it is done (NWARP
  // arrivals: the next item's Q may overwrite it).
  __shared__ __align__(8) uint64_t stageBars[WG ? 2 * NST + 4 : 1];
  const uint32_t fullBar =
      static_cast<uint32_t>(__cvta_generic_to_shared(stageBars));
  const uint32_t emptyBar = fullBar + 8 * NST;
  const uint32_t qBar = emptyBar + 8 * NST, qFreeBar = qBar + 8,
                 itemBar = qBar + 16;
  // QS: the producer hands each item to the compute warps through slot
  // k % 2 (itemBar + 8 * (k % 2) completes when item k is written; a
  // negative row tile: no more items), so that they start it without
  // global loads or divisions of their own.
  enum {
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
  if (WG && tid == 0) {
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

  // The item's rows and key range. Causal rows end at their own slot, tree
  // rows at their own slot too (a parent precedes its children, see
  // Attention.h); a window starts at the smallest query position - W + 1.
  int32_t qBegin, qLen, kvLen, prefix, rowsTotal, row0, tokLo, tokHi, ks, ke,
      nTiles, newKeys;
  int64_t headRow, contigRow; // the kv head's rows in a page, a sequence
  const bool tree = p.parentIds != nullptr;
  // Positions come only with trees (checked at launch), which never take
  // 128-key stages: without them that configuration fits its registers.
  const int32_t *pos = nullptr;
  // Reads the item's lengths; false when it has no rows (an item past a
  // shorter sequence's end).
  auto setItem = [&]() -> bool {
    qBegin = __ldg(p.cuQLens + b);
    qLen = __ldg(p.cuQLens + b + 1) - qBegin;
    kvLen = __ldg(p.kvLens + b);
    if constexpr (QS) {
      qBegin = __reduce_max_sync(0xffffffffu, qBegin);
      qLen = __reduce_max_sync(0xffffffffu, qLen);
      kvLen = __reduce_max_sync(0xffffffffu, kvLen);
    }
    if (kvLen < qLen) // malformed; never read unwritten slots beyond qLen
      kvLen = qLen;
    prefix = kvLen - qLen;
    rowsTotal = qLen * G;
    row0 = rowTile * ROWS;
    if (!QS && row0 >= rowsTotal)
      return false;
    tokLo = row0 / G;
    tokHi = (min(row0 + ROWS, rowsTotal) - 1) / G;
    pos = !QS && p.positions ? p.positions + qBegin : nullptr;
    const int32_t kvEnd = min(kvLen, prefix + tokHi + 1);
    int32_t kvStart = 0;
    if (p.window > 0) {
      if constexpr (QS) {
        // No positions: the smallest is the first row's slot (and no block
        // barrier, which a persistent block's roles could not share).
        kvStart = max(0, prefix + tokLo - p.window + 1);
      } else {
        if (tid == 0)
          sInfo[0] = 0x7fffffff;
        __syncthreads();
        if (tid <= tokHi - tokLo) {
          int32_t t = tokLo + tid;
          atomicMin(&sInfo[0], pos ? __ldg(pos + t) : prefix + t);
        }
        __syncthreads();
        kvStart = max(0, sInfo[0] - p.window + 1);
        if (pos) // new keys are placed by their positions, not their slots
          kvStart = min(kvStart, prefix);
      }
    }
    // SLIV, split items whose new tokens' keys fit one stage (a tree
    // verify, a short extend): the splits cut the cached keys alone, and
    // the new keys go in 16-key slivers to splits 0, 1, ... (the compute
    // warps' end, below). In the last split they make its range a stage
    // longer than the others' (a 64-token tree over 1K in 8 splits: 3
    // stages against 2), and that stage is the item's critical path; the
    // launcher takes SLIV where a split's cached stages are few
    // (rowsSlivers, AttentionLaunch.cuh).
    newKeys = 0;
    if constexpr (SLIV)
      if (p.numSplits > 1 && kvEnd > prefix && kvEnd - prefix <= SK &&
          kvStart < prefix)
        newKeys = kvEnd - prefix;
    const int32_t cutEnd = kvEnd - newKeys;
    const int32_t range = max(cutEnd - kvStart, 0);
    int32_t chunk = (range + p.numSplits - 1) / p.numSplits;
    chunk = (chunk + SK - 1) / SK * SK;
    ks = min(kvStart + split * chunk, cutEnd);
    ke = min(ks + chunk, cutEnd);
    nTiles = (ke - ks + SK - 1) / SK;
    headRow = int64_t(kvHead) * p.blockSize;
    contigRow = (b * 2 * p.numKvHeads + kvHead) * int64_t(p.capacity);
    return row0 < rowsTotal;
  };
  // A persistent block whose first item has no rows takes the next
  // (producer, below).
  placeItem();
  if (!setItem() && !persist) {
    pdlWait(); // no block leaves before the wait (Pdl.cuh)
    return;    // the whole item (every split) leaves: counters untouched
  }
  // Tiles of this block's earlier items: stage and barrier phase of tile t
  // of the item are those of tile tileBase + t (persistent).
  int32_t tileBase = 0;

  uint32_t smemBase = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  if (WG) // swizzle atoms at 1024-byte boundaries (1 KB more is allocated)
    smemBase = (smemBase + 1023) & ~1023u;
  // Place of 16-byte chunk ch of key row `key` of a K or V tile. mma.sync:
  // rows of D * 2 bytes, chunks XOR-swizzled by key & 7. wgmma: the tile is
  // cut into 64-element column halves, each [SK rows][128 bytes] with the
  // same XOR, which is the descriptor's 128-byte swizzle (8-row atoms of
  // 1024 bytes).
  constexpr uint32_t ROW_BYTES = WG ? 128 : CH * 16;
  auto tileOffset = [](int key, int ch) -> uint32_t {
    if constexpr (WG)
      return uint32_t((ch / 8) * (SK * 128) + key * 128 +
                      ((ch % 8) ^ (key & 7)) * 16);
    else
      return uint32_t(swz<CH>(key, ch));
  };
  // Loader: TPR threads per key row, each moving CH / TPR chunks of K and
  // of V (TPR 8: a warp's copy covers 128 contiguous bytes of each of 4
  // rows; AttentionRows.cu and AttentionDecode.cu say where each is used).
  // Decode (lookupStage, loadStage) reads a stage's block-table entries one
  // stage before its copies (the prologue those of every prefetched stage
  // at once): a lookup right before its copies had put a dependent L2 round
  // trip in front of every stage. The wgmma producer has its own loop
  // (produce, below). A thread's key rows are KEYS_PER_PASS apart, a
  // multiple of the 8-row swizzle period, so each of its chunks has the
  // same shared-memory place in every row and stage up to a constant:
  // computed once (sOff), one add per copy (that arithmetic had been a
  // third of a decode block's instructions).
  constexpr int LT = WG ? NTP : NTC; // loading threads (ltid = tid)
  constexpr int KEYS_PER_PASS = LT / TPR;
  constexpr int KEYS_PER_THREAD = SK / KEYS_PER_PASS;
  constexpr int CPT = CH / TPR; // chunks per thread and key row
  static_assert(KEYS_PER_PASS % 8 == 0, "rows of a thread share a swizzle");
  static_assert(SK % KEYS_PER_PASS == 0, "a stage is whole passes");
  const int keyInPass = tid / TPR;
  uint32_t sOff[CPT];
#pragma unroll
  for (int m = 0; m < CPT; ++m)
    sOff[m] = tileOffset(keyInPass, tid % TPR + m * TPR);
  const uint16_t *kSrc = p.k + (tid % TPR) * 8;
  const uint16_t *vSrc =
      (p.paged ? p.v : p.k + int64_t(p.numKvHeads) * p.capacity * D) +
      (tid % TPR) * 8;
  // Slot s of a paged sequence is row s % blockSize of its logical block
  // s / blockSize; a power-of-two block size (the usual case) shifts.
  auto splitSlot = [&](int32_t s, int32_t &logical, int32_t &inBlock) {
    if (p.blockShift >= 0) {
      logical = s >> p.blockShift;
      inBlock = s & (p.blockSize - 1);
    } else {
      logical = s / p.blockSize;
      inBlock = s - logical * p.blockSize;
    }
  };
  using Lookup = int32_t[KEYS_PER_THREAD];
  // The raw block id (paged) of each of this thread's keys of a tile; the
  // offset is formed only when the copies are issued.
  auto lookupStage = [&](int tile, Lookup &blk) {
    const int32_t t0 = ks + tile * SK + keyInPass;
#pragma unroll
    for (int j = 0; j < KEYS_PER_THREAD; ++j) {
      int32_t s = t0 + j * KEYS_PER_PASS, logical, inBlock;
      blk[j] = -1;
      if (p.paged) {
        splitSlot(s, logical, inBlock);
        if (s < ke && logical < p.maxBlocksPerSeq)
          blk[j] = __ldg(p.blockTables + b * p.maxBlocksPerSeq + logical);
      }
    }
  };
  // Element offset of the cache row holding (slot s, kvHead), or -1 when
  // the slot has no storage (it then reads as zeros).
  auto rowOffset = [&](int32_t s, int32_t block) -> int64_t {
    if (s >= ke)
      return -1;
    if (p.paged) {
      if (block < 0 || block >= p.numBlocks)
        return -1;
      int32_t logical, inBlock;
      splitSlot(s, logical, inBlock);
      return block * p.blockStride + (headRow + inBlock) * D;
    }
    if (s >= p.capacity)
      return -1;
    return (contigRow + s) * D;
  };
  // Decode's copies of a stage. Decode reads each key once per step: its
  // lines leave L2 first (rows blocks share their tiles).
  const uint64_t kvPolicy = WG ? 0 : l2EvictFirst();
  auto loadStage = [&](int tile, int stage, const Lookup &blk) {
    const int32_t t0 = ks + tile * SK + keyInPass;
    const uint32_t kBase = smemBase + stage * STAGE_BYTES;
    const uint32_t vBase = kBase + SK * D * 2;
#pragma unroll
    for (int j = 0; j < KEYS_PER_THREAD; ++j) {
      const int64_t off = rowOffset(t0 + j * KEYS_PER_PASS, blk[j]);
      const bool valid = off >= 0;
      const uint16_t *kRow = valid ? kSrc + off : p.k;
      const uint16_t *vRow = valid ? vSrc + off : p.k;
      constexpr uint32_t PASS_BYTES = KEYS_PER_PASS * ROW_BYTES;
#pragma unroll
      for (int m = 0; m < CPT; ++m) {
        cpAsync16(kBase + j * PASS_BYTES + sOff[m], kRow + m * TPR * 8, valid,
                  kvPolicy);
        cpAsync16(vBase + j * PASS_BYTES + sOff[m], vRow + m * TPR * 8, valid,
                  kvPolicy);
      }
    }
  };

  Lookup next; // block ids of the next tile to be issued
  // QS: the block's Q tile [ROWS][D] after the stages, laid out like a K
  // tile (column halves of 128-byte swizzled rows).
  const uint32_t qBase = smemBase + NST * STAGE_BYTES;
  if constexpr (WG) {
    __syncthreads(); // the stage barriers are initialised
    if (producer) {
      // The producer warpgroup only issues copies: its registers go to the
      // compute warpgroups.
      warpgroupSetMaxRegs<kProducerRegs, false>();
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
        int rt, sp, kh;
        int64_t bb;
        if (!locate(taken, rt, sp, kh, bb))
          return;
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
        // and each path has a loop of its own (one loop with a test per
        // tile was slower; docs/kernels.md has the figures).
        int nBulk = 0;
        if (L != 2 && p.bulkRows > 0 &&
            (L == 0 || (ks & (p.bulkRows - 1)) == 0))
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
            c3 = issuer && logical < p.maxBlocksPerSeq ? __ldg(table + logical)
                                                       : -1;
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
        for (int t = nBulk; t < nTiles; ++t) {
          const int g = tileBase + t, st = g % NST;
          const int32_t t0 = ks + t * SK + keyInPass;
          if (ks + (t + 1) * SK > prefix)
            waitOnce();
          // With a power-of-two block size the first half of a thread's
          // keys are looked up before the wait for the stage, the rest at
          // their copies (under the first half's copies), and offsets are
          // formed at the copies: all of them ahead were slower after the
          // wait and spilled the 24-register producer before it. Other
          // block sizes look up at the copies (divisions need registers).
          auto lookup = [&](int32_t sl) -> int32_t {
            const int32_t logical =
                L == 1 ? sl >> p.blockShift : sl / p.blockSize;
            return sl < ke && logical < p.maxBlocksPerSeq
                       ? __ldg(table + logical)
                       : -1;
          };
          constexpr int AHEAD = (KEYS_PER_THREAD + 1) / 2;
          int32_t blk[AHEAD];
#pragma unroll
          for (int j = 0; j < AHEAD; ++j)
            blk[j] = L == 1 ? lookup(t0 + j * KEYS_PER_PASS) : -1;
          // A block's third stage goes out only once its first has
          // landed: the first tile (and Q) then shares the memory system
          // with one more stage rather than all the others.
          if (g == 2)
            mbarWait(fullBar, 0);
          if (g >= NST)
            mbarWait(emptyBar + 8 * st, (g / NST - 1) & 1);
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
                  L == 1 && j < AHEAD ? blk[j < AHEAD ? j : 0] : lookup(sl);
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
                  TPR == 8
                      ? j * PASS_BYTES + m * (SK * 128) + sOff[0]
                      : j * PASS_BYTES + (m / 2) * (SK * 128) + sOff[m % 2];
              cpAsync16(kBase + at, kRow + m * TPR * 8, valid);
              cpAsync16(vBase + at, vRow + m * TPR * 8, valid);
            }
          }
          cpAsyncArriveNoinc(fullBar + 8 * st);
        }
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
            if (!p.paged)
              produce(std::integral_constant<int, 0>{});
            else if (p.blockShift >= 0)
              produce(std::integral_constant<int, 1>{});
            else
              produce(std::integral_constant<int, 2>{});
            if (!persist)
              break;
            // The next item is claimed only now, a few tiles before it is
            // needed: claimed when this one started, a block busy with a
            // heavy item held the next one too, and SMs ended 87 us apart.
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
              if (atomicAddAcqRel(p.counters + 1, 1) ==
                  int32_t(gridDim.x) - 1) {
                atomicExch(p.counters, 0);
                atomicExch(p.counters + 1, 0);
              }
            }
            break;
          }
        } else {
          if (!p.paged)
            produce(std::integral_constant<int, 0>{});
          else if (p.blockShift >= 0)
            produce(std::integral_constant<int, 1>{});
          else
            produce(std::integral_constant<int, 2>{});
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
      return;
    }
    pdlWait(); // before Q, which the previous kernel may write
    pdlLaunchDependents();
    warpgroupSetMaxRegs<kComputeRegs, true>();
  } else {
    Lookup ahead[NST] = {};
#pragma unroll
    for (int s = 0; s < NST; ++s)
      if (s < nTiles)
        lookupStage(s, ahead[s]);
    // Slots before the new tokens were written by earlier steps, not by
    // the previous kernel (Attention.h): when the prologue's stages hold
    // only such slots, their copies go out before the dependency wait and
    // stream in under the previous kernel's tail.
    const bool early = min(ke, ks + (NST - 1) * SK) <= prefix;
    if (!early) {
      pdlWait();
      pdlLaunchDependents();
    }
#pragma unroll
    for (int s = 0; s < NST - 1; ++s) {
      if (s < nTiles)
        loadStage(s, s, ahead[s]);
      cpAsyncCommit();
    }
    if (early) {
      pdlWait();
      pdlLaunchDependents();
    }
#pragma unroll
    for (int j = 0; j < KEYS_PER_THREAD; ++j)
      next[j] = ahead[NST - 1][j];
  }

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
    const int32_t wRow = row0 + (WM > 1 ? 16 * warp : 0);
    int32_t rTok[2], rSlot[2], rPos[2];
    bool rValid[2];
    uint32_t qf[QS ? 1 : D / 16][4];
    const uint32_t *qSrc[2]; // wgmma: the rows' Q (rowQFragments)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int32_t row = wRow + (lane >> 2) + 8 * h;
      rValid[h] = row < rowsTotal && row < row0 + ROWS;
      int32_t tok = rValid[h] ? row / G : 0;
      int g = rValid[h] ? row - tok * G : 0;
      rTok[h] = tok;
      rSlot[h] = prefix + tok;
      rPos[h] = pos ? __ldg(pos + tok) : rSlot[h];
      if constexpr (!QS) {
        const uint32_t *src = reinterpret_cast<const uint32_t *>(
            p.q + ((int64_t(qBegin) + tok) * p.numQHeads + kvHead * G + g) * D);
        if constexpr (WG) {
          qSrc[h] = src;
        } else {
#pragma unroll
          for (int kk = 0; kk < D / 16; ++kk) {
            int c = kk * 8 + (lane & 3); // uint32 index: element 2c
            qf[kk][0 + h] = rValid[h] ? __ldg(src + c) : 0u;
            qf[kk][2 + h] = rValid[h] ? __ldg(src + c + 4) : 0u;
          }
        }
      }
    }
    if constexpr (WG && !QS)
      rowQFragments<D>(qSrc, rValid, lane, qf);
    // Bounds over the warp's rows that decide whether a key slice needs the
    // per-element mask.
    int32_t wMaxPos =
        max(rValid[0] ? rPos[0] : INT32_MIN, rValid[1] ? rPos[1] : INT32_MIN);
    int32_t wMinSlot =
        min(rValid[0] ? rSlot[0] : INT32_MAX, rValid[1] ? rSlot[1] : INT32_MAX);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      wMaxPos = max(wMaxPos, __shfl_xor_sync(0xffffffffu, wMaxPos, o));
      wMinSlot = min(wMinSlot, __shfl_xor_sync(0xffffffffu, wMinSlot, o));
    }

    float o[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float mRow[2] = {-INFINITY, -INFINITY}, lRow[2] = {0.f, 0.f};

    const int keyOff = WN > 1 ? KW * warp : 0; // this warp's keys in a stage
    // ldmatrix addresses: a lane's row is the same in every 16-key step up to
    // a constant, and of its chunk index only the low three bits meet the
    // swizzle, so four offsets per operand cover every step (step i and i + 4
    // are 128 bytes apart).
    uint32_t kLd[4], vLd[4];
    {
      const int lm = lane >> 3, lr = lane & 7;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        kLd[i] = uint32_t(
            ((keyOff + (lm >> 1) * 8 + lr) * CH + ((2 * i + (lm & 1)) ^ lr)) *
            16);
        vLd[i] = uint32_t(
            ((keyOff + (lm & 1) * 8 + lr) * CH + ((2 * i + (lm >> 1)) ^ lr)) *
            16);
      }
    }
    const int32_t *parents = tree ? p.parentIds + qBegin : nullptr;

    // Masks and online softmax for the scores s of the keys from slot tLo
    // on (s becomes P, unnormalised); pScale receives the factor by which O
    // must be rescaled before this tile's PV adds to it.
    auto softmaxScores = [&](auto &s, const int32_t tLo, float(&pScale)[2]) {
      // KW keys, or a new-key sliver's 16
      constexpr int NK =
          8 * int(std::extent_v<std::remove_reference_t<decltype(s)>>);
      // Mask only where some key of the slice may be invisible: past the
      // range, among the new tokens, or older than a row's window.
      const bool needMask = tLo + NK > ke ||
                            (tree ? tLo + NK > prefix : tLo + NK > wMinSlot) ||
                            (p.window > 0 && tLo <= wMaxPos - p.window) ||
                            (pos && tLo + NK > prefix);
      // One test per tile, outside the element loops: most tiles need no
      // mask, and their softmax is then free of branches.
      if constexpr (WG && NK == 16) {
        // A new-key sliver (setItem): the producer's visibility bits.
        mbarWait(visBar, 0);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const uint64_t v =
              sNewVis[warp * 16 + (lane >> 2) + 8 * h] >> (tLo - prefix);
#pragma unroll
          for (int n = 0; n < NK / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int j = n * 8 + (lane & 3) * 2 + e;
              s[n][2 * h + e] = (v >> j) & 1 ? s[n][2 * h + e] : -INFINITY;
            }
        }
      } else if (needMask) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // tree: bit j of anc[j / 64] = key tLo + j is an ancestor
          uint64_t anc[(NK + 63) / 64] = {};
          if (tree && tLo + NK > prefix) {
            for (int32_t a = rTok[h]; a >= 0 && prefix + a >= tLo;
                 a = __ldg(parents + a)) {
              const int32_t j = prefix + a - tLo;
              // written per word so that anc stays in registers
#pragma unroll
              for (int w = 0; w < (NK + 63) / 64; ++w)
                if (j >= 64 * w && j < min(NK, 64 * w + 64))
                  anc[w] |= 1ull << (j - 64 * w);
            }
          }
#pragma unroll
          for (int n = 0; n < NK / 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              int j = n * 8 + (lane & 3) * 2 + e;
              int32_t slot = tLo + j;
              bool vis = slot < ke;
              if (slot >= prefix)
                vis = vis && (tree ? ((anc[n / 8] >> (j - 64 * (n / 8))) & 1)
                                   : slot <= rSlot[h]);
              if (p.window > 0 && vis) {
                int32_t kPos =
                    slot >= prefix && pos ? __ldg(pos + (slot - prefix)) : slot;
                vis = rPos[h] - kPos < p.window;
              }
              if (!vis)
                s[n][2 * h + e] = -INFINITY;
            }
        }
      }
      // Online softmax (base 2) with the scale folded into the exponent's
      // FMA: the maximum is taken over raw scores (the scale is positive,
      // checked at launch) and m is kept scaled. A row that has seen nothing
      // keeps m = -inf and uses 0 as its base so that no inf - inf appears.
      const float c = p.scaleLog2;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -INFINITY;
#pragma unroll
        for (int n = 0; n < NK / 8; ++n)
          mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float mNew = fmaxf(mRow[h], mx * c);
        const float base = mNew == -INFINITY ? 0.f : mNew;
        pScale[h] = mNew == mRow[h] ? 1.f : fastExp2(mRow[h] - base);
        mRow[h] = mNew;
        float sum = 0.f;
#pragma unroll
        for (int n = 0; n < NK / 8; ++n) {
          s[n][2 * h] = fastExp2(fmaf(s[n][2 * h], c, -base));
          s[n][2 * h + 1] = fastExp2(fmaf(s[n][2 * h + 1], c, -base));
          sum += s[n][2 * h] + s[n][2 * h + 1];
        }
        lRow[h] = lRow[h] * pScale[h] + sum;
      }
    };
    auto scaleO = [&](const float(&pScale)[2]) {
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][0] *= pScale[0];
        o[n][1] *= pScale[0];
        o[n][2] *= pScale[1];
        o[n][3] *= pScale[1];
      }
    };
    // Once a row's maximum has settled (most tiles after the first few) its
    // scale is 1: a warp whose rows all kept theirs skips the rescale of O,
    // which is the bulk of the softmax's multiplies.
    auto needRescale = [&](const float(&pScale)[2]) {
      return __any_sync(0xffffffffu, pScale[0] != 1.f || pScale[1] != 1.f);
    };
    auto rescaleO = [&](const float(&pScale)[2]) {
      if (needRescale(pScale))
        scaleO(pScale);
    };
    auto softmaxTile = [&](float(&s)[KW / 8][4], const int32_t tLo) {
      float pScale[2];
      softmaxScores(s, tLo, pScale);
      rescaleO(pScale);
    };
    // P as the A fragments of the PV product: the S accumulators of two key
    // n-tiles are the A fragment of one 16-key step.
    auto packP = [&](const float(&s)[KW / 8][4], uint32_t(&a)[KW / 16][4]) {
#pragma unroll
      for (int kk = 0; kk < KW / 16; ++kk) {
        a[kk][0] = Ops::pack(s[2 * kk][0], s[2 * kk][1]);
        a[kk][1] = Ops::pack(s[2 * kk][2], s[2 * kk][3]);
        a[kk][2] = Ops::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        a[kk][3] = Ops::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      }
    };

    if constexpr (WG) {
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
        packP(sAcc, pPrev);
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
            scaleO(pScale);
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
              scaleO(pScale);
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
    } else {
      for (int it = 0; it < nTiles; ++it) {
        if (it + NST - 1 < nTiles)
          loadStage(it + NST - 1, (it + NST - 1) % NST, next);
        cpAsyncCommit();
        if (it + NST < nTiles)
          lookupStage(it + NST, next); // used by the next iteration's copies
        cpAsyncWait<NST - 1>();
        __syncthreads();
        STRATA_ATTN_TRACE_MARK(it == 0, 1);
        const uint32_t kBase = smemBase + (it % NST) * STAGE_BYTES;
        const uint32_t vBase = kBase + SK * D * 2;
        const int32_t tLo = ks + it * SK + keyOff; // slot of this warp's key 0

        if (tLo < ke) {
          // S = Q K^T over this warp's KW keys.
          float s[KW / 8][4];
#pragma unroll
          for (int n = 0; n < KW / 8; ++n)
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
          for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
            for (int nb = 0; nb < KW / 16; ++nb) {
              uint32_t bf[4];
              ldmatrixX4(bf, kBase + kLd[kk % 4] + (kk / 4) * 128 +
                                 nb * 16 * CH * 16);
              mma16816<T>(s[2 * nb], qf[kk], bf[0], bf[1]);
              mma16816<T>(s[2 * nb + 1], qf[kk], bf[2], bf[3]);
            }
          }
          softmaxTile(s, tLo);
          uint32_t a[KW / 16][4];
          packP(s, a);
#pragma unroll
          for (int kk = 0; kk < KW / 16; ++kk) {
#pragma unroll
            for (int nd = 0; nd < D / 16; ++nd) {
              uint32_t bf[4];
              ldmatrixX4Trans(bf, vBase + vLd[nd % 4] + (nd / 4) * 128 +
                                      kk * 16 * CH * 16);
              mma16816<T>(o[2 * nd], a[kk], bf[0], bf[1]);
              mma16816<T>(o[2 * nd + 1], a[kk], bf[2], bf[3]);
            }
          }
        }
        __syncthreads();
      }
      STRATA_ATTN_TRACE_MARK(true, 2);
    }
    // From here on only compute threads take part (the producer has left,
    // or in a persistent block fills the stages for the next item); the
    // stages become the epilogue's buffer (decode, rows merged in a cluster,
    // neither ever persistent) once every warp is done with them.
    cpAsyncWait<0>();
    if (!WG)
      __syncthreads();
    else if (clustered) // the end stages O in shared memory
      namedBarSync(3, NTC);

    const int64_t item =
        (b * p.numKvHeads + kvHead) * int64_t(p.rowTiles) + rowTile;
    using Partial = std::conditional_t<WG, uint16_t, float>;
    const bool viaGlobal = p.numSplits > 1 && !clustered;
    Partial *partO = viaGlobal ? static_cast<Partial *>(p.partO) +
                                     (item * p.numSplits + split) * ROWS * D
                               : nullptr;
    float *partLse =
        viaGlobal ? p.partLse + (item * p.numSplits + split) * ROWS : nullptr;
    const int validRows = min(ROWS, rowsTotal - row0);
    // Rows: merged in a cluster, by their blocks or a kernel.
    if constexpr (WG) {
      rowsEpilogue<T, D, ROWS, NTC>(p, o, mRow, lRow, smem, warp, lane, ctid,
                                    row0, validRows, qBegin, kvHead, partO,
                                    partLse, clustered);
      if (viaGlobal && p.peerMerge)
        peerMergeRows<T, D, ROWS, NTC>(p, ctid, split, item, row0, validRows,
                                       qBegin, kvHead, &sInfo[1]);
    } else
      decodeEpilogue<T, D, WN, NTC>(p, o, mRow, lRow, rValid, smem, warp, lane,
                                    ctid, row0, validRows, qBegin, kvHead, item,
                                    partO, partLse, &sInfo[1]);
    STRATA_ATTN_TRACE_END(ctid == 0, nTiles,
                          persist ? (b * p.numKvHeads + kvHead) * p.rowTiles +
                                        p.rowTiles - 1 - rowTile
                                  : -1);
    // Configurations that never run persistent leave by a warp vote: with
    // the plain test (a constant there) ptxas kept the 64-key kernel's
    // main-loop values out of uniform registers (17 against 25 without the
    // item loop) and a 4 x 2048 prefill ran 10% longer. The 128-key
    // kernel, the other way round, lost them to the vote.
    if (!WG || (QS ? !persist : __any_sync(0xffffffffu, true)))
      break;
    const int doneItems = sLoop[warp] + 1;
    __syncwarp();
    sLoop[warp] = doneItems;
    __syncwarp();
  }
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONKERNEL_CUH

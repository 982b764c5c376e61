// The paged decode kernel (DecodeTraits, AttentionTraits.cuh;
// FlashAttention-2 structure, mma.sync m16n8k16, fp32 accumulation).
//
// Rows. The q heads of one kv head are processed together: row r of a
// work item is query token r / G, q head kvHead * G + r % G (G = group
// size); a decode item is the G <= 16 heads of one token. K and V tiles
// are then loaded once for all G heads, which is what makes GQA decode
// memory bound on the cache alone.
//
// Warps. 16 rows per block; each of the WN warps takes its own KW keys
// of every WN * KW-key stage, and the warps' partial softmax states are
// merged through shared memory at the end (decodeEpilogue).
//
// Stages. Every thread copies: K and V tiles go global -> shared with
// cp.async (16 bytes per thread, L1 bypassed, evict-first in L2), NST
// stages deep, the block ids of a stage looked up a stage ahead
// (AttentionDecodeCopies.cuh); 16-byte chunks are XOR-swizzled by row so
// that ldmatrix reads are conflict free. Keys outside the range are
// zero-filled so that masked weights never multiply garbage.
//
// Split-KV (Attention.h): each split's partial (O / l, log2-sum-exp, fp32)
// goes to the workspace and the last block of an item to finish merges
// them (AttentionEpilogue.cuh).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONDECODEKERNEL_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONDECODEKERNEL_CUH

#include "kernels/attention/AttentionBlock.cuh"
#include "kernels/attention/AttentionDecodeCopies.cuh"
#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionEpilogue.cuh"
#include "kernels/attention/AttentionItem.cuh"
#include "kernels/attention/AttentionSoftmax.cuh"
#include "kernels/attention/AttentionTrace.cuh"
#include "kernels/attention/AttentionTraits.cuh"
#include "kernels/common/Pdl.cuh"

#include <cstdint>

namespace strata::kernels::attention_detail {

/// Grid: x = rowTile + rowTiles * split (row tiles of one split adjacent,
/// so that they read the same keys while these are in L2), y = kv head,
/// z = sequence. Tr: DecodeTraits<D>.
template <typename T, typename Tr>
__global__ void __launch_bounds__(Tr::kThreads, Tr::kMinBlocks)
    attentionDecodeKernel(const __grid_constant__ AttnParams p) {
  static_assert(!Tr::kWgmma, "the decode kernel runs on mma.sync");
  constexpr int D = Tr::kHeadDim;
  constexpr int WN = Tr::kWarpsN, KW = Tr::kKeysPerWarp, NST = Tr::kStages;
  constexpr int NTC = Tr::kComputeThreads;
  constexpr int ROWS = Tr::kRows;
  constexpr int SK = Tr::kStageKeys; // keys per stage
  constexpr int CH = D / 8;          // 16-byte chunks per row
  constexpr int STAGE_BYTES = Tr::kStageBytes;
  using Loader = LoaderPlaces<Tr>;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int32_t sInfo[4];
  STRATA_ATTN_TRACE_BEGIN;

  const int tid = threadIdx.x, lane = tid & 31;
  const int ctid = computeThread<Tr>(tid), warp = ctid >> 5;
  const int G = p.group;
  // The block's item (AttentionItem.cuh); the names below are its fields.
  AttnItem cur;
  int &rowTile = cur.at.rowTile, &split = cur.at.split, &kvHead = cur.at.kvHead;
  int64_t &b = cur.at.seq;

  int32_t &qBegin = cur.qBegin, &prefix = cur.prefix,
          &rowsTotal = cur.rowsTotal, &row0 = cur.row0, &ks = cur.ks,
          &ke = cur.ke, &nTiles = cur.nTiles;
  const bool tree = p.parentIds != nullptr;
  locateItem(p, int32_t(blockIdx.x), false, false, cur.at);
  // The dependency wait comes after the lengths, positions and block tables
  // are read (step inputs no kernel writes, Attention.h) and the first
  // stages' copies of cached keys issued.
  if (!setItem<ROWS, SK, false, false>(p, cur, tid, sInfo)) {
    pdlWait(); // no block leaves before the wait (Pdl.cuh)
    return;    // the whole item (every split) leaves: counters untouched
  }

  const uint32_t smemBase =
      static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  Loader ld;
  setLoaderPlaces<Tr>(p, tid, ld);
  const DecodeCopies<D, SK, Loader::LT, Tr::kLoadersPerRow> copies{
      p,      cur,     smemBase, ld.keyInPass, ld.sOff,
      ld.kSrc, ld.vSrc, l2EvictFirst()};
  using Lookup = typename decltype(copies)::Lookup;

  Lookup next; // block ids of the next tile to be issued
  {
    Lookup ahead[NST] = {};
#pragma unroll
    for (int s = 0; s < NST; ++s)
      if (s < nTiles)
        copies.lookupStage(s, ahead[s]);
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
        copies.loadStage(s, s, ahead[s]);
      cpAsyncCommit();
    }
    if (early) {
      pdlWait();
      pdlLaunchDependents();
    }
#pragma unroll
    for (int j = 0; j < Loader::KEYS_PER_THREAD; ++j)
      next[j] = ahead[NST - 1][j];
  }

  __syncwarp();
  // Q: A fragments of each warp's 16 rows in registers (rows past the item
  // zero).
  int32_t rTok[2], rSlot[2], rPos[2];
  bool rValid[2];
  uint32_t qf[D / 16][4];
  int32_t wMaxPos, wMinSlot;
  setWarpRows<Tr>(p, cur, G, warp, lane, rTok, rSlot, rPos, rValid, wMaxPos,
                  wMinSlot, qf);

  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
    o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float mRow[2] = {-INFINITY, -INFINITY}, lRow[2] = {0.f, 0.f};

  const int keyOff = KW * warp; // this warp's keys in a stage
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
  const MaskRows maskRows{p,       cur,     tree,       parents,
                          rTok,  rSlot, rPos,     wMaxPos,
                          wMinSlot, nullptr, 0u, warp, lane};
  // Masks and online softmax for the scores s of the keys from slot tLo
  // on (AttentionSoftmax.cuh), then O rescaled where the maxima moved.
  auto softmaxScores = [&](auto &s, const int32_t tLo, float(&pScale)[2]) {
    maskScores<false>(s, tLo, maskRows);
    onlineSoftmax(s, p.scaleLog2, mRow, lRow, pScale);
  };
  auto rescaleO = [&](const float(&pScale)[2]) {
    if (needRescale(pScale))
      scaleO<D>(o, pScale);
  };
  auto softmaxTile = [&](float(&s)[KW / 8][4], const int32_t tLo) {
    float pScale[2];
    softmaxScores(s, tLo, pScale);
    rescaleO(pScale);
  };

  for (int it = 0; it < nTiles; ++it) {
    // The lookups go out before the copies: issued after them, each
    // thread's loads queue behind its 16 copies.
    Lookup after;
    if (it + NST < nTiles)
      copies.lookupStage(it + NST, after);
    if (it + NST - 1 < nTiles)
      copies.loadStage(it + NST - 1, (it + NST - 1) % NST, next);
    cpAsyncCommit();
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
          ldmatrixX4(bf,
                     kBase + kLd[kk % 4] + (kk / 4) * 128 + nb * 16 * CH * 16);
          mma16816<T>(s[2 * nb], qf[kk], bf[0], bf[1]);
          mma16816<T>(s[2 * nb + 1], qf[kk], bf[2], bf[3]);
        }
      }
      softmaxTile(s, tLo);
      uint32_t a[KW / 16][4];
      packP<T, KW>(s, a);
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
    if (it + NST < nTiles)
#pragma unroll
      for (int j = 0; j < Loader::KEYS_PER_THREAD; ++j)
        next[j] = after[j];
    __syncthreads();
  }
  STRATA_ATTN_TRACE_MARK(true, 2);
  // The stages become the epilogue's buffer once every warp is done with
  // them.
  cpAsyncWait<0>();
  __syncthreads();

  const int64_t item =
      (b * p.numKvHeads + kvHead) * int64_t(p.rowTiles) + rowTile;
  const SplitOut<Tr, float> out = splitOut<Tr, float>(p, item, split,
                                                      p.numSplits > 1);
  const int validRows = min(ROWS, rowsTotal - row0);
  decodeEpilogue<T, D, WN, NTC>(p, o, mRow, lRow, rValid, smem, warp, lane,
                                ctid, row0, validRows, qBegin, kvHead, item,
                                out.partO, out.partLse, &sInfo[1]);
  STRATA_ATTN_TRACE_END(ctid == 0, nTiles, -1);
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONDECODEKERNEL_CUH

// Masks and the online softmax of the attention kernel's compute warps
// (AttentionDecodeKernel.cuh, AttentionRowsKernel.cuh), for one slice of scores at a time: a tile's KW
// keys or a new-key sliver's 16. A lane holds two rows of its warp's 16
// (rows lane / 4 and lane / 4 + 8) and, per 8-key n-tile, two columns of
// each: s[n][2 h + e] is row h, key n * 8 + (lane & 3) * 2 + e.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONSOFTMAX_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONSOFTMAX_CUH

#include "kernels/attention/AttentionDevice.cuh"
#include "kernels/attention/AttentionItem.cuh"
#include "kernels/common/Barriers.cuh"

#include <cstdint>
#include <type_traits>

namespace strata::kernels::attention_detail {

/// What the masks know of the item and of a lane's two rows: the item's
/// key range ends at it.ke, and slots from it.prefix on are the new
/// tokens'; per row its token, its slot and its position (rTok, rSlot,
/// rPos); over the warp's rows the largest position and the smallest
/// slot. tree: a token's ancestors are followed through parents; it.pos:
/// the new tokens' positions (else a slot is its position); p.window: 0
/// for none. Slivers (SLIV): the producer's visible-new-key bits per row
/// (sNewVis, complete on visBar). The item's fields are read at each use:
/// a split with slivers ends its range at its new keys before their
/// masks.
struct MaskRows {
  const AttnParams &p;
  const AttnItem &it;
  bool tree;
  const int32_t *parents;
  const int32_t (&rTok)[2], (&rSlot)[2], (&rPos)[2];
  const int32_t &wMaxPos, &wMinSlot;
  const uint64_t *sNewVis;
  uint32_t visBar;
  int warp, lane;
};

/// Sets to -inf the scores s of keys from slot tLo on that a row may not
/// see: past the range, new tokens after it (causal) or not its ancestors
/// (tree), older than its window. WG: a 16-key slice is a new-key sliver,
/// masked by the producer's bits.
template <bool WG, typename S>
__device__ __forceinline__ void maskScores(S &s, const int32_t tLo,
                                           const MaskRows &m) {
  // KW keys, or a new-key sliver's 16
  constexpr int NK = 8 * int(std::extent_v<S>);
  const AttnParams &p = m.p;
  const int32_t &ke = m.it.ke, &prefix = m.it.prefix;
  const int32_t *const &pos = m.it.pos;
  const bool tree = m.tree;
  const int lane = m.lane;
  // Mask only where some key of the slice may be invisible: past the
  // range, among the new tokens, or older than a row's window.
  const bool needMask = tLo + NK > ke ||
                        (tree ? tLo + NK > prefix : tLo + NK > m.wMinSlot) ||
                        (p.window > 0 && tLo <= m.wMaxPos - p.window) ||
                        (pos && tLo + NK > prefix);
  // One test per tile, outside the element loops: most tiles need no
  // mask, and their softmax is then free of branches.
  if constexpr (WG && NK == 16) {
    // A new-key sliver (setItem): the producer's visibility bits.
    mbarWait(m.visBar, 0);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint64_t v =
          m.sNewVis[m.warp * 16 + (lane >> 2) + 8 * h] >> (tLo - prefix);
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
        for (int32_t a = m.rTok[h]; a >= 0 && prefix + a >= tLo;
             a = __ldg(m.parents + a)) {
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
                               : slot <= m.rSlot[h]);
          if (p.window > 0 && vis) {
            int32_t kPos =
                slot >= prefix && pos ? __ldg(pos + (slot - prefix)) : slot;
            vis = m.rPos[h] - kPos < p.window;
          }
          if (!vis)
            s[n][2 * h + e] = -INFINITY;
        }
    }
  }
}

/// Online softmax (base 2) of the masked scores s: s becomes P
/// (unnormalised), mRow / lRow the rows' running maximum (scaled) and
/// this lane's share of their sums; pScale receives the factor by which O
/// must be rescaled before this slice's PV adds to it. c: the attention
/// scale times log2(e).
template <typename S>
__device__ __forceinline__ void
onlineSoftmax(S &s, const float c, float (&mRow)[2], float (&lRow)[2],
              float (&pScale)[2]) {
  constexpr int NK = 8 * int(std::extent_v<S>);
  // The scale is folded into the exponent's FMA: the maximum is taken over
  // raw scores (the scale is positive, checked at launch) and m is kept
  // scaled. A row that has seen nothing keeps m = -inf and uses 0 as its
  // base so that no inf - inf appears.
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
}

/// O's rows times their factors pScale (rows h = 0, 1 of the lane).
template <int D>
__device__ __forceinline__ void scaleO(float (&o)[D / 8][4],
                                       const float (&pScale)[2]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    o[n][0] *= pScale[0];
    o[n][1] *= pScale[0];
    o[n][2] *= pScale[1];
    o[n][3] *= pScale[1];
  }
}

/// Whether any row of the warp must rescale O. Once a row's maximum has
/// settled (most tiles after the first few) its scale is 1: a warp whose
/// rows all kept theirs skips the rescale of O, which is the bulk of the
/// softmax's multiplies.
__device__ __forceinline__ bool needRescale(const float (&pScale)[2]) {
  return __any_sync(0xffffffffu, pScale[0] != 1.f || pScale[1] != 1.f);
}

/// P as the A fragments of the PV product: the S accumulators of two key
/// n-tiles are the A fragment of one 16-key step.
template <typename T, int KW>
__device__ __forceinline__ void packP(const float (&s)[KW / 8][4],
                                      uint32_t (&a)[KW / 16][4]) {
  using Ops = MmaOps<T>;
#pragma unroll
  for (int kk = 0; kk < KW / 16; ++kk) {
    a[kk][0] = Ops::pack(s[2 * kk][0], s[2 * kk][1]);
    a[kk][1] = Ops::pack(s[2 * kk][2], s[2 * kk][3]);
    a[kk][2] = Ops::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    a[kk][3] = Ops::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONSOFTMAX_CUH

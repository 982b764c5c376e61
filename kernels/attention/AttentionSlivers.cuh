// New-key slivers of the attention kernel's rows configuration
// (AttentionRowsKernel.cuh, SLIV): split items whose new tokens' keys fit one
// 64-key stage give them to the first splits in 16-key slivers, and each
// sliver's mask is its rows' visible new keys as bits, computed here by
// the producer warps so that the sliver's softmax only shifts them out
// instead of evaluating the tiles' per-key mask.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONSLIVERS_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONSLIVERS_CUH

#include <cstdint>

namespace strata::kernels::attention_detail {

/// The new keys the row of new token `tok` sees (-1: a row past the item,
/// which sees none), bit a for new token a (tok < 64): its ancestors and
/// itself in a tree, else tokens 0..tok (causal), within `window` (0:
/// none) of its position: the slots, or `pos` (a tree's positions of the
/// new tokens) when given. Every lane of the warp calls it: a tree's chain
/// follows newPar (the parent ids of new tokens lane and lane + 32, -1
/// past the tokens) by shuffles, one step for all lanes at a time.
__device__ __forceinline__ uint64_t newKeysVisible(int32_t tok, bool tree,
                                                   const int32_t (&newPar)[2],
                                                   int32_t window,
                                                   const int32_t *pos) {
  uint64_t vis = 0;
  if (tree) {
    int32_t at = tok;
    vis = at >= 0 ? 1ull << at : 0ull;
    // Parents precede their children (Attention.h): one that does not
    // ends the chain, so a malformed tree cannot loop.
    while (__any_sync(0xffffffffu, at >= 0)) {
      const int32_t lo = __shfl_sync(0xffffffffu, newPar[0], at & 31),
                    hi = __shfl_sync(0xffffffffu, newPar[1], at & 31);
      const int32_t up = at < 32 ? lo : hi;
      at = at >= 0 && up >= 0 && up < at ? up : -1;
      if (at >= 0)
        vis |= 1ull << at;
    }
  } else if (tok >= 0) { // causal: new tokens 0..tok
    vis = tok == 63 ? ~0ull : (2ull << tok) - 1;
  }
  if (window > 0 && tok >= 0) {
    // Keys at positions rPos - W + 1 and later.
    if (pos) {
      const int32_t rPos = __ldg(pos + tok);
      for (uint64_t v = vis; v != 0; v &= v - 1) {
        const int a = __ffsll(static_cast<long long>(v)) - 1;
        if (rPos - __ldg(pos + a) >= window)
          vis &= ~(1ull << a);
      }
    } else {
      const int32_t first = tok - window + 1; // the oldest seen
      if (first >= 64)
        vis = 0;
      else if (first > 0)
        vis &= ~((1ull << first) - 1);
    }
  }
  return vis;
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONSLIVERS_CUH

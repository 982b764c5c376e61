// The per-head decay rates the lightning kernels are checked and measured
// with: log-spaced over the range real models use (MiniMax's slopes lie in
// [1e-3, 1]), so that both the slowly and the quickly forgetting heads are
// covered by every test and benchmark.
#ifndef STRATA_KERNELS_LINEAR_ATTENTION_DECAYRANGE_H
#define STRATA_KERNELS_LINEAR_ATTENTION_DECAYRANGE_H

#include <cmath>
#include <vector>

namespace strata::kernels {

/// `heads` rates from 1e-3 (head 0) to 1 (last head); 1e-2 for one head.
inline std::vector<float> logSpacedDecayRates(int heads) {
  std::vector<float> rates(size_t(heads > 0 ? heads : 0));
  for (int h = 0; h < heads; ++h)
    rates[size_t(h)] =
        heads == 1 ? 1e-2f : std::pow(10.0f, -3.0f + 3.0f * h / (heads - 1));
  return rates;
}

} // namespace strata::kernels

#endif // STRATA_KERNELS_LINEAR_ATTENTION_DECAYRANGE_H

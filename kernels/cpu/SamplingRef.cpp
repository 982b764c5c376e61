#include "kernels/cpu/SamplingRef.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace strata::kernels {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
} // namespace

double counterUniform(uint64_t seed, uint64_t seqId, uint64_t step) {
  uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ seqId) ^ step);
  // The top 53 bits give every double in [0, 1) with equal spacing.
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

int64_t argmaxRef(const float *logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (logits[i] > logits[best])
      best = i;
  return best;
}

int64_t sampleFilteredRef(const float *logits, int64_t vocab,
                          double temperature, int64_t topK, double topP,
                          double uniform) {
  // Descending logit order, ties by token id, so that the filters and the
  // walk below are deterministic.
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  auto byLogit = [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  int64_t keep = vocab;
  if (topK > 0 && topK < vocab) {
    keep = topK;
    std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                      byLogit);
  } else {
    std::sort(order.begin(), order.end(), byLogit);
  }

  std::vector<double> probs(keep);
  double maxLogit = logits[order[0]];
  double total = 0.0;
  for (int64_t i = 0; i < keep; ++i) {
    probs[i] = std::exp((logits[order[i]] - maxLogit) / temperature);
    total += probs[i];
  }
  if (topP < 1.0) {
    double cumulative = 0.0;
    int64_t cut = keep;
    for (int64_t i = 0; i < keep; ++i) {
      cumulative += probs[i];
      if (cumulative >= topP * total) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    total = std::accumulate(probs.begin(), probs.begin() + keep, 0.0);
  }

  double target = uniform * total;
  double cumulative = 0.0;
  for (int64_t i = 0; i < keep; ++i) {
    cumulative += probs[i];
    if (target < cumulative)
      return order[i];
  }
  return order[keep - 1]; // rounding left target at the very top
}

} // namespace strata::kernels

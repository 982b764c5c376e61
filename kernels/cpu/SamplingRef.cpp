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

namespace {
/// The candidates a draw keeps: `order` receives token ids by logit
/// descending (ties by id), `probs` their unnormalised probabilities; the
/// first `keep` of them survive top-k and top-p, with mass `total`.
struct Kept {
  std::vector<int64_t> order;
  std::vector<double> probs;
  int64_t keep = 0;
  double total = 0.0;
};

Kept keptCandidates(const float *logits, int64_t vocab, double temperature,
                    int64_t topK, double topP) {
  Kept k;
  k.order.resize(size_t(vocab));
  std::iota(k.order.begin(), k.order.end(), 0);
  auto byLogit = [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  k.keep = vocab;
  if (topK > 0 && topK < vocab) {
    k.keep = topK;
    std::partial_sort(k.order.begin(), k.order.begin() + k.keep,
                      k.order.end(), byLogit);
  } else {
    std::sort(k.order.begin(), k.order.end(), byLogit);
  }

  k.probs.resize(size_t(k.keep));
  const double maxLogit = logits[k.order[0]];
  for (int64_t i = 0; i < k.keep; ++i) {
    k.probs[i] = std::exp((logits[k.order[i]] - maxLogit) / temperature);
    k.total += k.probs[i];
  }
  if (topP < 1.0) {
    double cumulative = 0.0;
    int64_t cut = k.keep;
    for (int64_t i = 0; i < k.keep; ++i) {
      cumulative += k.probs[i];
      if (cumulative >= topP * k.total) {
        cut = i + 1;
        break;
      }
    }
    k.keep = cut;
    k.total = std::accumulate(k.probs.begin(), k.probs.begin() + k.keep, 0.0);
  }
  return k;
}
} // namespace

int64_t sampleFilteredRef(const float *logits, int64_t vocab,
                          double temperature, int64_t topK, double topP,
                          double uniform) {
  const Kept k = keptCandidates(logits, vocab, temperature, topK, topP);
  const double target = uniform * k.total;
  double cumulative = 0.0;
  for (int64_t i = 0; i < k.keep; ++i) {
    cumulative += k.probs[i];
    if (target < cumulative)
      return k.order[i];
  }
  return k.order[k.keep - 1]; // rounding left target at the very top
}

void filteredProbsRef(const float *logits, int64_t vocab, double temperature,
                      int64_t topK, double topP, double *probs) {
  std::fill(probs, probs + vocab, 0.0);
  const Kept k = keptCandidates(logits, vocab, temperature, topK, topP);
  for (int64_t i = 0; i < k.keep; ++i)
    probs[k.order[i]] = k.probs[i] / k.total;
}

} // namespace strata::kernels

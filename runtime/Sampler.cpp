#include "runtime/Sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace strata {

std::string SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0)
    return "temperature must be a finite number >= 0, got " +
           std::to_string(temperature);
  if (topK < 0)
    return "top_k must be >= 0 (0 disables it), got " + std::to_string(topK);
  if (!(topP > 0.0 && topP <= 1.0))
    return "top_p must be in (0, 1] (1 disables it), got " +
           std::to_string(topP);
  return "";
}

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

int64_t argmax(const float *logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (logits[i] > logits[best])
      best = i;
  return best;
}

int64_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingParams &params, uint64_t seqId,
                    uint64_t step) {
  if (params.temperature == 0.0 || vocab == 1)
    return argmax(logits, vocab);

  // Candidates in descending logit order, ties by token id, so that the
  // filters and the walk below are deterministic.
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  auto byLogit = [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  int64_t keep = vocab;
  if (params.topK > 0 && params.topK < vocab) {
    keep = params.topK;
    std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                      byLogit);
  } else {
    std::sort(order.begin(), order.end(), byLogit);
  }

  std::vector<double> probs(keep);
  double maxLogit = logits[order[0]];
  double total = 0.0;
  for (int64_t i = 0; i < keep; ++i) {
    probs[i] = std::exp((logits[order[i]] - maxLogit) / params.temperature);
    total += probs[i];
  }
  if (params.topP < 1.0) {
    double cumulative = 0.0;
    int64_t cut = keep;
    for (int64_t i = 0; i < keep; ++i) {
      cumulative += probs[i] / total;
      if (cumulative >= params.topP) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    total = std::accumulate(probs.begin(), probs.begin() + keep, 0.0);
  }

  double target = counterUniform(params.seed, seqId, step) * total;
  double cumulative = 0.0;
  for (int64_t i = 0; i < keep; ++i) {
    cumulative += probs[i];
    if (target < cumulative)
      return order[i];
  }
  return order[keep - 1]; // rounding left target at the very top
}

} // namespace strata

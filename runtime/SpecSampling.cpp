#include "runtime/SpecSampling.h"

#include "kernels/cpu/SamplingRef.h"

#include <algorithm>

namespace strata {

void samplingDistribution(const float *logits, int64_t vocab,
                          const SamplingParams &params,
                          std::vector<double> &probs) {
  probs.resize(size_t(vocab));
  kernels::filteredProbsRef(logits, vocab, params.temperature, params.topK,
                            params.topP, probs.data());
}

double specUniform(const SamplingParams &params, uint64_t stream,
                   uint64_t streamId, uint64_t index) {
  return counterUniform(params.seed ^ stream, streamId, index);
}

int32_t drawFrom(const std::vector<double> &probs, double uniform) {
  double total = 0.0;
  for (double v : probs)
    total += v;
  const double target = uniform * total;
  double cumulative = 0.0;
  int32_t last = 0;
  for (size_t v = 0; v < probs.size(); ++v) {
    if (probs[v] <= 0.0)
      continue;
    cumulative += probs[v];
    last = int32_t(v);
    if (target < cumulative)
      return last;
  }
  return last; // rounding left the target at the very top
}

SpecVerdict judgeProposal(const std::vector<double> &p,
                          const std::vector<double> *q, int32_t x,
                          double acceptUniform, double resampleUniform) {
  const double px = p[size_t(x)];
  const double qx = q ? (*q)[size_t(x)] : 1.0;
  // qx > 0: x was drawn from q. The ratio test keeps x with probability
  // min(1, px / qx).
  if (qx > 0.0 && acceptUniform * qx < px)
    return {true, x};
  std::vector<double> residual(p.size());
  double total = 0.0;
  for (size_t v = 0; v < p.size(); ++v) {
    const double qv = q ? (*q)[v] : (int32_t(v) == x ? 1.0 : 0.0);
    residual[v] = std::max(0.0, p[v] - qv);
    total += residual[v];
  }
  // p == q to the last bit rejects with probability 0; rounding can still
  // land here, and then p itself is the right distribution.
  if (!(total > 0.0))
    return {false, drawFrom(p, resampleUniform)};
  return {false, drawFrom(residual, resampleUniform)};
}

} // namespace strata

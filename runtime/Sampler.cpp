#include "runtime/Sampler.h"

// The sampling math lives in kernels/cpu so that the GPU sampler is tested
// against exactly what the CPU backend draws.
#include "kernels/cpu/SamplingRef.h"

#include <cmath>

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

double counterUniform(uint64_t seed, uint64_t seqId, uint64_t step) {
  return kernels::counterUniform(seed, seqId, step);
}

int64_t argmax(const float *logits, int64_t vocab) {
  return kernels::argmaxRef(logits, vocab);
}

int64_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingParams &params, uint64_t seqId,
                    uint64_t step) {
  if (params.temperature == 0.0 || vocab == 1)
    return kernels::argmaxRef(logits, vocab);
  return kernels::sampleFilteredRef(
      logits, vocab, params.temperature, params.topK, params.topP,
      kernels::counterUniform(params.seed, seqId, step));
}

} // namespace strata

// Token sampling from logits: greedy, temperature, top-k and top-p, under a
// seed.
//
// Randomness is counter based: the uniform number of a draw is a hash of
// (seed, sequence id, step), not the state of a generator. The same request
// therefore samples the same tokens whatever the batch it runs in, and a
// device implementation can reproduce the draw without sharing state.
#ifndef STRATA_RUNTIME_SAMPLER_H
#define STRATA_RUNTIME_SAMPLER_H

#include <cstdint>
#include <string>

namespace strata {

struct SamplingParams {
  /// 0 selects greedy decoding (argmax; ties go to the lowest token id).
  double temperature = 0.0;
  /// Keep the k most likely tokens; 0 disables the filter.
  int64_t topK = 0;
  /// Keep the smallest set of most likely tokens whose probability reaches
  /// topP; 1 disables the filter.
  double topP = 1.0;
  uint64_t seed = 0;

  /// Empty when valid, else what is wrong ("top_p must be in (0, 1], got 0").
  std::string validate() const;
};

/// Uniform number in [0, 1) for draw `step` of sequence `seqId`.
double counterUniform(uint64_t seed, uint64_t seqId, uint64_t step);

/// Index of the largest logit; ties go to the lowest index.
int64_t argmax(const float *logits, int64_t vocab);

/// Samples one token id from `logits` [vocab] with validated `params`.
int64_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingParams &params, uint64_t seqId,
                    uint64_t step);

} // namespace strata

#endif // STRATA_RUNTIME_SAMPLER_H

// CPU reference of token sampling: the counter-based uniform, argmax and the
// temperature / top-k / top-p draw. runtime/Sampler.cpp samples with these,
// and the GPU sampler (kernels/sampling/Sampling.h) is tested against them,
// so both backends pick the same token from the same logits and draw.
//
// Logits are fp32 [vocab]. NaN logits are outside the contract.
#ifndef STRATA_KERNELS_CPU_SAMPLINGREF_H
#define STRATA_KERNELS_CPU_SAMPLINGREF_H

#include <cstdint>

namespace strata::kernels {

/// Uniform number in [0, 1) for draw `step` of sequence `seqId`: a hash of
/// the three, so a draw never depends on the batch it ran in. The GPU
/// sampler computes the same bits.
double counterUniform(uint64_t seed, uint64_t seqId, uint64_t step);

/// Index of the largest logit; ties go to the lowest index.
int64_t argmaxRef(const float *logits, int64_t vocab);

/// One draw with temperature > 0. Candidates are ordered by logit
/// descending, ties by id ascending; top-k (0 = off) keeps the first k,
/// top-p (1 = off) the shortest prefix whose probability reaches topP; the
/// token is where the running probability mass of the kept prefix first
/// exceeds `uniform` times its total. Probabilities are
/// exp((logit - max) / temperature) in double.
int64_t sampleFilteredRef(const float *logits, int64_t vocab,
                          double temperature, int64_t topK, double topP,
                          double uniform);

/// The distribution sampleFilteredRef draws from, over the whole
/// vocabulary: `probs[v]` (size vocab) is token v's probability after
/// temperature, top-k and top-p, 0 for the tokens the filters drop; the
/// kept ones sum to 1.
void filteredProbsRef(const float *logits, int64_t vocab, double temperature,
                      int64_t topK, double topP, double *probs);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_SAMPLINGREF_H

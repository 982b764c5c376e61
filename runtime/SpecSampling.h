// Lossless speculative sampling (Leviathan et al. 2023; Chen et al. 2023):
// a proposed token x, drawn from the drafter's distribution q, is kept with
// probability min(1, p(x) / q(x)) where p is the model's distribution; when
// it is not, the token is drawn from the residual max(0, p - q), normalised.
// Kept and resampled tokens together are distributed exactly as p. A
// drafter that proposes one token for certain (prompt lookup) has q one-hot
// at x: x is kept with probability p(x), else drawn from p without x.
#ifndef STRATA_RUNTIME_SPECSAMPLING_H
#define STRATA_RUNTIME_SPECSAMPLING_H

#include "runtime/Sampler.h"

#include <cstdint>
#include <vector>

namespace strata {

/// The distribution a request with temperature > 0 samples from (its
/// temperature, top-k and top-p applied, as sampleToken does): `probs`
/// receives one probability per token of the vocabulary.
void samplingDistribution(const float *logits, int64_t vocab,
                          const SamplingParams &params,
                          std::vector<double> &probs);

/// Draws from `probs` (non-negative, not necessarily normalised, positive
/// total): the first token, by id, where the running mass passes `uniform`
/// times the total.
int32_t drawFrom(const std::vector<double> &probs, double uniform);

/// A uniform of speculative sampling's own streams: the request's seed
/// mixed with `stream` (one constant per use: proposal, acceptance,
/// residual), keyed by `streamId` and the index of the token it decides.
double specUniform(const SamplingParams &params, uint64_t stream,
                   uint64_t streamId, uint64_t index);

struct SpecVerdict {
  bool accepted = false;
  /// The proposal when accepted, else the token drawn from the residual.
  int32_t token = 0;
};

/// Judges proposal `x` against the model's distribution `p`: `q` is the
/// distribution x was drawn from, or null for a proposal made for certain.
/// `acceptUniform` decides acceptance, `resampleUniform` the draw from the
/// residual.
SpecVerdict judgeProposal(const std::vector<double> &p,
                          const std::vector<double> *q, int32_t x,
                          double acceptUniform, double resampleUniform);

} // namespace strata

#endif // STRATA_RUNTIME_SPECSAMPLING_H

// Randomised lightning attention checks against the CPU reference: one
// prefill batch, one decode step, and the prefill-then-decode equivalence.
#ifndef STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGCASE_H
#define STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGCASE_H

#include "kernels/common/RopeKvTypes.h"

#include <cstdint>
#include <random>
#include <vector>

namespace strata::kernels::lightning_test {

/// Relative-error bounds per dtype (max over heads of every sequence).
struct Tolerance {
  double out;
  double state;
};

/// Prefill: tensor cores round q.k scores, the running state and the
/// decayed keys to the input dtype (8 significant bits for bf16, 11 for
/// fp16); everything accumulates in fp32.
Tolerance prefillTolerance(ActDType dtype);
/// Decode: fp32 throughout; only the summation order and fma contraction
/// differ. `steps` decode steps in a row let the fp32 state drift further.
Tolerance decodeTolerance(ActDType dtype, int steps = 1);

struct PrefillCase {
  ActDType dtype = ActDType::BF16;
  int headDim = 128;
  int heads = 5;
  /// Tokens per sequence; a negative entry -n is a padding entry of n
  /// tokens (slot -1).
  std::vector<int32_t> lens;
  /// Value-column tile (0: the launcher's choice).
  int dvTile = 0;
};

void runPrefillCase(const PrefillCase &c, std::mt19937_64 &rng);

struct DecodeCase {
  ActDType dtype = ActDType::BF16;
  int headDim = 128;
  int heads = 5;
  int batch = 37;
  /// Every padEvery-th entry is padding (0: none).
  int padEvery = 5;
  /// Value columns per block and L2 prefetch hint (lightningDecodeTiled).
  int cols = 0;
  bool prefetch = false;
};

void runDecodeCase(const DecodeCase &c, std::mt19937_64 &rng);

/// Sequence b gets prefillLens[b] tokens by prefill then decode steps up to
/// totalLens[b] tokens; the same tokens are also decoded from the start.
/// Outputs and final states of the two paths and of the CPU reference must
/// agree.
void runPrefillThenDecode(ActDType dtype, int headDim,
                          const std::vector<int32_t> &prefillLens,
                          const std::vector<int32_t> &totalLens,
                          std::mt19937_64 &rng);

} // namespace strata::kernels::lightning_test

#endif // STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGCASE_H

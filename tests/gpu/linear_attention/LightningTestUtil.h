// Helpers of the lightning attention GPU tests: random inputs, poisoning
// and per-(sequence, head) relative errors.
#ifndef STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGTESTUTIL_H
#define STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGTESTUTIL_H

#include "kernels/cpu/CpuAccess.h"
#include "kernels/linear_attention/DecayRange.h"
#include "kernels/linear_attention/LightningTypes.h"
#include "tests/gpu/GpuTestSupport.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace strata::kernels::lightning_test {

/// Written into state slots that no sequence names: a NaN payload that no
/// arithmetic produces.
constexpr uint32_t kStatePoison = 0x7fc0dead;

using test::DeviceBuffer;
using test::kPoison;

/// n values drawn from N(0, 1) in the 16-bit dtype: the magnitudes of
/// projected, un-normalised activations.
inline std::vector<uint16_t> randomHalves(size_t n, ActDType dtype,
                                          std::mt19937_64 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> out(n);
  for (uint16_t &x : out)
    x = floatToHalfBits(dtype, normal(rng));
  return out;
}

/// A state tensor of numSlots slots: slots in `used` get N(0, 4) values (a
/// saved state from earlier steps), the others the poison pattern.
inline std::vector<float> makeState(int64_t numSlots, int heads, int hd,
                                    const std::vector<int32_t> &used,
                                    std::mt19937_64 &rng) {
  int64_t per = static_cast<int64_t>(heads) * hd * hd;
  std::vector<float> state(numSlots * per);
  float poison;
  std::memcpy(&poison, &kStatePoison, 4);
  std::fill(state.begin(), state.end(), poison);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int32_t s : used)
    if (s >= 0)
      for (int64_t i = 0; i < per; ++i)
        state[s * per + i] = normal(rng);
  return state;
}

/// The largest ||gpu - ref|| / ||ref|| over the groups added (one group is
/// one head of one sequence: its output rows, or its state).
struct ErrorStats {
  double maxRel = 0;
  bool allFinite = true;
  void add(double num, double den, bool finite) {
    allFinite = allFinite && finite;
    double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    maxRel = std::max(maxRel, rel);
  }
};

} // namespace strata::kernels::lightning_test

#endif // STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGTESTUTIL_H

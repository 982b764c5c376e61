// Helpers of the lightning attention GPU tests: random inputs, poisoning
// and per-(sequence, head) relative errors.
#ifndef STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGTESTUTIL_H
#define STRATA_TESTS_GPU_LINEAR_ATTENTION_LIGHTNINGTESTUTIL_H

#include "kernels/cpu/HalfTypes.h"
#include "kernels/linear_attention/LightningTypes.h"
#include "tests/gpu/GpuTestSupport.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace strata::kernels::lightning_test {

/// Written into every output before a run: a NaN in fp16 and bf16 that no
/// rounding produces, so an unwritten element reads back as exactly this.
constexpr uint16_t kPoison = 0xffff;
/// Written into state slots that no sequence names: a NaN payload that no
/// arithmetic produces.
constexpr uint32_t kStatePoison = 0x7fc0dead;

using test::DeviceBuffer;

inline float halfToFloat(uint16_t bits, ActDType dtype) {
  return dtype == ActDType::BF16 ? bf16BitsToFloat(bits) : f16BitsToFloat(bits);
}

inline uint16_t floatToHalf(float x, ActDType dtype) {
  return dtype == ActDType::BF16 ? floatToBf16Bits(x) : floatToF16Bits(x);
}

/// n values drawn from N(0, 1) in the 16-bit dtype: the magnitudes of
/// projected, un-normalised activations.
inline std::vector<uint16_t> randomHalves(size_t n, ActDType dtype,
                                          std::mt19937_64 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> out(n);
  for (uint16_t &x : out)
    x = floatToHalf(normal(rng), dtype);
  return out;
}

/// Decay rates log-spaced from 1e-3 (head 0) to 1 (last head).
inline std::vector<float> decayRates(int heads) {
  std::vector<float> rates(heads);
  for (int h = 0; h < heads; ++h)
    rates[h] =
        heads == 1 ? 1e-2f : std::pow(10.0f, -3.0f + 3.0f * h / (heads - 1));
  return rates;
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

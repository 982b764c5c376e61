// Helpers of the rope_kv_write GPU tests: random fill, poisoning and the
// comparison with the CPU reference.
#ifndef STRATA_TESTS_GPU_ROPE_KV_ROPEKVTESTSUPPORT_H
#define STRATA_TESTS_GPU_ROPE_KV_ROPEKVTESTSUPPORT_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/cpu/CpuAccess.h"
#include "tests/gpu/GpuTestSupport.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace strata::kernels::test {


/// Random values in +-[lo, hi], never zero.
inline std::vector<uint16_t> randomAct(std::mt19937_64 &rng, ActDType type,
                                       size_t count, float lo, float hi) {
  std::uniform_real_distribution<float> mag(lo, hi);
  std::vector<uint16_t> out(count);
  for (auto &x : out) {
    float v = mag(rng) * ((rng() & 1) ? 1.0f : -1.0f);
    x = floatToHalfBits(type, v);
  }
  return out;
}

/// Tolerance: GPU and reference both compute in fp32 and round once to the
/// stored type. Their fp32 values differ only by fp32 rounding (FMA
/// contraction, rsqrtf, reduction order: a few 1e-7 relative), far below
/// half an ulp of bf16 (2^-9 relative) or fp16 (2^-12), so a stored value is
/// either identical or, when the fp32 value sits at a rounding boundary,
/// exactly one ulp of the stored type away. Where the rotation cancels
/// (x1*c - x2*s near 0), the fp32 error is relative to the operands, not to
/// the result: operands stay below 8 in magnitude here (inputs <= 2, norm
/// weights <= 1.5, normalised values a few units), so a few fp32 ulps of them
/// is under 2^-18 absolute, which is also allowed. Elements that are plain
/// copies (V, and unrotated elements without QK-norm) must be bit-identical.
/// Unwritten (poison) and NaN values never pass. Differences must stay rare
/// (at most 1% of the written elements).
struct CompareResult {
  size_t written = 0;
  size_t rounding = 0;
  size_t bad = 0;
  std::string firstBad;
};

constexpr float kAbsTol = 1.0f / (1 << 18);

inline std::string hex16(uint16_t h) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 12; shift >= 0; shift -= 4)
    s += digits[(h >> shift) & 0xfu];
  return s;
}

inline int32_t orderedBits(uint16_t h) {
  return (h & 0x8000u) ? -int32_t(h & 0x7fffu) : int32_t(h);
}

inline bool isNanBits(uint16_t h, ActDType type) {
  return type == ActDType::BF16 ? ((h & 0x7f80u) == 0x7f80u && (h & 0x7fu))
                                : ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu));
}

inline CompareResult compareAct(const std::vector<uint16_t> &got,
                                const std::vector<uint16_t> &want,
                                ActDType type,
                                const std::function<bool(size_t)> &exact) {
  CompareResult r;
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    uint16_t g = got[i], w = want[i];
    if (w != kPoison)
      ++r.written;
    if (g == w)
      continue;
    bool ok = w != kPoison && g != kPoison && !isNanBits(g, type) &&
              !isNanBits(w, type) && !exact(i) &&
              (std::abs(orderedBits(g) - orderedBits(w)) <= 1 ||
               std::fabs(halfBitsToFloat(type, g) - halfBitsToFloat(type, w)) <= kAbsTol);
    if (ok) {
      ++r.rounding;
      continue;
    }
    if (r.bad++ == 0)
      r.firstBad = "element " + std::to_string(i) + ": got " + hex16(g) + " (" +
                   std::to_string(halfBitsToFloat(type, g)) + ") want " + hex16(w) +
                   " (" + std::to_string(halfBitsToFloat(type, w)) + ")" +
                   (exact(i) ? " [exact copy expected]" : "");
  }
  return r;
}

#define CHECK_MATCHES(name, result)                                            \
  do {                                                                         \
    const auto &r_ = (result);                                                 \
    INFO((name) << ": " << r_.bad << " bad of " << r_.written                  \
                << " written; first: " << r_.firstBad);                        \
    CHECK(r_.bad == 0);                                                        \
    INFO((name) << ": " << r_.rounding << " rounding-level differences");      \
    CHECK(r_.rounding * 100 <= r_.written + 100);                              \
  } while (0)

} // namespace strata::kernels::test

#endif // STRATA_TESTS_GPU_ROPE_KV_ROPEKVTESTSUPPORT_H

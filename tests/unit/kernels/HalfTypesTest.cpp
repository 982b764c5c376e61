// The host fp16/bf16 conversions must store the bits CUDA's
// __float2half_rn / __float2bfloat16_rn store; GPU tests check the same
// functions against the device on a million patterns.
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace strata::kernels;

namespace {
uint16_t bf16(uint32_t floatPattern) {
  return floatToBf16Bits(floatFromBits(floatPattern));
}
uint16_t f16(uint32_t floatPattern) {
  return floatToF16Bits(floatFromBits(floatPattern));
}
} // namespace

TEST_CASE("bf16 rounds to nearest even", "[kernels][half]") {
  CHECK(bf16(0x3f800000u) == 0x3f80); // 1.0
  CHECK(bf16(0x3f807fffu) == 0x3f80); // below the tie
  CHECK(bf16(0x3f808000u) == 0x3f80); // tie, even kept
  CHECK(bf16(0x3f818000u) == 0x3f82); // tie, odd rounds up
  CHECK(bf16(0x3f808001u) == 0x3f81); // above the tie
  CHECK(bf16(0xbf808001u) == 0xbf81); // sign is symmetric
  CHECK(bf16(0x7f7fffffu) == 0x7f80); // FLT_MAX overflows to inf
  CHECK(bf16(0xff800000u) == 0xff80); // -inf
  CHECK(bf16(0x00000001u) == 0x0000); // smallest denormal rounds to 0
  CHECK(bf16(0x80000000u) == 0x8000); // -0
  CHECK(bf16(0x7fc00001u) == 0x7fff); // NaN -> canonical NaN
  CHECK(bf16(0xffa00000u) == 0x7fff); // negative signalling NaN too
}

TEST_CASE("fp16 rounds to nearest even with subnormals", "[kernels][half]") {
  CHECK(floatToF16Bits(1.0f) == 0x3c00);
  CHECK(floatToF16Bits(-2.0f) == 0xc000);
  CHECK(floatToF16Bits(65504.0f) == 0x7bff);
  CHECK(floatToF16Bits(65519.996f) == 0x7bff);
  CHECK(floatToF16Bits(65520.0f) == 0x7c00); // tie goes to even: inf
  CHECK(floatToF16Bits(1e9f) == 0x7c00);
  CHECK(floatToF16Bits(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(f16(0x3f801000u) == 0x3c00); // 1 + 2^-11: tie, even kept
  CHECK(f16(0x3f803000u) == 0x3c02); // 1 + 3*2^-11: tie, odd rounds up
  CHECK(f16(0x3f801001u) == 0x3c01);
  CHECK(floatToF16Bits(std::ldexp(1.0f, -14)) == 0x0400); // smallest normal
  CHECK(floatToF16Bits(std::ldexp(1.0f, -24)) == 0x0001); // smallest subnormal
  CHECK(floatToF16Bits(std::ldexp(1.0f, -25)) == 0x0000); // tie to even 0
  CHECK(floatToF16Bits(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(floatToF16Bits(std::ldexp(3.0f, -25)) == 0x0002); // 1.5 units: even
  CHECK(floatToF16Bits(std::ldexp(5.0f, -25)) == 0x0002); // 2.5 units: even
  CHECK(floatToF16Bits(std::ldexp(-1.0f, -26)) == 0x8000);
  // Largest subnormal plus just under half a unit stays subnormal; the tie
  // at 1023.5 units rounds to 1024 units, the smallest normal.
  CHECK(floatToF16Bits(std::ldexp(1023.5f, -24)) == 0x0400);
  CHECK(floatToF16Bits(std::ldexp(1022.5f, -24)) == 0x03fe);
  CHECK(floatToF16Bits(std::nanf("")) == 0x7fff);
}

TEST_CASE("every finite 16-bit value survives a round trip",
          "[kernels][half]") {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    auto bits = static_cast<uint16_t>(h);
    if ((h & 0x7f80u) != 0x7f80u || (h & 0x7fu) == 0)
      REQUIRE(floatToBf16Bits(bf16BitsToFloat(bits)) == bits);
    if ((h & 0x7c00u) != 0x7c00u || (h & 0x3ffu) == 0)
      REQUIRE(floatToF16Bits(f16BitsToFloat(bits)) == bits);
  }
}

TEST_CASE("fp16 widening is exact", "[kernels][half]") {
  CHECK(f16BitsToFloat(0x3c00) == 1.0f);
  CHECK(f16BitsToFloat(0x0001) == std::ldexp(1.0f, -24));
  CHECK(f16BitsToFloat(0x83ff) == -std::ldexp(1023.0f, -24));
  CHECK(f16BitsToFloat(0x7bff) == 65504.0f);
  CHECK(std::isinf(f16BitsToFloat(0xfc00)));
  CHECK(std::isnan(f16BitsToFloat(0x7e00)));
  CHECK(bf16BitsToFloat(0x3f81) == 1.0078125f);
}

TEST_CASE("fp16 conversion matches exact rounding on a sweep",
          "[kernels][half]") {
  // Independent oracle: pick the nearer of the two fp16 neighbours in double
  // arithmetic (ties to the even one) for values across the whole range.
  for (uint32_t hi = 0; hi < 0x477ff000u; hi += 0x1357u) {
    float f = floatFromBits(hi);
    uint16_t got = floatToF16Bits(f);
    double v = f;
    uint16_t lo = got > 0 ? got - 1 : 0;
    for (uint16_t cand : {lo, got, static_cast<uint16_t>(got + 1)}) {
      if ((cand & 0x7c00u) == 0x7c00u)
        continue;
      double dGot = std::fabs(double(f16BitsToFloat(got)) - v);
      double dCand = std::fabs(double(f16BitsToFloat(cand)) - v);
      REQUIRE(dGot <= dCand);
      if (dGot == dCand && cand != got)
        REQUIRE((got & 1u) == 0);
    }
  }
}

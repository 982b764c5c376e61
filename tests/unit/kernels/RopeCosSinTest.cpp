// The rotary table builder: layout, accuracy at large positions, and the
// linear and llama3 frequency scalings.
#include "kernels/common/RopeCosSin.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace strata::kernels;

namespace {
// Reference angle in long double, independent of the builder's code path.
long double angle(int64_t pos, double theta, int i, int rotaryDim) {
  return static_cast<long double>(pos) *
         std::pow(static_cast<long double>(theta),
                  -2.0L * i / static_cast<long double>(rotaryDim));
}
} // namespace

TEST_CASE("cos/sin rows hold cos then sin of each frequency",
          "[kernels][rope]") {
  RopeTableSpec spec;
  spec.theta = 10000.0;
  spec.rotaryDim = 64;
  spec.maxPos = 300;
  std::vector<float> table;
  REQUIRE(buildRopeCosSin(spec, table).ok());
  REQUIRE(table.size() == size_t(300 * 64));
  for (int i = 0; i < 32; ++i) {
    CHECK(table[i] == 1.0f);
    CHECK(table[32 + i] == 0.0f);
  }
  for (int64_t p : {1, 17, 299}) {
    for (int i = 0; i < 32; ++i) {
      long double a = angle(p, 10000.0, i, 64);
      CHECK(std::fabs(table[p * 64 + i] - double(std::cos(a))) <= 6e-8);
      CHECK(std::fabs(table[p * 64 + 32 + i] - double(std::sin(a))) <= 6e-8);
    }
  }
}

TEST_CASE("cos/sin stay accurate at a position of one million",
          "[kernels][rope]") {
  RopeTableSpec spec;
  spec.theta = 500000.0;
  spec.rotaryDim = 128;
  spec.maxPos = 1;
  std::vector<double> invFreq;
  REQUIRE(ropeInverseFrequencies(spec, invFreq).ok());
  // The scaled frequencies times the position, in double, keep cos and sin
  // within fp32 rounding; then the same through a full (narrow) table.
  const int64_t pos = 1000003;
  for (int i = 0; i < 64; ++i) {
    double a = static_cast<double>(pos) * invFreq[i];
    long double ref = angle(pos, 500000.0, i, 128);
    CHECK(std::fabs(float(std::cos(a)) - double(std::cos(ref))) <= 1e-7);
    CHECK(std::fabs(float(std::sin(a)) - double(std::sin(ref))) <= 1e-7);
  }
  spec.rotaryDim = 16;
  spec.maxPos = pos + 1;
  std::vector<float> table;
  REQUIRE(buildRopeCosSin(spec, table).ok());
  for (int i = 0; i < 8; ++i) {
    long double ref = angle(pos, 500000.0, i, 16);
    CHECK(std::fabs(table[pos * 16 + i] - double(std::cos(ref))) <= 1e-7);
    CHECK(std::fabs(table[pos * 16 + 8 + i] - double(std::sin(ref))) <= 1e-7);
  }
}

TEST_CASE("linear scaling divides positions by the factor", "[kernels][rope]") {
  RopeTableSpec plain;
  plain.rotaryDim = 32;
  plain.maxPos = 64;
  RopeTableSpec scaled = plain;
  scaled.maxPos = 256;
  scaled.scaling.kind = RopeScalingKind::Linear;
  scaled.scaling.factor = 4.0;
  std::vector<float> a, b;
  REQUIRE(buildRopeCosSin(plain, a).ok());
  REQUIRE(buildRopeCosSin(scaled, b).ok());
  for (int64_t p = 0; p < 64; ++p)
    for (int i = 0; i < 32; ++i)
      CHECK(std::fabs(a[p * 32 + i] - b[4 * p * 32 + i]) <= 1e-7);
}

TEST_CASE("llama3 scaling keeps high, divides low, blends middle frequencies",
          "[kernels][rope]") {
  RopeTableSpec spec;
  spec.theta = 500000.0;
  spec.rotaryDim = 128;
  spec.maxPos = 1;
  std::vector<double> base, scaled;
  REQUIRE(ropeInverseFrequencies(spec, base).ok());
  spec.scaling.kind = RopeScalingKind::Llama3;
  spec.scaling.factor = 8.0;
  spec.scaling.lowFreqFactor = 1.0;
  spec.scaling.highFreqFactor = 4.0;
  spec.scaling.originalMaxPos = 8192;
  REQUIRE(ropeInverseFrequencies(spec, scaled).ok());
  const double pi = std::acos(-1.0);
  int kept = 0, divided = 0, blended = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    double wavelen = 2 * pi / base[i];
    if (wavelen < 8192.0 / 4.0) {
      CHECK(scaled[i] == base[i]);
      ++kept;
    } else if (wavelen > 8192.0) {
      CHECK(scaled[i] == Approx(base[i] / 8.0).epsilon(1e-15));
      ++divided;
    } else {
      double smooth = (8192.0 / wavelen - 1.0) / 3.0;
      CHECK(
          scaled[i] ==
          Approx((1 - smooth) * base[i] / 8 + smooth * base[i]).epsilon(1e-15));
      CHECK(scaled[i] < base[i]);
      CHECK(scaled[i] > base[i] / 8.0);
      ++blended;
    }
  }
  // Llama 3.1's parameters exercise all three regimes.
  CHECK(kept > 0);
  CHECK(divided > 0);
  CHECK(blended > 0);
  CHECK(scaled[0] == 1.0);
}

TEST_CASE("bad table specs are rejected with a message", "[kernels][rope]") {
  std::vector<float> table;
  RopeTableSpec spec;
  spec.rotaryDim = 7;
  spec.maxPos = 4;
  Status s = buildRopeCosSin(spec, table);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "rope cos/sin table: rotaryDim 7 must be even and "
                       "positive");
  spec.rotaryDim = 8;
  spec.maxPos = 0;
  CHECK_FALSE(buildRopeCosSin(spec, table).ok());
  spec.maxPos = 4;
  spec.scaling.kind = RopeScalingKind::Llama3;
  spec.scaling.lowFreqFactor = 4.0;
  spec.scaling.highFreqFactor = 1.0;
  CHECK_FALSE(buildRopeCosSin(spec, table).ok());
}

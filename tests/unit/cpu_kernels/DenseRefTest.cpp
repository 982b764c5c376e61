// Dense CPU references against values worked out by hand or by an
// independent fp64 formula.
#include "kernels/cpu/DenseRef.h"
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace strata::kernels;

namespace {
std::vector<uint16_t> bf16(const std::vector<float> &v) {
  std::vector<uint16_t> out;
  for (float f : v)
    out.push_back(floatToBf16Bits(f));
  return out;
}
std::vector<float> unbf16(const std::vector<uint16_t> &v) {
  std::vector<float> out;
  for (uint16_t h : v)
    out.push_back(bf16BitsToFloat(h));
  return out;
}
std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}
} // namespace

TEST_CASE("rms_norm of a constant row is the weight") {
  auto x = bf16({3, 3, 3, 3});
  auto w = bf16({1, 2, 0.5f, -1});
  std::vector<uint16_t> out(4);
  REQUIRE(rmsNormRef(ActDType::BF16, 1, 4, x.data(), w.data(), 0.0f, out.data())
              .ok());
  CHECK(unbf16(out) == std::vector<float>{1, 2, 0.5f, -1});
}

TEST_CASE("add_rms_norm stores the sum and normalises the stored sum") {
  const int64_t rows = 3, cols = 40;
  auto xs = randomValues(rows * cols, 1), rs = randomValues(rows * cols, 2);
  auto ws = randomValues(cols, 3);
  auto x = bf16(xs), r = bf16(rs), w = bf16(ws);
  std::vector<uint16_t> out(rows * cols), sum(rows * cols),
      expected(rows * cols);
  // Unscaled (every family but MiniMax) and MiniMax's beta * x + alpha * r.
  for (auto [xScale, rScale] : {std::pair{1.0f, 1.0f}, std::pair{0.8f, 1.6f}}) {
    REQUIRE(addRmsNormRef(ActDType::BF16, rows, cols, x.data(), r.data(),
                          w.data(), 1e-5f, xScale, rScale, out.data(),
                          sum.data())
                .ok());
    for (int64_t i = 0; i < rows * cols; ++i)
      CHECK(sum[i] == floatToBf16Bits(xScale * bf16BitsToFloat(x[i]) +
                                      rScale * bf16BitsToFloat(r[i])));
    REQUIRE(rmsNormRef(ActDType::BF16, rows, cols, sum.data(), w.data(), 1e-5f,
                       expected.data())
                .ok());
    CHECK(out == expected);
  }
}

TEST_CASE("silu_mul, sigmoid_mul and add match fp64 formulas") {
  auto gs = randomValues(257, 4), us = randomValues(257, 5);
  auto g = bf16(gs), u = bf16(us);
  std::vector<uint16_t> out(257);
  REQUIRE(siluMulRef(ActDType::BF16, 257, g.data(), u.data(), out.data()).ok());
  for (int i = 0; i < 257; ++i) {
    double gv = bf16BitsToFloat(g[i]), uv = bf16BitsToFloat(u[i]);
    double expected = gv / (1 + std::exp(-gv)) * uv;
    // One bf16 rounding: within half an ulp (2^-8 relative) plus fp32 noise.
    CHECK(std::abs(bf16BitsToFloat(out[i]) - expected) <=
          std::abs(expected) * 0.0040 + 1e-6);
  }
  REQUIRE(
      sigmoidMulRef(ActDType::BF16, 257, g.data(), u.data(), out.data()).ok());
  for (int i = 0; i < 257; ++i) {
    double gv = bf16BitsToFloat(g[i]), uv = bf16BitsToFloat(u[i]);
    double expected = uv / (1 + std::exp(-gv));
    CHECK(std::abs(bf16BitsToFloat(out[i]) - expected) <=
          std::abs(expected) * 0.0040 + 1e-6);
  }
  REQUIRE(addRef(ActDType::BF16, 257, g.data(), u.data(), 1.f, 1.f, out.data())
              .ok());
  CHECK(out[7] ==
        floatToBf16Bits(bf16BitsToFloat(g[7]) + bf16BitsToFloat(u[7])));
  REQUIRE(
      addRef(ActDType::BF16, 257, g.data(), u.data(), 1.5f, -0.25f, out.data())
          .ok());
  for (int i = 0; i < 257; ++i) {
    double expected =
        1.5 * bf16BitsToFloat(g[i]) - 0.25 * bf16BitsToFloat(u[i]);
    CHECK(std::abs(bf16BitsToFloat(out[i]) - expected) <=
          std::abs(expected) * 0.0040 + 1e-6);
  }
  CHECK_FALSE(
      addRef(ActDType::BF16, 4, g.data(), nullptr, 1.f, 1.f, out.data()).ok());
}

TEST_CASE("embedding gathers rows and names a bad token id") {
  auto table = bf16({0, 1, 10, 11, 20, 21});
  std::vector<int32_t> ids{2, 0, 2};
  std::vector<uint16_t> out(6);
  REQUIRE(embeddingRef(ActDType::BF16, 3, 3, 2, ids.data(), table.data(),
                       out.data())
              .ok());
  CHECK(unbf16(out) == std::vector<float>{20, 21, 0, 1, 20, 21});
  ids[1] = 3;
  Status s = embeddingRef(ActDType::BF16, 3, 3, 2, ids.data(), table.data(),
                          out.data());
  CHECK(s.message() ==
        "embedding: token 1 has id 3 outside the vocabulary of 3");
}

TEST_CASE("linear computes x W^T + b with weights [out, in]") {
  // x [2, 3], W [2, 3] (out 2, in 3), b [2]
  auto x = bf16({1, 2, 3, -1, 0, 1});
  auto w = bf16({1, 0, 0, 1, 1, 1});
  auto b = bf16({0.5f, -0.5f});
  std::vector<uint16_t> y(4);
  REQUIRE(
      linearRef(ActDType::BF16, 2, 2, 3, x.data(), w.data(), b.data(), y.data())
          .ok());
  CHECK(unbf16(y) == std::vector<float>{1.5f, 5.5f, -0.5f, -0.5f});
  std::vector<float> logits(4);
  REQUIRE(linearRef(ActDType::BF16, 2, 2, 3, x.data(), w.data(), nullptr,
                    logits.data(), /*f32Out=*/true)
              .ok());
  CHECK(logits == std::vector<float>{1, 6, -1, 0});
}

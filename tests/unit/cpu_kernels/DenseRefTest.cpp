// Dense CPU references against values worked out by hand or by an
// independent fp64 formula.
#include "kernels/cpu/DenseRef.h"
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>

#include <algorithm>
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

// f32 storage: values are read and stored as 4-byte floats, never rounded
// to 16 bits. The inputs below use the full fp32 mantissa, so reading two
// bytes of an element or rounding a result to bf16 (relative error up to
// 2^-9) fails tolerances of a few fp32 ulps.

namespace {
/// Relative error of `got` against an fp64 value, with a floor for values
/// near zero.
double relativeTo(double expected, float got) {
  return std::abs(double(got) - expected) / std::max(std::abs(expected), 1e-3);
}
} // namespace

TEST_CASE("f32 rms_norm and add_rms_norm keep fp32 values") {
  const int64_t rows = 3, cols = 40;
  auto x = randomValues(rows * cols, 11), r = randomValues(rows * cols, 12);
  auto w = randomValues(cols, 13);
  std::vector<float> out(rows * cols), sum(rows * cols);
  REQUIRE(rmsNormRef(ActDType::F32, rows, cols, x.data(), w.data(), 1e-5f,
                     out.data())
              .ok());
  auto norm64 = [&](const std::vector<double> &row, int64_t c) {
    double sumSq = 0;
    for (double v : row)
      sumSq += v * v;
    return row[c] / std::sqrt(sumSq / cols + 1e-5) * w[c];
  };
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> row(x.begin() + i * cols, x.begin() + (i + 1) * cols);
    for (int64_t c = 0; c < cols; ++c)
      CHECK(relativeTo(norm64(row, c), out[i * cols + c]) < 1e-5);
  }
  REQUIRE(addRmsNormRef(ActDType::F32, rows, cols, x.data(), r.data(), w.data(),
                        1e-5f, 0.8f, 1.6f, out.data(), sum.data())
              .ok());
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> row(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const double a = double(0.8f) * x[i * cols + c],
                   b = double(1.6f) * r[i * cols + c];
      row[c] = a + b;
      // Two products and a sum, each rounded to fp32.
      CHECK(std::abs(sum[i * cols + c] - row[c]) <=
            std::ldexp(std::abs(a) + std::abs(b), -22));
    }
    for (int64_t c = 0; c < cols; ++c)
      CHECK(relativeTo(norm64(row, c), out[i * cols + c]) < 1e-5);
  }
}

TEST_CASE("f32 silu_mul, silu, sigmoid_mul and add keep fp32 values") {
  auto g = randomValues(257, 14), u = randomValues(257, 15);
  std::vector<float> out(257);
  REQUIRE(siluMulRef(ActDType::F32, 257, g.data(), u.data(), out.data()).ok());
  for (int i = 0; i < 257; ++i)
    CHECK(relativeTo(double(g[i]) / (1 + std::exp(-double(g[i]))) * u[i],
                     out[i]) < 1e-6);
  REQUIRE(siluRef(ActDType::F32, 257, g.data(), out.data()).ok());
  for (int i = 0; i < 257; ++i)
    CHECK(relativeTo(double(g[i]) / (1 + std::exp(-double(g[i]))), out[i]) <
          1e-6);
  REQUIRE(
      sigmoidMulRef(ActDType::F32, 257, g.data(), u.data(), out.data()).ok());
  for (int i = 0; i < 257; ++i)
    CHECK(relativeTo(u[i] / (1 + std::exp(-double(g[i]))), out[i]) < 1e-6);
  REQUIRE(
      addRef(ActDType::F32, 257, g.data(), u.data(), 1.5f, -0.25f, out.data())
          .ok());
  for (int i = 0; i < 257; ++i)
    CHECK(relativeTo(1.5 * g[i] - 0.25 * u[i], out[i]) < 1e-6);
}

TEST_CASE("f32 embedding copies whole 4-byte rows") {
  auto table = randomValues(5 * 3, 16);
  std::vector<int32_t> ids{4, 0, 2, 4};
  std::vector<float> out(4 * 3, -1.0f);
  REQUIRE(
      embeddingRef(ActDType::F32, 4, 5, 3, ids.data(), table.data(), out.data())
          .ok());
  for (int t = 0; t < 4; ++t)
    for (int c = 0; c < 3; ++c)
      CHECK(floatBits(out[t * 3 + c]) == floatBits(table[ids[t] * 3 + c]));
}

TEST_CASE("f32 linear stores fp32 results with and without f32Out") {
  const int64_t m = 3, n = 5, k = 37;
  auto x = randomValues(m * k, 17), w = randomValues(n * k, 18);
  auto b = randomValues(n, 19);
  std::vector<float> stored(m * n), logits(m * n);
  REQUIRE(linearRef(ActDType::F32, m, n, k, x.data(), w.data(), b.data(),
                    stored.data())
              .ok());
  REQUIRE(linearRef(ActDType::F32, m, n, k, x.data(), w.data(), b.data(),
                    logits.data(), /*f32Out=*/true)
              .ok());
  for (int64_t r = 0; r < m; ++r)
    for (int64_t o = 0; o < n; ++o) {
      double exact = b[o], magnitude = std::abs(b[o]);
      for (int64_t c = 0; c < k; ++c) {
        exact += double(x[r * k + c]) * w[o * k + c];
        magnitude += std::abs(double(x[r * k + c]) * w[o * k + c]);
      }
      // fp32 summation of k + 1 terms errs by at most (k + 1) * 2^-24 of
      // their magnitude; rounding x or w to bf16 would err by ~2^-9 of it.
      CHECK(std::abs(stored[r * n + o] - exact) <=
            std::ldexp(double(k + 1), -24) * magnitude);
      CHECK(floatBits(logits[r * n + o]) == floatBits(stored[r * n + o]));
    }
}

TEST_CASE("f32 and bf16 references share their fp32 arithmetic") {
  // On values bf16 holds exactly, every single-rounding reference computes
  // the same fp32 result in both dtypes: the bf16 output is the f32 output
  // rounded once.
  const int64_t rows = 2, cols = 24;
  auto xs = unbf16(bf16(randomValues(rows * cols, 20)));
  auto ws = unbf16(bf16(randomValues(cols * cols, 21)));
  auto x16 = bf16(xs), w16 = bf16(ws);
  std::vector<uint16_t> out16(rows * cols);
  std::vector<float> out32(rows * cols);
  auto same = [&] {
    for (int64_t i = 0; i < rows * cols; ++i)
      if (out16[i] != floatToBf16Bits(out32[i]))
        return false;
    return true;
  };
  REQUIRE(rmsNormRef(ActDType::BF16, rows, cols, x16.data(), w16.data(), 1e-5f,
                     out16.data())
              .ok());
  REQUIRE(rmsNormRef(ActDType::F32, rows, cols, xs.data(), ws.data(), 1e-5f,
                     out32.data())
              .ok());
  CHECK(same());
  REQUIRE(linearRef(ActDType::BF16, rows, cols, cols, x16.data(), w16.data(),
                    nullptr, out16.data())
              .ok());
  REQUIRE(linearRef(ActDType::F32, rows, cols, cols, xs.data(), ws.data(),
                    nullptr, out32.data())
              .ok());
  CHECK(same());
  REQUIRE(siluMulRef(ActDType::BF16, rows * cols, x16.data(), w16.data(),
                     out16.data())
              .ok());
  REQUIRE(
      siluMulRef(ActDType::F32, rows * cols, xs.data(), ws.data(), out32.data())
          .ok());
  CHECK(same());
}

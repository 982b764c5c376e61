// Linear layers (GEMV for m <= 16 and cuBLASLt) against a float64
// reference on random operands, with odd non-square shapes (n and k not
// multiples of any tile), bias and residual epilogues and fp32 logits.
//
// Tolerance: the exact product is computed in double; the GPU accumulates
// in fp32 in its own order (error ~ sqrt(k) * 2^-24 * sum|x w| typically;
// 2^-14 * sum|x w| bounds it with a wide margin) and rounds to the storage
// type. cuBLASLt's epilogue may round the product to the storage type,
// then again after adding the bias and the residual: up to three roundings
// of half an ulp (an ulp is at most 2^-7 relative for bf16, 2^-10 for fp16)
// of values below |product| + |bias| + |residual|, so 1.5 ulp of that sum
// is allowed (a cancelling sum keeps those errors). fp32 output adds no
// rounding of the storage type.
#include "../rope_kv/RopeKvTestSupport.h"

#include "kernels/cpu/CpuAccess.h"
#include "kernels/gemm/Gemm.h"

#include <catch2/catch.hpp>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {

struct GemmCase {
  int64_t m, n, k;
  bool bias = false, residual = false, f32Out = false, inPlace = false;
};

std::string describe(const GemmCase &c, ActDType dtype, GemmPath path) {
  const char *p = path == GemmPath::Gemv       ? "gemv"
                  : path == GemmPath::CublasLt ? "cublasLt"
                                               : "auto";
  return std::string(dtype == ActDType::BF16 ? "bf16" : "fp16") + " " + p +
         " m " + std::to_string(c.m) + " n " + std::to_string(c.n) + " k " +
         std::to_string(c.k) + (c.bias ? " +bias" : "") +
         (c.residual ? " +residual" : "") + (c.f32Out ? " f32out" : "") +
         (c.inPlace ? " in place" : "");
}

void runGemm(GemmRunner &runner, const GemmCase &c, ActDType dtype,
             GemmPath path, std::mt19937_64 &rng) {
  INFO(describe(c, dtype, path) << " seed " << testSeed());
  auto x = randomAct(rng, dtype, size_t(c.m * c.k), 0.05f, 1.0f);
  auto w = randomAct(rng, dtype, size_t(c.n * c.k), 0.01f, 0.1f);
  auto bias = randomAct(rng, dtype, size_t(c.n), 0.1f, 1.0f);
  auto res = randomAct(rng, dtype, size_t(c.m * c.n), 0.1f, 2.0f);
  DeviceBuffer<uint16_t> dx(x), dw(w), db(bias), dres(res);
  size_t outElems = size_t(c.m * c.n);
  DeviceBuffer<uint16_t> dy(
      std::vector<uint16_t>(outElems * (c.f32Out ? 2 : 1), kPoison));

  GemmArgs a;
  a.dtype = dtype;
  a.m = c.m;
  a.n = c.n;
  a.k = c.k;
  a.x = dx.get();
  a.w = dw.get();
  a.bias = c.bias ? db.get() : nullptr;
  a.residual = c.residual ? dres.get() : nullptr;
  a.y = c.inPlace ? dres.get() : dy.get();
  a.f32Out = c.f32Out;
  Status s = runner.linear(a, nullptr, path);
  INFO(s.message());
  REQUIRE(s.ok());
  CUDA_REQUIRE(cudaDeviceSynchronize());

  std::vector<uint16_t> got16 = c.inPlace ? dres.download() : dy.download();
  const float *got32 = reinterpret_cast<const float *>(got16.data());
  const double ulp = dtype == ActDType::BF16 ? 1.0 / 128 : 1.0 / 1024;
  int64_t bad = 0;
  double worst = 0;
  std::string first;
  std::vector<double> wf(size_t(c.n * c.k));
  for (size_t i = 0; i < wf.size(); ++i)
    wf[i] = loadAct(dtype, w.data(), i);
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t o = 0; o < c.n; ++o) {
      double exact = 0, mag = 0;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        double p =
            double(loadAct(dtype, x.data(), r * c.k + kk)) * wf[o * c.k + kk];
        exact += p;
        mag += std::fabs(p);
      }
      double terms = std::fabs(exact);
      if (c.bias) {
        exact += loadAct(dtype, bias.data(), o);
        terms += std::fabs(loadAct(dtype, bias.data(), o));
      }
      if (c.residual) {
        exact += loadAct(dtype, res.data(), r * c.n + o);
        terms += std::fabs(loadAct(dtype, res.data(), r * c.n + o));
      }
      size_t idx = size_t(r * c.n + o);
      double g =
          c.f32Out ? double(got32[idx]) : loadAct(dtype, got16.data(), idx);
      double tol =
          std::ldexp(mag, -14) + (c.f32Out ? 1e-6 * terms : 1.5 * ulp * terms);
      double err = std::fabs(g - exact);
      bool ok = std::isfinite(g) && err <= tol;
      worst = std::max(worst, err / tol);
      if (!ok && bad++ == 0)
        first = "y[" + std::to_string(r) + ", " + std::to_string(o) +
                "] = " + std::to_string(g) + ", want " + std::to_string(exact) +
                " (tol " + std::to_string(tol) + ")";
    }
  INFO("first bad: " << first << "; worst err/tol " << worst);
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("decode-shape GEMV matches a float64 reference",
          "[gpu][dense][gemm]") {
  std::mt19937_64 rng(testSeed() + 10);
  GemmRunner runner;
  REQUIRE(runner.init().ok());
  const GemmCase cases[] = {
      {1, 1000, 136},
      {3, 257, 1032, true},
      {8, 130, 264, false, true},
      {9, 77, 4104, true, true},
      {16, 515, 520, false, true, false, true},
      {13, 301, 72, false, false, true},
      {1, 4096, 4096},
      {4, 6144, 4096, false, true},
      {16, 33, 8},
      // Two row tiles per warp (m > 4), one and two token tiles.
      {5, 300, 1000, true},
      {12, 4100, 264, false, true, false, true},
      // Three row tiles (48-row blocks balance 6100 rows over 132 SMs),
      // with a partly filled last block and two token tiles.
      {11, 6100, 1032, true},
      // Many blocks per SM (shallow ring, several waves) and a long k
      // (deep ring).
      {2, 20000, 72},
      {1, 256, 14344, false, true},
  };
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (const GemmCase &c : cases)
      runGemm(runner, c, dtype, GemmPath::Gemv, rng);
  CHECK(runner.cachedPlans() == 0); // the GEMV needs no plan
}

TEST_CASE("cuBLASLt linear matches a float64 reference", "[gpu][dense][gemm]") {
  std::mt19937_64 rng(testSeed() + 11);
  GemmRunner runner;
  REQUIRE(runner.init().ok());
  const GemmCase cases[] = {
      {17, 300, 520},
      {33, 65, 77, true},                      // odd k: 2-byte alignment
      {130, 257, 1000, false, true},           // residual epilogue
      {65, 127, 264, true, true, false, true}, // both, in place
      {200, 1001, 136, false, false, true},    // fp32 logits
      {5, 96, 40},                             // m <= 16 forced here
      {600, 1024, 512, true},
  };
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (const GemmCase &c : cases)
      runGemm(runner, c, dtype, GemmPath::CublasLt, rng);
  // One plan per distinct (shape, dtype, epilogue); repeating a shape reuses
  // its plan.
  size_t plans = runner.cachedPlans();
  CHECK(plans == 2 * (sizeof(cases) / sizeof(cases[0])));
  runGemm(runner, cases[0], ActDType::BF16, GemmPath::CublasLt, rng);
  CHECK(runner.cachedPlans() == plans);
}

TEST_CASE("the launcher picks a path that handles any shape",
          "[gpu][dense][gemm]") {
  std::mt19937_64 rng(testSeed() + 12);
  GemmRunner runner;
  REQUIRE(runner.init().ok());
  for (const GemmCase &c : {GemmCase{7, 129, 100}, GemmCase{2, 64, 21, true},
                            GemmCase{48, 200, 256, false, true}})
    runGemm(runner, c, ActDType::BF16, GemmPath::Auto, rng);
}

TEST_CASE("linear rejects unsupported arguments with a message",
          "[gpu][dense][gemm]") {
  GemmRunner runner;
  REQUIRE(runner.init().ok());
  DeviceBuffer<uint16_t> buf(4096);
  GemmArgs a;
  a.m = 2;
  a.n = 8;
  a.k = 8;
  a.x = a.w = a.bias = buf.get();
  a.y = buf.get();
  a.f32Out = true;
  Status s = runner.linear(a, nullptr);
  CHECK(!s.ok());
  CHECK(s.message().find("fp32 output") != std::string::npos);
  a.f32Out = false;
  a.bias = nullptr;
  a.k = 0;
  CHECK(!runner.linear(a, nullptr).ok());
}

// Lossless speculative sampling (runtime/SpecSampling.h): whatever the
// drafter's distribution q, a proposal drawn from q and then judged keeps
// or replaces it so that the token is distributed as the model's p. Checked
// by simulation against p with a chi-square test, for a q close to p, one
// far from it, one that puts mass where p has none, and a proposal made
// for certain (prompt lookup).
#include "runtime/SpecSampling.h"
#include "tests/unit/ChiSquare.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

using namespace strata;

namespace {

/// Counts of judged tokens over `draws` rounds: the proposal drawn from q
/// (or `fixed` for certain when q is null).
std::vector<int64_t> simulate(const std::vector<double> &p,
                              const std::vector<double> *q, int32_t fixed,
                              int64_t draws, int64_t &accepted) {
  std::vector<int64_t> counts(p.size(), 0);
  accepted = 0;
  for (int64_t i = 0; i < draws; ++i) {
    const int32_t x =
        q ? drawFrom(*q, counterUniform(1, 0, uint64_t(i))) : fixed;
    const SpecVerdict v = judgeProposal(p, q, x,
                                        counterUniform(2, 0, uint64_t(i)),
                                        counterUniform(3, 0, uint64_t(i)));
    accepted += v.accepted;
    ++counts[size_t(v.token)];
  }
  return counts;
}

} // namespace

TEST_CASE("judged proposals are distributed as the model's distribution") {
  const std::vector<double> p{0.40, 0.25, 0.20, 0.10, 0.05, 0.0};
  const std::vector<std::vector<double>> drafters{
      {0.38, 0.27, 0.20, 0.10, 0.05, 0.0},   // close to p
      {0.05, 0.05, 0.10, 0.20, 0.30, 0.30},  // far, with mass where p has none
      {1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6}};
  const int64_t draws = 40000;
  for (size_t d = 0; d < drafters.size(); ++d) {
    INFO("drafter " << d);
    int64_t accepted = 0;
    const std::vector<int64_t> counts =
        simulate(p, &drafters[d], 0, draws, accepted);
    CHECK(counts[5] == 0); // p never gives token 5
    const testing::ChiSquare fit = testing::chiSquareFit(counts, p);
    INFO("chi-square " << fit.statistic << ", df " << fit.df);
    CHECK(fit.pValue > 1e-3);
    // The acceptance rate is sum min(p, q).
    double overlap = 0;
    for (size_t v = 0; v < p.size(); ++v)
      overlap += std::min(p[v], drafters[d][v]);
    CHECK(std::abs(double(accepted) / draws - overlap) < 0.01);
  }
  // A proposal for certain is kept with probability p(x).
  for (int32_t fixed : {0, 3, 5}) {
    INFO("certain proposal " << fixed);
    int64_t accepted = 0;
    const std::vector<int64_t> counts =
        simulate(p, nullptr, fixed, draws, accepted);
    CHECK(testing::chiSquareFit(counts, p).pValue > 1e-3);
    CHECK(std::abs(double(accepted) / draws - p[size_t(fixed)]) < 0.01);
  }
}

TEST_CASE("a judge that only accepted would fail the same test") {
  // The test above can fail: the drafter's own distribution, far from p,
  // is rejected by it.
  const std::vector<double> p{0.40, 0.25, 0.20, 0.10, 0.05, 0.0};
  const std::vector<double> q{0.05, 0.05, 0.10, 0.20, 0.30, 0.30};
  std::vector<int64_t> counts(p.size(), 0);
  for (int64_t i = 0; i < 40000; ++i)
    ++counts[size_t(drawFrom(q, counterUniform(1, 0, uint64_t(i))))];
  CHECK(testing::chiSquareFit(counts, p).pValue < 1e-6);
}

TEST_CASE("the sampling distribution is what sampleToken draws from") {
  const std::vector<float> logits{1.0f, 3.0f, -2.0f, 2.5f, 0.0f, 2.9f};
  SamplingParams params;
  params.temperature = 0.7;
  params.topK = 4;
  params.topP = 0.9;
  std::vector<double> probs;
  samplingDistribution(logits.data(), 6, params, probs);
  REQUIRE(probs.size() == 6);
  CHECK(std::accumulate(probs.begin(), probs.end(), 0.0) ==
        Approx(1.0).epsilon(1e-12));
  // Top-k 4 drops tokens 2 and 4.
  CHECK(probs[2] == 0.0);
  CHECK(probs[4] == 0.0);
  std::vector<int64_t> counts(6, 0);
  const int64_t draws = 40000;
  for (int64_t i = 0; i < draws; ++i)
    ++counts[size_t(sampleToken(logits.data(), 6, params, 7, uint64_t(i)))];
  CHECK(testing::chiSquareFit(counts, probs).pValue > 1e-3);
  // drawFrom walks the ids in order: its frequencies follow the same
  // distribution.
  std::vector<int64_t> walked(6, 0);
  for (int64_t i = 0; i < draws; ++i)
    ++walked[size_t(drawFrom(probs, counterUniform(5, 0, uint64_t(i))))];
  CHECK(testing::chiSquareFit(walked, probs).pValue > 1e-3);
}

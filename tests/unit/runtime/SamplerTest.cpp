// Sampling: greedy is argmax, filters restrict the support, draws are a
// function of (seed, sequence, step) only, and frequencies follow the
// distribution.
#include "runtime/Sampler.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <vector>

using strata::SamplingParams;

TEST_CASE("greedy picks the largest logit, the lowest id on ties") {
  std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f};
  SamplingParams greedy;
  CHECK(strata::sampleToken(logits.data(), 4, greedy, 0, 0) == 1);
}

TEST_CASE("top-k 1 equals greedy at any temperature") {
  std::vector<float> logits{0.1f, 0.3f, 3.0f, 0.2f};
  SamplingParams p;
  p.temperature = 5.0;
  p.topK = 1;
  for (uint64_t step = 0; step < 50; ++step)
    CHECK(strata::sampleToken(logits.data(), 4, p, 3, step) == 2);
}

TEST_CASE("top-p keeps the smallest prefix reaching p") {
  // probabilities at T=1: about 0.665, 0.245, 0.090
  std::vector<float> logits{2.0f, 1.0f, 0.0f};
  SamplingParams p;
  p.temperature = 1.0;
  p.topP = 0.8; // needs tokens 0 and 1, never 2
  std::map<int64_t, int> counts;
  for (uint64_t step = 0; step < 2000; ++step)
    ++counts[strata::sampleToken(logits.data(), 3, p, 1, step)];
  CHECK(counts[2] == 0);
  CHECK(counts[0] > 0);
  CHECK(counts[1] > 0);
}

TEST_CASE("frequencies follow the softmax distribution") {
  std::vector<float> logits{1.0f, 0.0f, -1.0f, 0.5f};
  SamplingParams p;
  p.temperature = 1.0;
  p.seed = 1234;
  const int n = 20000;
  std::vector<int> counts(4, 0);
  for (int step = 0; step < n; ++step)
    ++counts[strata::sampleToken(logits.data(), 4, p, 0, step)];
  double z = 0;
  for (float l : logits)
    z += std::exp(l);
  for (int i = 0; i < 4; ++i) {
    double expected = std::exp(logits[i]) / z;
    double sigma = std::sqrt(expected * (1 - expected) / n);
    CHECK(std::abs(counts[i] / double(n) - expected) < 5 * sigma);
  }
}

TEST_CASE("draws depend on seed, sequence and step only") {
  CHECK(strata::counterUniform(1, 2, 3) == strata::counterUniform(1, 2, 3));
  CHECK(strata::counterUniform(1, 2, 3) != strata::counterUniform(2, 2, 3));
  CHECK(strata::counterUniform(1, 2, 3) != strata::counterUniform(1, 3, 3));
  CHECK(strata::counterUniform(1, 2, 3) != strata::counterUniform(1, 2, 4));
  for (uint64_t i = 0; i < 1000; ++i) {
    double u = strata::counterUniform(9, 0, i);
    CHECK((u >= 0.0 && u < 1.0));
  }
}

TEST_CASE("invalid sampling parameters are named") {
  SamplingParams p;
  CHECK(p.validate().empty());
  p.topP = 0.0;
  CHECK(p.validate() == "top_p must be in (0, 1] (1 disables it), got "
                        "0.000000");
  p = SamplingParams{};
  p.temperature = -1;
  CHECK(p.validate().rfind("temperature must be", 0) == 0);
  p = SamplingParams{};
  p.topK = -3;
  CHECK(p.validate() == "top_k must be >= 0 (0 disables it), got -3");
}

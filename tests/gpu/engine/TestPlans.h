// The compiled plans the GPU engine tests load, and their CUDA engines: built by the full build's
// strata-test-plans target into build/plans (STRATA_TEST_PLAN_DIR), or
// from STRATA_PLAN_DIR when set (a plans/ folder carried to the GPU
// machine).
#ifndef STRATA_TESTS_GPU_ENGINE_TESTPLANS_H
#define STRATA_TESTS_GPU_ENGINE_TESTPLANS_H

#include "runtime/Engine.h"
#include "runtime/plan/PlanFile.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace strata::testing {

inline std::string testPlanDir() {
  const char *env = std::getenv("STRATA_PLAN_DIR");
  return env && *env ? env : STRATA_TEST_PLAN_DIR;
}

/// The plan `file` of the plan folder; fails the current test, saying how
/// to make it, when it is missing or does not load.
inline plan::Plan loadTestPlan(const std::string &file) {
  const std::string path = testPlanDir() + "/" + file;
  std::ifstream probe(path);
  INFO("missing plan " << path
                       << ": build the strata-test-plans target of a full "
                          "build, copy its plans/ folder, or set "
                          "STRATA_PLAN_DIR");
  REQUIRE(probe.good());
  plan::Plan plan;
  std::string error;
  const bool ok = plan::readPlanFile(path, plan, error);
  INFO(error);
  REQUIRE(ok);
  return plan;
}

/// A CUDA engine for `plan` with the default options (graphs on); fails
/// the current test when it cannot be made.
inline std::unique_ptr<Engine> cudaTestEngine(const plan::Plan &plan) {
  EngineOptions options;
  options.device = Device::Cuda;
  std::string error;
  auto engine = Engine::create(plan, options, error);
  INFO(error);
  REQUIRE(engine);
  return engine;
}

/// `got` against `want`, the tokens `reference` generated for `request`:
/// equal, or equal up to a token where `reference`'s own logits (the
/// request run again, cut after that token) put the other pick within
/// `tolerance` of the largest logit magnitude below the best, a near-tie
/// that rounding decides; the comparison stops there.
inline void checkSameUpToNearTie(Engine &reference,
                                 const GenerationRequest &request,
                                 const std::vector<int32_t> &want,
                                 const std::vector<int32_t> &got,
                                 double tolerance) {
  size_t first = 0;
  while (first < want.size() && first < got.size() &&
         want[first] == got[first])
    ++first;
  if (first == want.size()) {
    CHECK(got.size() == want.size());
    return;
  }
  REQUIRE(first < got.size());
  GenerationRequest upTo = request;
  upTo.maxNewTokens = int64_t(first) + 1;
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  const bool ok = reference.generate({upTo}, results, timings, error);
  INFO(error);
  REQUIRE(ok);
  const std::vector<float> &logits = results.at(0).lastLogits;
  REQUIRE(int64_t(logits.size()) == reference.plan().vocabSize);
  double scale = 0;
  for (float v : logits)
    scale = std::max(scale, double(std::fabs(v)));
  const float best = *std::max_element(logits.begin(), logits.end());
  INFO("diverged at token " << first << ": " << want[first] << " where "
                            << got[first] << " was picked");
  CHECK(double(best - logits[size_t(got[first])]) <= tolerance * scale);
}

} // namespace strata::testing

#endif // STRATA_TESTS_GPU_ENGINE_TESTPLANS_H

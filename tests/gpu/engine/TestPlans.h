// The compiled plans the GPU engine tests load, and their CUDA engines: built by the full build's
// strata-test-plans target into build/plans (STRATA_TEST_PLAN_DIR), or
// from STRATA_PLAN_DIR when set (a plans/ folder carried to the GPU
// machine).
#ifndef STRATA_TESTS_GPU_ENGINE_TESTPLANS_H
#define STRATA_TESTS_GPU_ENGINE_TESTPLANS_H

#include "runtime/Engine.h"
#include "runtime/plan/PlanFile.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

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

} // namespace strata::testing

#endif // STRATA_TESTS_GPU_ENGINE_TESTPLANS_H

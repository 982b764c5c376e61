// Engine::score on the CUDA backend gives the CPU backend's log-probs, on
// scoring plans (all-token logits) of the tiny Llama and the lightning
// hybrid compiled for steps of 8 tokens, so that a sequence of 18 tokens is
// fed as a prefill of 8, an extend of 8 and a decode of 1: every path by
// which score() reads the device's logits rows.
#include "runtime/Engine.h"
#include "tests/gpu/engine/TestPlans.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace strata;

namespace {

/// bf16 activations summed in different orders move a logit by at most a
/// few percent of the row's largest (EngineGpuTest); a log-prob moves by at
/// most twice the largest logit error. The tiny models' logits stay well
/// under 1, so 2e-2 absolute leaves room without hiding a wrong row (a
/// shifted or stale row changes a log-prob by O(1)).
constexpr double kLogProbTolerance = 2e-2;

plan::Plan loadScorePlan(const std::string &model) {
  return testing::loadTestPlan(model + ".score.fused.splan");
}

std::vector<double> score(const plan::Plan &plan, Device device,
                          const std::vector<int32_t> &tokens) {
  EngineOptions options;
  options.device = device;
  std::string error;
  auto engine = Engine::create(plan, options, error);
  INFO(error);
  REQUIRE(engine);
  std::vector<double> logprobs;
  bool ok = engine->score(tokens, logprobs, error);
  INFO(error);
  REQUIRE(ok);
  return logprobs;
}

} // namespace

TEST_CASE("score() on the GPU gives the CPU's log-probabilities") {
  const std::vector<int32_t> tokens = {1,  5,  17,  301, 44, 2,   9,  500, 33,
                                       33, 33, 128, 256, 7,  401, 12, 88,  3};
  for (const char *model : {"tiny-llama", "tiny-minimax"}) {
    INFO(model);
    const plan::Plan plan = loadScorePlan(model);
    const std::vector<double> cpu = score(plan, Device::Cpu, tokens);
    const std::vector<double> gpu = score(plan, Device::Cuda, tokens);
    REQUIRE(cpu.size() == tokens.size() - 1);
    REQUIRE(gpu.size() == cpu.size());
    double worst = 0.0;
    for (size_t i = 0; i < cpu.size(); ++i) {
      INFO("token " << i + 1 << ": cpu " << cpu[i] << " gpu " << gpu[i]);
      CHECK(std::abs(gpu[i] - cpu[i]) < kLogProbTolerance);
      worst = std::max(worst, std::abs(gpu[i] - cpu[i]));
    }
    WARN(model << ": largest |gpu - cpu| log-prob difference " << worst);
  }
}

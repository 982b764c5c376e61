// A plan changed in one place either fails validatePlan or runs: the
// backends read launches without checking them again, so anything the
// validation lets through must be safe to execute. Run under the sanitizer
// build, an accepted change that reads or writes out of bounds fails here.
#include "runtime/Engine.h"
#include "runtime/plan/Plan.h"

#include "CompilePlan.h"

#include <catch2/catch.hpp>

#include <random>
#include <type_traits>

using namespace strata;

namespace {

/// One numeric field of the plan, chosen at random, set to a value near
/// or far from its own.
void mutate(plan::Plan &plan, std::mt19937_64 &rng) {
  auto pick = [&](size_t n) {
    return size_t(std::uniform_int_distribution<size_t>(0, n - 1)(rng));
  };
  auto nearby = [&](int64_t v) -> int64_t {
    const int64_t choices[] = {0,
                               -1,
                               1,
                               v - 1,
                               v + 1,
                               2 * v,
                               v / 2,
                               int64_t(1) << 31,
                               int64_t(1) << 62};
    return choices[pick(sizeof choices / sizeof choices[0])];
  };
  plan::Program &p = plan.programs[pick(plan.programs.size())];
  switch (pick(10)) {
  case 0: { // a constant dimension of a buffer
    plan::Buffer &b = p.buffers[pick(p.buffers.size())];
    for (plan::Dim &d : b.shape)
      if (d.symbol == plan::Symbol::None && rng() % 2)
        d.value = nearby(d.value);
    break;
  }
  case 1: // an arena offset
    p.buffers[pick(p.buffers.size())].arenaOffset += pick(1 << 20);
    break;
  case 2: { // an operand
    plan::Launch &l = p.launches[pick(p.launches.size())];
    std::vector<int32_t> &list =
        rng() % 2 || l.outputs.empty() ? l.inputs : l.outputs;
    list[pick(list.size())] = int32_t(pick(p.buffers.size()));
    break;
  }
  case 3: { // an integer parameter
    plan::Launch &l = p.launches[pick(p.launches.size())];
    plan::forEachField(l.params, [&](const char *, auto &v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, int64_t>)
        if (rng() % 3 == 0)
          v = nearby(v);
    });
    break;
  }
  case 4: { // a numeric parameter, or a list of them
    plan::Launch &l = p.launches[pick(p.launches.size())];
    auto change = [&](double &v) { v = rng() % 2 ? -v : v * 1e30; };
    plan::forEachField(l.params, [&](const char *, auto &v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, double>) {
        if (rng() % 3 == 0)
          change(v);
      } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        if (rng() % 3 == 0 && !v.empty())
          change(v[pick(v.size())]);
      }
    });
    break;
  }
  case 5: { // the cache's description
    int64_t *fields[] = {&plan.kvCache.layers, &plan.kvCache.kvHeads,
                         &plan.kvCache.headDim, &plan.kvCache.blockSize};
    int64_t *f = fields[pick(4)];
    *f = nearby(*f);
    break;
  }
  case 6: { // a weight's shape
    plan::Weight &w = plan.weights[pick(plan.weights.size())];
    int64_t &d = w.shape[pick(w.shape.size())];
    d = nearby(d);
    break;
  }
  case 7: // the arena
    p.arenaBytes = p.arenaBytes / (1 + pick(4));
    break;
  case 8: // the limits and sizes
    (rng() % 2 ? plan.vocabSize : plan.limits.maxTokens) =
        nearby(rng() % 2 ? plan.vocabSize : plan.limits.maxTokens);
    break;
  case 9: { // a view's base
    plan::Buffer &b = p.buffers[pick(p.buffers.size())];
    b.viewOf = int32_t(pick(p.buffers.size())) - 1;
    break;
  }
  }
}

} // namespace

TEST_CASE("a plan changed in one field is refused or runs safely",
          "[engine][validation]") {
  for (const char *model : {"tiny-llama.yaml", "tiny-minimax.yaml"})
    for (bool fused : {false, true}) {
      const plan::Plan good = testing::compilePlan(model, 64, fused, 4);
      REQUIRE(plan::validatePlan(good).empty());
      std::mt19937_64 rng(7);
      int accepted = 0, refused = 0;
      for (int trial = 0; trial < 80; ++trial) {
        plan::Plan plan = good;
        mutate(plan, rng);
        if (!plan::validatePlan(plan).empty()) {
          ++refused;
          continue;
        }
        ++accepted;
        std::string error;
        auto engine = Engine::create(plan, EngineOptions{}, error);
        if (!engine)
          continue;
        GenerationRequest r;
        r.prompt = {1, 2, 3, 4, 5};
        r.maxNewTokens = 3;
        std::vector<GenerationResult> results;
        GenerationTimings timings;
        // Success or a clean failure; what matters is that it returns.
        (void)engine->generate({r, r}, results, timings, error);
      }
      INFO(model << (fused ? " fused" : " generic") << ": " << accepted
                 << " accepted, " << refused << " refused");
      // Most single changes break a relation validation checks.
      CHECK(refused > accepted);
    }
}

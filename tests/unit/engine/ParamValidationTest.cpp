// Every parameter of every kernel is checked when a plan is loaded: in
// compiled plans of the tiny models, each field of each launch set to a
// value outside its range makes validatePlan refuse the plan, naming the
// launch and the field.
#include "runtime/plan/Plan.h"

#include "CompilePlan.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

using namespace strata;

namespace {

/// Sets field `target` (counted in declared order) of `params` to a value
/// no kernel accepts; false when that field is a flag (any value is valid).
bool breakField(plan::KernelParams &params, size_t target, std::string &name) {
  size_t index = 0;
  bool broken = false;
  plan::forEachField(params, [&](const char *n, auto &v) {
    using T = std::decay_t<decltype(v)>;
    if (index++ != target)
      return;
    name = n;
    if constexpr (std::is_same_v<T, int64_t>) {
      v = -1; // every count, layer and size starts at 0 or 1
      broken = true;
    } else if constexpr (std::is_same_v<T, double>) {
      v = std::numeric_limits<double>::quiet_NaN();
      broken = true;
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(200);
      broken = true;
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      if (!v.empty())
        v[0] = std::numeric_limits<double>::infinity();
      broken = !v.empty();
    }
  });
  return broken;
}

size_t fieldCount(const plan::KernelParams &params) {
  size_t n = 0;
  plan::forEachField(params, [&](const char *, const auto &) { ++n; });
  return n;
}

} // namespace

TEST_CASE("a parameter outside its range is refused for every kernel",
          "[validation]") {
  std::set<plan::Kernel> covered;
  for (const char *model : {"tiny-llama.yaml", "tiny-minimax.yaml",
                            "tiny-qwen3.yaml", "tiny-gemma-sliding.yaml"})
    for (bool fused : {false, true}) {
      const plan::Plan good = testing::compilePlan(model, 64, fused, 4);
      REQUIRE(plan::validatePlan(good).empty());
      for (size_t p = 0; p < good.programs.size(); ++p)
        for (size_t i = 0; i < good.programs[p].launches.size(); ++i) {
          const plan::Launch &launch = good.programs[p].launches[i];
          for (size_t f = 0; f < fieldCount(launch.params); ++f) {
            plan::Plan bad = good;
            plan::Launch &l = bad.programs[p].launches[i];
            std::string field;
            if (!breakField(l.params, f, field))
              continue;
            INFO(model << (fused ? " fused " : " generic ")
                       << good.programs[p].phase << " launch " << i << " "
                       << plan::launchName(launch) << " field " << field);
            const std::string error = plan::validatePlan(bad);
            CHECK_THAT(error, Catch::Matchers::Contains(
                                  "launch " + std::to_string(i) + " (" +
                                  plan::launchName(l) + "): "));
            CHECK_THAT(error, Catch::Matchers::Contains("'" + field + "'"));
            covered.insert(launch.kernel());
          }
        }
    }
  // Every kernel with a parameter that can be out of range appears in the
  // tiny models' plans (but see head_slice below); a flag (logits'
  // all_tokens) has no such value and the other kernels have no
  // parameters.
  for (size_t k = 0; k < plan::kNumKernels; ++k) {
    const auto kernel = static_cast<plan::Kernel>(k);
    plan::KernelParams params = plan::paramsOf(kernel);
    // A list of rates can only be broken when it holds one.
    plan::forEachField(params, [](const char *, auto &v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>,
                                   std::vector<double>>)
        v = {1.0};
    });
    bool rangeChecked = false;
    for (size_t f = 0; f < fieldCount(params); ++f) {
      plan::KernelParams copy = params;
      std::string field;
      rangeChecked |= breakField(copy, f, field);
    }
    INFO(plan::kernelName(kernel));
    // The fusions consume the head slices they make, so a compiled plan
    // may hold none; PlanValidationTest checks them on a plan built by
    // hand.
    if (kernel != plan::Kernel::HeadSlice)
      CHECK(covered.count(kernel) == size_t(rangeChecked));
  }
}

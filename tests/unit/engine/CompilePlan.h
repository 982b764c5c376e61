// A model file of models/ compiled to a plan, for the engine tests.
#ifndef STRATA_TESTS_UNIT_ENGINE_COMPILEPLAN_H
#define STRATA_TESTS_UNIT_ENGINE_COMPILEPLAN_H

#include "models/ModelSpec.h"
#include "runtime/Engine.h"
#include "runtime/plan/Plan.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace strata::testing {

/// Imports models/<model>, builds its generic forward, runs the fusion
/// pipeline when `fused`, and lowers it for steps of at most `maxTokens`
/// tokens and `maxBatch` sequences (min(8, maxTokens) when 0). `dtype`, when
/// given, replaces the model file's (as if its `dtype:` line said so; the
/// random weights keep their seed). `allTokenLogits` builds a scoring plan
/// (BuildOptions::allTokenLogits). Fails the current test on any error.
plan::Plan compilePlan(const std::string &model, int64_t maxTokens, bool fused,
                       int64_t maxBatch = 0,
                       std::optional<DType> dtype = std::nullopt,
                       bool allTokenLogits = false);

/// A CPU engine for `plan` with default options; fails the current test
/// when it cannot be made.
std::unique_ptr<Engine> makeCpuEngine(const plan::Plan &plan);

} // namespace strata::testing

#endif // STRATA_TESTS_UNIT_ENGINE_COMPILEPLAN_H

// Human-readable description of a plan, for `strata inspect`: the model's
// caches, the weights, and per program the launches of each stream in issue
// order with their buffers, the events, and the arena's peak size.
#ifndef STRATA_RUNTIME_PLAN_PLANTEXT_H
#define STRATA_RUNTIME_PLAN_PLANTEXT_H

#include "runtime/plan/Plan.h"

#include <string>

namespace strata::plan {

std::string describePlan(const Plan &plan);

/// "1.50 MiB", "512 B": binary units, two decimals.
std::string formatBytes(uint64_t bytes);

/// The bytes of all the weights the plan lists.
uint64_t weightBytes(const Plan &plan);

/// "[tokens, 4096]"
std::string formatShape(const std::vector<Dim> &shape);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_PLANTEXT_H

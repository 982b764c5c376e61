// A few lines on what the fusion passes chose for a plan, for
// `strata inspect --summary` and the README's main command: the fusion
// passes it was built with and without, the attention kind of every layer,
// and per program its launch count, the rope+KV-write
// variant it runs and its attention kernels.
#ifndef STRATA_RUNTIME_PLAN_PLANSUMMARY_H
#define STRATA_RUNTIME_PLAN_PLANSUMMARY_H

#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata::plan {

std::string summarizePlan(const Plan &plan);

/// "0-5", "0,1,3": ascending layer numbers with runs collapsed.
std::string formatLayerList(const std::vector<int64_t> &layers);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_PLANSUMMARY_H

// A few lines on what the fusion passes chose for a plan, for
// `strata inspect --summary` and the README's main command: the attention
// kind of every layer, and per program its launch count, the rope+KV-write
// variant it runs and its attention kernels.
#ifndef STRATA_RUNTIME_PLAN_PLANSUMMARY_H
#define STRATA_RUNTIME_PLAN_PLANSUMMARY_H

#include "runtime/plan/Plan.h"

#include <string>

namespace strata::plan {

std::string summarizePlan(const Plan &plan);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_PLANSUMMARY_H

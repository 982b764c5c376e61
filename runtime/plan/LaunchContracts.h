// What each kernel of a plan takes: its operands' number, kinds, dtypes and
// shapes, how they relate to each other and to the plan's cache and state,
// and its attributes with their ranges. The backends read launches without
// checking them again, so a launch that passes here cannot make a kernel
// read or write outside its buffers.
#ifndef STRATA_RUNTIME_PLAN_LAUNCHCONTRACTS_H
#define STRATA_RUNTIME_PLAN_LAUNCHCONTRACTS_H

#include "runtime/plan/Plan.h"

#include <string>

namespace strata::plan {

/// Empty when launch `index` of `program` has the operands and attributes
/// its kernel takes, else what is wrong ("input 1 'w' has 300 columns, input
/// 0 'x' 256"). Assumes the structural checks of validatePlan passed (buffer
/// indices in range, buffers within the plan's limits).
std::string checkLaunchContract(const Plan &plan, const Program &program,
                                size_t index);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_LAUNCHCONTRACTS_H

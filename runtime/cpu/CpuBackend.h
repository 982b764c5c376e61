// The CPU backend: each program runs on a CpuExecutor over host caches, and
// tokens are picked by the host sampler (runtime/Sampler.h).
#ifndef STRATA_RUNTIME_CPU_CPUBACKEND_H
#define STRATA_RUNTIME_CPU_CPUBACKEND_H

#include "runtime/Backend.h"
#include "runtime/Weights.h"

#include <memory>

namespace strata {

/// `plan` and `weights` must outlive the backend.
std::unique_ptr<Backend> createCpuBackend(const plan::Plan &plan,
                                          const WeightStore &weights);

} // namespace strata

#endif // STRATA_RUNTIME_CPU_CPUBACKEND_H

// STRATA_TRACE=1: after every launch, each backend prints the sum of
// absolute values of the launch's first output to stderr ("trace cpu
// prefill #4 rope_kv_write<packed> 1234.5"), so that the CPU and CUDA
// backends can be compared launch by launch when they disagree. Eager steps
// only (a captured graph cannot be inspected between launches).
#ifndef STRATA_RUNTIME_LAUNCHTRACE_H
#define STRATA_RUNTIME_LAUNCHTRACE_H

#include "runtime/plan/Plan.h"

#include <cstdint>

namespace strata {

bool launchTraceEnabled();

/// STRATA_PROFILE=1: the CUDA backend times every eagerly issued launch and
/// prints milliseconds per kernel and phase when it is destroyed (see
/// CudaProgram::collectProfile for what the figures include).
bool launchProfileEnabled();

/// Prints one trace line for launch `index` of `program` whose first output
/// holds `count` elements of `dtype` at host address `data`.
void traceLaunch(const char *backend, const plan::Program &program,
                 size_t index, const void *data, plan::DType dtype,
                 int64_t count);

} // namespace strata

#endif // STRATA_RUNTIME_LAUNCHTRACE_H

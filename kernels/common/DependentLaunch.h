// Programmatic dependent launch (Hopper): a kernel launched this way may be
// scheduled while the kernel before it on the stream is still running, and
// runs its preamble (for the GEMV: the first stages of the weight stream,
// which no kernel writes) in the shadow of that kernel's tail. The launch
// attribute is only set on kernels whose code calls pdlWait() (Pdl.cuh)
// before touching any memory another kernel writes or reads, so every
// kernel still sees its predecessors' results and none overwrites a buffer
// a predecessor is still reading.
//
// On by default; the switch lets benchmarks and tests compare both ways.
#ifndef STRATA_KERNELS_COMMON_DEPENDENTLAUNCH_H
#define STRATA_KERNELS_COMMON_DEPENDENTLAUNCH_H

namespace strata::kernels {

/// Whether launchers set the programmatic-serialization attribute.
bool dependentLaunchEnabled();
/// Process-wide; affects launches (and graph captures) made afterwards.
void setDependentLaunchEnabled(bool enabled);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_DEPENDENTLAUNCH_H

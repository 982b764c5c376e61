// The scheduling view of a plan program: its launches as hazard-graph nodes,
// its transient buffers as memory-planner requests, and the checks that a
// program's streams, events and arena offsets honour every hazard. Shared by
// the lowering (which schedules and places) and by `strata inspect` and the
// tests (which verify a finished plan).
#ifndef STRATA_CODEGEN_PROGRAMGRAPH_H
#define STRATA_CODEGEN_PROGRAMGRAPH_H

#include "codegen/MemoryPlanner.h"
#include "codegen/StreamScheduler.h"
#include "runtime/plan/Plan.h"

#include <string>
#include <vector>

namespace strata::sched {

/// One node per launch, in the program's launch order. Buffers are
/// resources, except the KV cache and the linear state, which are one
/// resource per layer (the launch's "layer" attribute): layers touch
/// disjoint parts of the same storage. Inputs that are also outputs are
/// read-modify-written. Cost: bytes touched at the limits.
std::vector<LaunchNode> launchNodes(const plan::Program &program,
                                    const plan::Limits &limits);

/// The arena buffers as planner requests (sizes at the limits, users in
/// launch order); `bufferIds[i]` is the program buffer of request i.
std::vector<BufferRequest> arenaRequests(const plan::Program &program,
                                         const plan::Limits &limits,
                                         std::vector<int32_t> &bufferIds);

/// The schedule a program encodes: launch order as issue order, each
/// launch's stream, the events. Streams are renumbered densely in order of
/// first use: a program read from a file may declare many more streams
/// than its launches use.
Schedule scheduleOf(const plan::Program &program);

/// Empty when every hazard between the program's launches is ordered by its
/// streams and events and no two arena buffers that may be live at the
/// same time overlap; else the first violation, naming the program. Takes
/// programs that passed validatePlan, from any file: a launch whose layer
/// is not a layer index, or launches spread over more streams than the
/// check can follow (64), are violations too.
std::string checkProgram(const plan::Program &program,
                         const plan::Limits &limits);

} // namespace strata::sched

#endif // STRATA_CODEGEN_PROGRAMGRAPH_H

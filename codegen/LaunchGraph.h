// The dependency graph of a plan's launches.
//
// Launches are given in program order (the order of the phase function),
// each with the resources it reads and writes: activation buffers, and the
// per-layer KV cache and linear-attention state, which are resources like
// any other so that their hazards are ordered too. Program order is a
// topological order of the result, which every algorithm here relies on.
//
// Plain structs and free functions, no MLIR: codegen feeds them from the IR,
// tests feed them synthetic graphs.
#ifndef STRATA_CODEGEN_LAUNCHGRAPH_H
#define STRATA_CODEGEN_LAUNCHGRAPH_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::sched {

enum class Access { Read, Write, ReadWrite };

struct ResourceUse {
  int64_t resource = 0;
  Access access = Access::Read;
};

struct LaunchNode {
  std::string name;
  /// Estimated run time (any unit, > 0); drives the critical path.
  double cost = 1.0;
  std::vector<ResourceUse> uses;
};

enum class Hazard { ReadAfterWrite, WriteAfterRead, WriteAfterWrite };

const char *toString(Hazard h);

struct Dependency {
  int from = 0;
  int to = 0;
  Hazard hazard = Hazard::ReadAfterWrite;
  int64_t resource = 0;
};

using Edge = std::pair<int, int>;

/// Every hazard between launches, in program order: a read depends on the
/// last write of its resource; a write depends on the last write and on
/// every read since. One entry per (pair, hazard, resource).
std::vector<Dependency> findDependencies(const std::vector<LaunchNode> &nodes);

/// The transitive reduction of the dependency DAG over `numNodes` nodes:
/// the edges (from, to) not implied by a longer path, sorted.
std::vector<Edge> transitiveReduction(int numNodes,
                                      const std::vector<Dependency> &deps);

} // namespace strata::sched

#endif // STRATA_CODEGEN_LAUNCHGRAPH_H

#include "codegen/LaunchGraph.h"

#include <algorithm>
#include <map>

namespace strata::sched {

const char *toString(Hazard h) {
  switch (h) {
  case Hazard::ReadAfterWrite:
    return "read-after-write";
  case Hazard::WriteAfterRead:
    return "write-after-read";
  case Hazard::WriteAfterWrite:
    return "write-after-write";
  }
  return "?";
}

std::vector<Dependency> findDependencies(const std::vector<LaunchNode> &nodes) {
  struct ResourceState {
    int lastWriter = -1;
    std::vector<int> readersSinceWrite;
  };
  std::map<int64_t, ResourceState> state;
  std::vector<Dependency> deps;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    for (const ResourceUse &use : nodes[n].uses) {
      ResourceState &s = state[use.resource];
      bool reads = use.access != Access::Write;
      bool writes = use.access != Access::Read;
      if (reads && s.lastWriter >= 0 && s.lastWriter != n)
        deps.push_back({s.lastWriter, n, Hazard::ReadAfterWrite, use.resource});
      if (writes) {
        if (s.lastWriter >= 0 && s.lastWriter != n && !reads)
          deps.push_back(
              {s.lastWriter, n, Hazard::WriteAfterWrite, use.resource});
        for (int r : s.readersSinceWrite)
          if (r != n)
            deps.push_back({r, n, Hazard::WriteAfterRead, use.resource});
      }
    }
    // State updates after all uses of the node, so that a node reading and
    // writing one resource orders against others only.
    for (const ResourceUse &use : nodes[n].uses) {
      ResourceState &s = state[use.resource];
      if (use.access != Access::Read) {
        s.lastWriter = n;
        s.readersSinceWrite.clear();
      } else if (s.readersSinceWrite.empty() ||
                 s.readersSinceWrite.back() != n) {
        s.readersSinceWrite.push_back(n);
      }
    }
  }
  return deps;
}

std::vector<Edge> transitiveReduction(int numNodes,
                                      const std::vector<Dependency> &deps) {
  std::vector<std::vector<int>> succ(numNodes);
  for (const Dependency &d : deps)
    succ[d.from].push_back(d.to);
  size_t words = (static_cast<size_t>(numNodes) + 63) / 64;
  std::vector<std::vector<uint64_t>> reach(numNodes,
                                           std::vector<uint64_t>(words, 0));
  std::vector<Edge> kept;
  // Reverse program order visits successors before their predecessors.
  // Direct successors in ascending order: if v2 is reachable through v1,
  // then v1 < v2, so v1's reach already holds v2 when v2 is considered.
  for (int u = numNodes - 1; u >= 0; --u) {
    std::vector<int> &s = succ[u];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (int v : s) {
      if (reach[u][v / 64] >> (v % 64) & 1)
        continue;
      kept.emplace_back(u, v);
      reach[u][v / 64] |= uint64_t(1) << (v % 64);
      for (size_t w = 0; w < words; ++w)
        reach[u][w] |= reach[v][w];
    }
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

} // namespace strata::sched

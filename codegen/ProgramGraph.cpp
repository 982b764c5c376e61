#include "codegen/ProgramGraph.h"

#include <algorithm>
#include <map>

namespace strata::sched {

namespace {

/// Resources beyond the buffers: one per cache or state layer, for layers
/// in [0, kLayerLimit).
constexpr int64_t kLayerLimit = int64_t(1) << 40;
constexpr int64_t kKvResourceBase = kLayerLimit;
constexpr int64_t kStateResourceBase = 2 * kLayerLimit;

/// The program's launches hold a vector clock of one entry per stream
/// each; the compiler uses at most 16 streams (strata compile --streams).
constexpr size_t kMaxCheckedStreams = 64;

/// The layer of the cache or state a launch addresses (0 for launches
/// that address none: they touch no cache or state buffer).
int64_t layerOf(const plan::Launch &launch) {
  return plan::launchLayer(launch).value_or(0);
}

/// The bytes of `b` at the limits, saturated at UINT64_MAX: programs read
/// from a plan file can have shapes whose product overflows, and a
/// saturated size still fails every bound it is checked against.
uint64_t bytesAt(const plan::Buffer &b, const plan::Limits &limits) {
  uint64_t n = plan::byteWidth(b.dtype);
  for (const plan::Dim &d : b.shape) {
    int64_t v = d.symbol == plan::Symbol::Tokens  ? limits.maxTokens
                : d.symbol == plan::Symbol::Batch ? limits.maxBatch
                                                  : d.value;
    if (v < 0 || __builtin_mul_overflow(n, uint64_t(v), &n))
      return UINT64_MAX;
  }
  return n;
}

bool contains(const std::vector<int32_t> &list, int32_t x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

} // namespace

std::vector<LaunchNode> launchNodes(const plan::Program &program,
                                    const plan::Limits &limits) {
  std::vector<LaunchNode> nodes;
  for (const plan::Launch &launch : program.launches) {
    LaunchNode node;
    node.name = plan::launchName(launch);
    int64_t layer = layerOf(launch);
    auto resourceOf = [&](int32_t b) -> int64_t {
      // A view and its base are one storage.
      if (program.buffers[b].viewOf >= 0)
        b = program.buffers[b].viewOf;
      // checkProgram rejects layers outside [0, kLayerLimit) before it
      // gets here; wrapping keeps any other caller free of overflow.
      switch (program.buffers[b].kind) {
      case plan::BufferKind::KvCache:
        return int64_t(uint64_t(kKvResourceBase) + uint64_t(layer));
      case plan::BufferKind::LinearState:
        return int64_t(uint64_t(kStateResourceBase) + uint64_t(layer));
      default:
        return b;
      }
    };
    double bytes = 1.0;
    for (int32_t b : launch.inputs) {
      node.uses.push_back({resourceOf(b), contains(launch.outputs, b)
                                              ? Access::ReadWrite
                                              : Access::Read});
      bytes += double(bytesAt(program.buffers[b], limits));
    }
    for (int32_t b : launch.outputs)
      if (!contains(launch.inputs, b)) {
        node.uses.push_back({resourceOf(b), Access::Write});
        bytes += double(bytesAt(program.buffers[b], limits));
      }
    node.cost = bytes;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<BufferRequest> arenaRequests(const plan::Program &program,
                                         const plan::Limits &limits,
                                         std::vector<int32_t> &bufferIds) {
  std::vector<BufferRequest> requests;
  std::vector<int> requestOf(program.buffers.size(), -1);
  bufferIds.clear();
  for (int32_t b = 0; b < static_cast<int32_t>(program.buffers.size()); ++b)
    if (program.buffers[b].kind == plan::BufferKind::Arena) {
      // A view's users extend its base's lifetime (bases come first).
      if (int32_t base = program.buffers[b].viewOf; base >= 0) {
        requestOf[b] = requestOf[base];
        continue;
      }
      requestOf[b] = static_cast<int>(requests.size());
      requests.push_back(
          {program.buffers[b].name, bytesAt(program.buffers[b], limits), {}});
      bufferIds.push_back(b);
    }
  for (int l = 0; l < static_cast<int>(program.launches.size()); ++l)
    for (const auto *list :
         {&program.launches[l].inputs, &program.launches[l].outputs})
      for (int32_t b : *list)
        if (requestOf[b] >= 0 && (requests[requestOf[b]].users.empty() ||
                                  requests[requestOf[b]].users.back() != l))
          requests[requestOf[b]].users.push_back(l);
  return requests;
}

Schedule scheduleOf(const plan::Program &program) {
  Schedule s;
  std::map<int32_t, int> dense;
  for (int l = 0; l < static_cast<int>(program.launches.size()); ++l) {
    auto [it, added] =
        dense.try_emplace(program.launches[l].stream, int(dense.size()));
    if (added)
      s.streams.emplace_back();
    s.issueOrder.push_back(l);
    s.stream.push_back(it->second);
    s.streams[it->second].push_back(l);
  }
  if (s.streams.empty())
    s.streams.emplace_back();
  for (const plan::Event &e : program.events)
    s.events.push_back({e.from, e.to});
  return s;
}

std::string checkProgram(const plan::Program &program,
                         const plan::Limits &limits) {
  const int n = static_cast<int>(program.launches.size());
  auto fail = [&](const std::string &what) {
    return "program '" + program.phase + "': " + what;
  };
  for (int l = 0; l < n; ++l) {
    int64_t layer = layerOf(program.launches[l]);
    if (layer < 0 || layer >= kLayerLimit)
      return fail("launch " + std::to_string(l) + " (" +
                  plan::launchName(program.launches[l]) + ") names layer " +
                  std::to_string(layer) + ", which is not a layer index");
  }
  Schedule s = scheduleOf(program);
  if (s.streams.size() > kMaxCheckedStreams)
    return fail("its launches use " + std::to_string(s.streams.size()) +
                " streams; the check handles at most " +
                std::to_string(kMaxCheckedStreams));
  std::vector<Dependency> deps = findDependencies(launchNodes(program, limits));
  if (std::string e = checkSchedule(n, deps, s); !e.empty())
    return fail(e);
  std::vector<int32_t> ids;
  std::vector<BufferRequest> requests = arenaRequests(program, limits, ids);
  MemoryPlan memory;
  memory.peakBytes = program.arenaBytes;
  for (int32_t b : ids)
    memory.offsets.push_back(program.buffers[b].arenaOffset);
  if (std::string e = checkMemoryPlan(requests, s, n, memory); !e.empty())
    return fail(e);
  return "";
}

} // namespace strata::sched

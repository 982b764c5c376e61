#include "codegen/ProgramGraph.h"

#include <algorithm>

namespace strata::sched {

namespace {

/// Resources beyond the buffers: one per cache or state layer.
constexpr int64_t kKvResourceBase = int64_t(1) << 40;
constexpr int64_t kStateResourceBase = int64_t(2) << 40;

int64_t layerOf(const plan::Launch &launch) {
  for (const plan::Attr &a : launch.attrs)
    if (a.name == "layer")
      if (const int64_t *v = std::get_if<int64_t>(&a.value))
        return *v;
  return 0;
}

uint64_t bytesAt(const plan::Buffer &b, const plan::Limits &limits) {
  return uint64_t(
             plan::numElements(b.shape, limits.maxTokens, limits.maxBatch)) *
         plan::byteWidth(b.dtype);
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
    node.name = launch.kernel;
    int64_t layer = layerOf(launch);
    auto resourceOf = [&](int32_t b) -> int64_t {
      // A view and its base are one storage.
      if (program.buffers[b].viewOf >= 0)
        b = program.buffers[b].viewOf;
      switch (program.buffers[b].kind) {
      case plan::BufferKind::KvCache:
        return kKvResourceBase + layer;
      case plan::BufferKind::LinearState:
        return kStateResourceBase + layer;
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
  s.streams.assign(std::max(1, program.numStreams), {});
  for (int l = 0; l < static_cast<int>(program.launches.size()); ++l) {
    s.issueOrder.push_back(l);
    s.stream.push_back(program.launches[l].stream);
    s.streams[program.launches[l].stream].push_back(l);
  }
  for (const plan::Event &e : program.events)
    s.events.push_back({e.from, e.to});
  return s;
}

std::string checkProgram(const plan::Program &program,
                         const plan::Limits &limits) {
  const int n = static_cast<int>(program.launches.size());
  Schedule s = scheduleOf(program);
  std::vector<Dependency> deps = findDependencies(launchNodes(program, limits));
  if (std::string e = checkSchedule(n, deps, s); !e.empty())
    return "program '" + program.phase + "': " + e;
  std::vector<int32_t> ids;
  std::vector<BufferRequest> requests = arenaRequests(program, limits, ids);
  MemoryPlan memory;
  memory.peakBytes = program.arenaBytes;
  for (int32_t b : ids)
    memory.offsets.push_back(program.buffers[b].arenaOffset);
  if (std::string e = checkMemoryPlan(requests, s, n, memory); !e.empty())
    return "program '" + program.phase + "': " + e;
  return "";
}

} // namespace strata::sched

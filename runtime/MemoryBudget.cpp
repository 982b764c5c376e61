#include "runtime/MemoryBudget.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <sys/resource.h>

namespace strata {

namespace {

constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();

/// The first number of a one-line file ("max" and unreadable: unknown).
uint64_t readNumber(const char *path) {
  std::ifstream in(path);
  unsigned long long v = 0;
  if (!(in >> v))
    return kUnknown;
  return v;
}

uint64_t memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return saturatingMul(kib, 1024);
  return kUnknown;
}

/// What the process's cgroup (v2) still allows.
uint64_t cgroupAvailable() {
  std::ifstream in("/proc/self/cgroup");
  std::string line, group;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0)
      group = line.substr(3);
  if (group.empty())
    return kUnknown;
  const std::string dir = "/sys/fs/cgroup" + group;
  uint64_t max = readNumber((dir + "/memory.max").c_str());
  uint64_t current = readNumber((dir + "/memory.current").c_str());
  if (max == kUnknown || current == kUnknown)
    return kUnknown;
  return max > current ? max - current : 0;
}

} // namespace

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kUnknown / a)
    return kUnknown;
  return a * b;
}

uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  return a > kUnknown - b ? kUnknown : a + b;
}

uint64_t weightBytesRead(const plan::Plan &plan) {
  const std::vector<bool> read = plan::weightsRead(plan);
  uint64_t bytes = 0;
  for (size_t i = 0; i < plan.weights.size(); ++i)
    if (read[i])
      bytes = saturatingAdd(
          bytes,
          saturatingMul(uint64_t(plan::numElements(plan.weights[i].shape)),
                        plan::byteWidth(plan.weights[i].dtype)));
  return bytes;
}

std::vector<MemoryNeed> cacheNeeds(const plan::Plan &plan, int64_t blocks,
                                   int64_t slots) {
  auto product = [](std::initializer_list<uint64_t> factors) {
    uint64_t bytes = 1;
    for (uint64_t f : factors)
      bytes = saturatingMul(bytes, f);
    return bytes;
  };
  const plan::KvCacheDesc &kv = plan.kvCache;
  const plan::LinearStateDesc &ls = plan.linearState;
  // K and V of every layer, block by block; fp32 states.
  const uint64_t kvBytes =
      kv.layers == 0
          ? 0
          : product({uint64_t(blocks), 2, uint64_t(kv.layers),
                     uint64_t(kv.kvHeads), uint64_t(kv.blockSize),
                     uint64_t(kv.headDim), plan::byteWidth(kv.dtype)});
  const uint64_t stateBytes =
      ls.layers == 0
          ? 0
          : product({uint64_t(slots), uint64_t(ls.layers), uint64_t(ls.heads),
                     uint64_t(ls.keyDim), uint64_t(ls.valueDim), 4});
  return {{"KV cache", kvBytes}, {"linear-attention states", stateBytes}};
}

uint64_t availableHostBytes() {
  uint64_t bytes = std::min(memAvailable(), cgroupAvailable());
  struct rlimit limit {};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min<uint64_t>(bytes, limit.rlim_cur);
  return bytes;
}

std::string formatBytes(uint64_t bytes) {
  if (bytes == kUnknown)
    return "more than 16 EiB";
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char text[64];
  if (u == 0)
    std::snprintf(text, sizeof text, "%llu B", (unsigned long long)bytes);
  else
    std::snprintf(text, sizeof text, "%.2f %s", v, units[u]);
  return text;
}

std::string memoryShortfall(const std::string &what,
                            const std::vector<MemoryNeed> &needs,
                            uint64_t available, const std::string &memory) {
  uint64_t total = 0;
  for (const MemoryNeed &n : needs)
    total = saturatingAdd(total, n.bytes);
  if (total <= available)
    return "";
  std::ostringstream os;
  os << what << " needs " << formatBytes(total) << " of " << memory << " (";
  const char *separator = "";
  for (const MemoryNeed &n : needs)
    if (n.bytes) {
      os << separator << n.what << " " << formatBytes(n.bytes);
      separator = ", ";
    }
  os << "), " << formatBytes(available) << " available";
  return os.str();
}

} // namespace strata

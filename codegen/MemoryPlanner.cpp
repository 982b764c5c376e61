#include "codegen/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

namespace strata::sched {

namespace {

uint64_t alignUp(uint64_t x) {
  return (x + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// a is dead before b is born: all of a's users happen-before every user of
/// b. Checking every user of b (not just its producer) keeps this correct
/// even when b's users span streams.
bool deadBefore(const BufferRequest &a, const BufferRequest &b,
                const HappensBefore &before) {
  for (int u : a.users)
    for (int v : b.users)
      if (!before(u, v))
        return false;
  return true;
}

} // namespace

std::optional<uint64_t>
arenaWithoutReuse(const std::vector<BufferRequest> &buffers) {
  uint64_t total = 0;
  for (const BufferRequest &b : buffers)
    if (b.bytes > UINT64_MAX - (kArenaAlignment - 1) ||
        __builtin_add_overflow(total, alignUp(b.bytes), &total))
      return std::nullopt;
  return total;
}

bool buffersConflict(const BufferRequest &a, const BufferRequest &b,
                     const HappensBefore &before) {
  return !deadBefore(a, b, before) && !deadBefore(b, a, before);
}

MemoryPlan planMemory(const std::vector<BufferRequest> &buffers,
                      const Schedule &schedule, int numNodes) {
  HappensBefore before(numNodes, schedule);
  const size_t n = buffers.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });

  std::vector<size_t> placed;
  for (size_t i : order) {
    plan.totalBytes += alignUp(buffers[i].bytes);
    // Intervals taken by conflicting buffers, sorted by offset; the buffer
    // goes into the first gap that fits.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed)
      if (buffersConflict(buffers[i], buffers[j], before))
        taken.emplace_back(plan.offsets[j],
                           plan.offsets[j] + alignUp(buffers[j].bytes));
    std::sort(taken.begin(), taken.end());
    uint64_t offset = 0;
    uint64_t size = alignUp(buffers[i].bytes);
    for (const auto &[begin, end] : taken) {
      if (offset + size <= begin)
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.peakBytes = std::max(plan.peakBytes, offset + size);
    placed.push_back(i);
  }
  return plan;
}

std::string checkMemoryPlan(const std::vector<BufferRequest> &buffers,
                            const Schedule &schedule, int numNodes,
                            const MemoryPlan &plan) {
  HappensBefore before(numNodes, schedule);
  // Offsets and sizes may come from a plan file: every buffer is checked to
  // end inside the arena without computing an end that could wrap, and
  // only then are ends compared.
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (plan.offsets[i] % kArenaAlignment != 0)
      return "buffer '" + buffers[i].name + "' is not aligned";
    if (plan.offsets[i] > plan.peakBytes ||
        buffers[i].bytes > plan.peakBytes - plan.offsets[i])
      return "buffer '" + buffers[i].name + "' ends beyond the arena";
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      bool overlap = plan.offsets[i] < plan.offsets[j] + buffers[j].bytes &&
                     plan.offsets[j] < plan.offsets[i] + buffers[i].bytes;
      if (overlap && buffersConflict(buffers[i], buffers[j], before))
        return "buffers '" + buffers[i].name + "' and '" + buffers[j].name +
               "' are live at the same time and overlap";
    }
  }
  return "";
}

} // namespace strata::sched

// Placement of a plan's transient buffers in one device arena.
//
// Two buffers may share bytes only when one is dead before the other is
// born on the device: every launch touching the first happens-before the
// launch that first writes the second (stream order and events decide, see
// HappensBefore). Placement is greedy: largest buffers first, each at the
// lowest aligned offset that overlaps no conflicting buffer placed so far.
// Weights, the KV cache and the linear state live outside the arena.
#ifndef STRATA_CODEGEN_MEMORYPLANNER_H
#define STRATA_CODEGEN_MEMORYPLANNER_H

#include "codegen/StreamScheduler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::sched {

struct BufferRequest {
  std::string name;
  uint64_t bytes = 0;
  /// Launches that touch the buffer; the first in issue order is its
  /// producer. Must not be empty.
  std::vector<int> users;
};

struct MemoryPlan {
  /// Byte offset of each buffer in the arena (indexed like the requests).
  std::vector<uint64_t> offsets;
  /// Arena size: the end of the highest placed buffer.
  uint64_t peakBytes = 0;
  /// Sum of all buffer sizes: the arena size without any reuse.
  uint64_t totalBytes = 0;
};

/// Alignment of every offset: the widest vector access a kernel makes.
constexpr uint64_t kArenaAlignment = 256;

/// The arena without any reuse: the sum of the aligned sizes, which bounds
/// every offset and size planMemory computes. Empty when it does not fit in
/// 64 bits (planMemory must not be called then).
std::optional<uint64_t>
arenaWithoutReuse(const std::vector<BufferRequest> &buffers);

MemoryPlan planMemory(const std::vector<BufferRequest> &buffers,
                      const Schedule &schedule, int numNodes);

/// True when the lifetimes of a and b may overlap on the device.
bool buffersConflict(const BufferRequest &a, const BufferRequest &b,
                     const HappensBefore &before);

/// Empty when no two conflicting buffers overlap in `plan`, every offset is
/// aligned and within peakBytes; else the first violation in words.
std::string checkMemoryPlan(const std::vector<BufferRequest> &buffers,
                            const Schedule &schedule, int numNodes,
                            const MemoryPlan &plan);

} // namespace strata::sched

#endif // STRATA_CODEGEN_MEMORYPLANNER_H

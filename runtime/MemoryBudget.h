// How much memory a run will ask for, checked before it is asked for. A
// model or option that is valid but too large for the machine (a 2^31-row
// vocabulary, ten million KV blocks) is refused with the amount it would
// need and the amount there is, instead of failing inside an allocation.
#ifndef STRATA_RUNTIME_MEMORYBUDGET_H
#define STRATA_RUNTIME_MEMORYBUDGET_H

#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// One part of a request for memory ("the weights", 1.2 GiB).
struct MemoryNeed {
  std::string what;
  uint64_t bytes = 0;
};

/// Bytes of host memory this process can still take: the kernel's
/// MemAvailable estimate, lowered to what the process's control group and
/// address-space limit leave. UINT64_MAX when none of them can be read.
uint64_t availableHostBytes();

/// "512 B", "1.50 KiB", "37.25 GiB".
std::string formatBytes(uint64_t bytes);

/// Empty when the needs add up to at most `available`; else "<what> needs
/// X of <memory> (part A, part B), Y are available". Sums saturate.
std::string memoryShortfall(const std::string &what,
                            const std::vector<MemoryNeed> &needs,
                            uint64_t available, const std::string &memory);

/// Bytes of the weights some launch of `plan` reads: what a backend holds.
uint64_t weightBytesRead(const plan::Plan &plan);

/// The KV cache of `blocks` blocks and the linear-attention states of
/// `slots` slots of `plan`'s model (zero bytes for what it does not have).
std::vector<MemoryNeed> cacheNeeds(const plan::Plan &plan, int64_t blocks,
                                   int64_t slots);

/// Saturating arithmetic for sizes computed from plan dimensions.
uint64_t saturatingMul(uint64_t a, uint64_t b);
uint64_t saturatingAdd(uint64_t a, uint64_t b);

} // namespace strata

#endif // STRATA_RUNTIME_MEMORYBUDGET_H

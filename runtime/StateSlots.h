// Slots of the linear-attention state: one fp32 [layers, heads, dk, dv]
// state per live sequence, addressed by slot id. Batches name their slots;
// padded batch entries use kPaddingSlot, which kernels skip.
#ifndef STRATA_RUNTIME_STATESLOTS_H
#define STRATA_RUNTIME_STATESLOTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

constexpr int32_t kPaddingSlot = -1;

class StateSlots {
public:
  explicit StateSlots(int32_t numSlots = 0);

  int32_t numSlots() const { return static_cast<int32_t>(inUse_.size()); }
  int32_t freeSlots() const { return static_cast<int32_t>(free_.size()); }

  /// Lowest free slot id, or false with a message when all are taken. A new
  /// slot's state must be zeroed by the caller before its first use.
  bool allocate(int32_t &slot, std::string &error);
  /// False for an id that is out of range, the padding slot, or not in use.
  bool release(int32_t slot);
  bool inUse(int32_t slot) const;

private:
  std::vector<bool> inUse_;
  std::vector<int32_t> free_;
};

} // namespace strata

#endif // STRATA_RUNTIME_STATESLOTS_H

#include "runtime/StateSlots.h"

#include <algorithm>
#include <functional>

namespace strata {

StateSlots::StateSlots(int32_t numSlots) : inUse_(numSlots, false) {
  for (int32_t s = numSlots - 1; s >= 0; --s)
    free_.push_back(s);
}

bool StateSlots::allocate(int32_t &slot, std::string &error) {
  if (free_.empty()) {
    error = "linear-attention state slots exhausted: all " +
            std::to_string(numSlots()) + " are in use";
    return false;
  }
  slot = free_.back();
  free_.pop_back();
  inUse_[slot] = true;
  return true;
}

bool StateSlots::release(int32_t slot) {
  if (!inUse(slot))
    return false;
  inUse_[slot] = false;
  // Keep the free list sorted descending so that allocate() hands out the
  // lowest id: compact slot ranges keep batches' state reads local.
  free_.insert(std::upper_bound(free_.begin(), free_.end(), slot,
                                std::greater<int32_t>()),
               slot);
  return true;
}

bool StateSlots::inUse(int32_t slot) const {
  return slot >= 0 && slot < numSlots() && inUse_[slot];
}

} // namespace strata

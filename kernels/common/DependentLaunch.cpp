#include "kernels/common/DependentLaunch.h"

#include <atomic>

namespace strata::kernels {

namespace {
std::atomic<bool> gEnabled{true};
} // namespace

bool dependentLaunchEnabled() { return gEnabled.load(std::memory_order_relaxed); }

void setDependentLaunchEnabled(bool enabled) {
  gEnabled.store(enabled, std::memory_order_relaxed);
}

} // namespace strata::kernels

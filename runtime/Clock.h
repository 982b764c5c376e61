// Wall-clock seconds for the engine's timings (a monotonic clock).
#ifndef STRATA_RUNTIME_CLOCK_H
#define STRATA_RUNTIME_CLOCK_H

#include <chrono>

namespace strata {

inline double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace strata

#endif // STRATA_RUNTIME_CLOCK_H

// What launchers size grids and shared memory by: the current device's SM
// count and shared-memory limits, queried once per device.
#ifndef STRATA_KERNELS_COMMON_DEVICELIMITS_H
#define STRATA_KERNELS_COMMON_DEVICELIMITS_H

#include "kernels/common/Status.h"

namespace strata::kernels {

struct DeviceLimits {
  int sms = 0;
  int smemPerSm = 0;         ///< bytes of shared memory per SM
  int smemPerBlockOptin = 0; ///< the most one block may opt in to
};

/// The current device's limits (cached per device ordinal).
Status currentDeviceLimits(DeviceLimits &out);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_DEVICELIMITS_H

// Enumeration of the CUDA devices the runtime can use.
//
// Works in every build: without CUDA support compiled in, or on a machine
// without a device, the query says so instead of failing.
#ifndef STRATA_RUNTIME_DEVICES_H
#define STRATA_RUNTIME_DEVICES_H

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int computeMajor = 0;
  int computeMinor = 0;
  int multiprocessors = 0;
  uint64_t totalMemoryBytes = 0;
  uint64_t freeMemoryBytes = 0;
  /// Peak DRAM bandwidth from the memory clock and bus width (bytes/s);
  /// a datasheet figure, not a measurement.
  double peakBandwidthBytesPerSecond = 0.0;
};

struct DeviceQuery {
  /// False when this build has no CUDA support.
  bool cudaCompiledIn = false;
  std::vector<DeviceInfo> devices;
  /// Why no device is listed (driver missing, no device, ...); empty when
  /// devices were found.
  std::string reason;
};

DeviceQuery queryDevices();

/// One line per device ("0: NVIDIA H200, sm_90, 132 SMs, 139.8 GiB"), or the
/// reason there is none.
std::string formatDeviceQuery(const DeviceQuery &query);

} // namespace strata

#endif // STRATA_RUNTIME_DEVICES_H

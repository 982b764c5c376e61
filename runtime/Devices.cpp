#include "runtime/Devices.h"

#include <cstdio>
#include <sstream>

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata {

DeviceQuery queryDevices() {
  DeviceQuery query;
#ifdef STRATA_HAVE_CUDA
  query.cudaCompiledIn = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    query.reason = std::string("CUDA reports: ") + cudaGetErrorString(err);
    return query;
  }
  if (count == 0) {
    query.reason = "CUDA reports no device";
    return query;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
      continue;
    DeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    info.totalMemoryBytes = prop.totalGlobalMem;
    int memClockKHz = 0, busWidthBits = 0;
    cudaDeviceGetAttribute(&memClockKHz, cudaDevAttrMemoryClockRate, i);
    cudaDeviceGetAttribute(&busWidthBits, cudaDevAttrGlobalMemoryBusWidth, i);
    // Double data rate: two transfers per clock.
    info.peakBandwidthBytesPerSecond =
        2.0 * memClockKHz * 1e3 * (busWidthBits / 8.0);
    size_t freeBytes = 0, totalBytes = 0;
    if (cudaSetDevice(i) == cudaSuccess &&
        cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
      info.freeMemoryBytes = freeBytes;
    query.devices.push_back(info);
  }
  if (query.devices.empty())
    query.reason = "no device could be queried";
#else
  query.reason = "this build of strata has no CUDA support";
#endif
  return query;
}

std::string formatDeviceQuery(const DeviceQuery &query) {
  std::ostringstream os;
  if (query.devices.empty()) {
    os << "no CUDA device: " << query.reason << "\n";
    return os.str();
  }
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  for (const DeviceInfo &d : query.devices) {
    char line[256];
    std::snprintf(line, sizeof(line),
                  "%d: %s, sm_%d%d, %d SMs, %.1f GiB (%.1f GiB free), "
                  "%.2f TB/s peak DRAM\n",
                  d.index, d.name.c_str(), d.computeMajor, d.computeMinor,
                  d.multiprocessors, d.totalMemoryBytes / GiB,
                  d.freeMemoryBytes / GiB,
                  d.peakBandwidthBytesPerSecond / 1e12);
    os << line;
  }
  return os.str();
}

} // namespace strata

#include "kernels/common/SmemLimit.h"

#include <map>
#include <mutex>
#include <utility>

namespace strata::kernels {

namespace {
std::mutex gMutex;
// (device, kernel) -> the largest limit set so far.
std::map<std::pair<int, const void *>, int> gLimits;
} // namespace

cudaError_t ensureDynamicSmem(const void *kernel, int bytes) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    return e;
  const std::pair<int, const void *> key{device, kernel};
  std::lock_guard<std::mutex> lock(gMutex);
  if (auto it = gLimits.find(key); it != gLimits.end() && it->second >= bytes)
    return cudaSuccess;
  if (cudaError_t e = cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
      e != cudaSuccess)
    return e;
  gLimits[key] = bytes;
  return cudaSuccess;
}

void forgetSmemLimits() {
  std::lock_guard<std::mutex> lock(gMutex);
  gLimits.clear();
}

} // namespace strata::kernels

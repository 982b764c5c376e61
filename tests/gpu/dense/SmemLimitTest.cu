// ensureDynamicSmem: the shared memory limit a launcher asks for is in
// force (the function's attribute says so, and a launch that uses it runs
// and writes every byte it was given), is never lowered by a smaller
// request, and a refused request is reported and leaves the limit as it was.
#include "kernels/common/SmemLimit.h"

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

using namespace strata::kernels;

namespace {

// Fills its dynamic shared memory with a pattern, then each thread sums
// what the others wrote: a launch whose shared memory were short would
// fail to launch or disagree.
__global__ void fillSharedKernel(int words, uint32_t *out) {
  extern __shared__ uint32_t buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x)
    buf[i] = uint32_t(i) * 2654435761u;
  __syncthreads();
  uint32_t sum = 0;
  for (int i = threadIdx.x; i < words; i += blockDim.x)
    sum += buf[words - 1 - i];
  atomicAdd(out, sum);
}

int maxDynamicSmem() {
  cudaFuncAttributes attr{};
  REQUIRE(cudaFuncGetAttributes(&attr, fillSharedKernel) == cudaSuccess);
  return attr.maxDynamicSharedSizeBytes;
}

} // namespace

TEST_CASE("the dynamic shared memory limit is raised once and kept",
          "[smem_limit]") {
  int device = 0, optin = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&optin,
                                 cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                 device) == cudaSuccess);
  REQUIRE(optin > 96 * 1024);
  forgetSmemLimits();

  REQUIRE(ensureDynamicSmem(fillSharedKernel, 96 * 1024) == cudaSuccess);
  CHECK(maxDynamicSmem() == 96 * 1024);
  // A smaller request keeps the larger limit.
  REQUIRE(ensureDynamicSmem(fillSharedKernel, 64 * 1024) == cudaSuccess);
  CHECK(maxDynamicSmem() == 96 * 1024);
  // A larger one raises it, up to the device's opt-in maximum.
  REQUIRE(ensureDynamicSmem(fillSharedKernel, optin) == cudaSuccess);
  CHECK(maxDynamicSmem() == optin);

  // Beyond the maximum: refused, reported, the limit unchanged.
  CHECK(ensureDynamicSmem(fillSharedKernel, optin + 1024) != cudaSuccess);
  (void)cudaGetLastError();
  CHECK(maxDynamicSmem() == optin);

  // A launch with all of it runs, and every word was written and read.
  const int words = optin / 4;
  uint32_t *out = nullptr;
  REQUIRE(cudaMalloc(&out, sizeof(uint32_t)) == cudaSuccess);
  REQUIRE(cudaMemset(out, 0, sizeof(uint32_t)) == cudaSuccess);
  fillSharedKernel<<<1, 256, size_t(optin)>>>(words, out);
  REQUIRE(cudaGetLastError() == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  uint32_t got = 0;
  REQUIRE(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  uint32_t want = 0;
  for (int i = 0; i < words; ++i)
    want += uint32_t(i) * 2654435761u;
  CHECK(got == want);
  REQUIRE(cudaFree(out) == cudaSuccess);

  // After forgetting, the next request sets the attribute again.
  forgetSmemLimits();
  REQUIRE(ensureDynamicSmem(fillSharedKernel, 80 * 1024) == cudaSuccess);
  CHECK(maxDynamicSmem() == 80 * 1024);
}

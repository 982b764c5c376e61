// Main of every GPU test executable: runs Catch2 only when a CUDA device is
// present. Otherwise it says why and exits 77 so that ctest reports the test
// as skipped, not passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    const char *require = std::getenv("STRATA_REQUIRE_GPU");
    bool required = require && std::strcmp(require, "0") != 0;
    std::printf("%s: no CUDA device (%s)\n", required ? "FAILED" : "SKIPPED",
                err != cudaSuccess ? cudaGetErrorString(err) : "count 0");
    return required ? 1 : 77;
  }
  return Catch::Session().run(argc, argv);
}

// What every GPU test uses: CUDA_REQUIRE, device buffers whose CUDA
// failures fail the test case, and the seed of the run's random inputs.
#ifndef STRATA_TESTS_GPU_GPUTESTSUPPORT_H
#define STRATA_TESTS_GPU_GPUTESTSUPPORT_H

#include "kernels/common/DeviceBuffer.h"

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cstdint>

/// Fails the test case when `expr` is not cudaSuccess, naming the call and
/// the error.
#define CUDA_REQUIRE(expr)                                                     \
  do {                                                                         \
    cudaError_t err_ = (expr);                                                 \
    INFO(#expr << ": " << cudaGetErrorString(err_));                           \
    REQUIRE(err_ == cudaSuccess);                                              \
  } while (0)

namespace strata::kernels::test {

/// Written into every 16-bit output before a run: a NaN in fp16 and bf16
/// that no rounding produces (the canonical NaN is 0x7FFF), so an element
/// left unwritten reads back as exactly this.
constexpr uint16_t kPoison = 0xffff;

/// The Check of BasicDeviceBuffer inside a Catch2 test case.
struct RequireCudaSuccess {
  static void check(cudaError_t err, const char *what) {
    INFO(what << ": " << cudaGetErrorString(err));
    REQUIRE(err == cudaSuccess);
  }
};

template <typename E>
using DeviceBuffer = BasicDeviceBuffer<E, RequireCudaSuccess>;

/// Seed of this run's random inputs: STRATA_TEST_SEED when set (to replay a
/// failure), else drawn from the system; printed on first use either way.
/// A value that is not a whole decimal number in [0, 2^63 - 1] ends the
/// run with a message and exit code 2.
uint64_t testSeed();

} // namespace strata::kernels::test

#endif // STRATA_TESTS_GPU_GPUTESTSUPPORT_H

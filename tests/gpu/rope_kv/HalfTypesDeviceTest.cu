// kernels/cpu/HalfTypes.h must store the bits the device stores: convert a
// million float patterns on both sides (every high half-word with the low
// half-words where fp16 and bf16 rounding decides, plus random ones).
#include "RopeKvTestSupport.h"
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {

__global__ void convertKernel(const uint32_t *in, uint16_t *bf, uint16_t *h,
                              size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  float f = __uint_as_float(in[i]);
  bf[i] = __bfloat16_as_ushort(__float2bfloat16_rn(f));
  h[i] = __half_as_ushort(__float2half_rn(f));
}

} // namespace

TEST_CASE("host fp16/bf16 rounding matches the device bit for bit",
          "[gpu][half]") {
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000,
                           0x3000, 0x4000, 0x6000, 0x7fff, 0x8000, 0x8001,
                           0x9000, 0xa000, 0xc000, 0xffff};
  std::vector<uint32_t> patterns;
  for (uint32_t hi = 0; hi < 0x10000u; ++hi)
    for (uint32_t lo : lows)
      patterns.push_back((hi << 16) | lo);
  std::mt19937_64 rng(testSeed());
  for (int i = 0; i < (1 << 20); ++i)
    patterns.push_back(uint32_t(rng()));

  DeviceBuffer<uint32_t> in(patterns);
  DeviceBuffer<uint16_t> bf(patterns.size()), h(patterns.size());
  unsigned blocks = unsigned((patterns.size() + 255) / 256);
  convertKernel<<<blocks, 256>>>(in.get(), bf.get(), h.get(), patterns.size());
  CUDA_REQUIRE(cudaGetLastError());
  std::vector<uint16_t> bfGot = bf.download(), hGot = h.download();
  size_t bfBad = 0, hBad = 0;
  for (size_t i = 0; i < patterns.size(); ++i) {
    float f = floatFromBits(patterns[i]);
    if (bfGot[i] != floatToBf16Bits(f) && bfBad++ == 0)
      FAIL_CHECK("bf16 of 0x" << std::hex << patterns[i] << ": device 0x"
                              << bfGot[i] << " host 0x" << floatToBf16Bits(f));
    if (hGot[i] != floatToF16Bits(f) && hBad++ == 0)
      FAIL_CHECK("fp16 of 0x" << std::hex << patterns[i] << ": device 0x"
                              << hGot[i] << " host 0x" << floatToF16Bits(f));
  }
  CHECK(bfBad == 0);
  CHECK(hBad == 0);
}

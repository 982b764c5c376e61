// GPU tests of the lightning attention kernels against the CPU reference.
// [small] cases are the ones run under compute-sanitizer; [large] cases
// cover the required lengths up to and past 8192 tokens.
#include "kernels/linear_attention/LightningAttention.h"
#include "tests/gpu/GpuTestSupport.h"
#include "tests/gpu/linear_attention/LightningCase.h"

#include <catch2/catch.hpp>

using namespace strata::kernels;
using namespace strata::kernels::lightning_test;

namespace {
/// Fresh inputs every run, from the run's seed (GpuTestSupport.h).
std::mt19937_64 &testRng() {
  static std::mt19937_64 rng(strata::kernels::test::testSeed());
  return rng;
}
} // namespace

TEST_CASE("lightning prefill, short ragged batches", "[lightning][small]") {
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (int hd : {64, 128})
      for (int tile : {32, 64}) {
        PrefillCase c;
        c.dtype = dtype;
        c.headDim = hd;
        c.dvTile = tile;
        // -7: a padding entry; 0: a sequence with no tokens this step.
        c.lens = {1, 65, -7, 130, 0, 64, 3};
        runPrefillCase(c, testRng());
      }
}

TEST_CASE("lightning decode", "[lightning][small]") {
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (int hd : {64, 128}) {
      DecodeCase c;
      c.dtype = dtype;
      c.headDim = hd;
      runDecodeCase(c, testRng());
    }
  // Every column tile and load flavour the benchmark can pick.
  for (int hd : {64, 128})
    for (int cols : {16, 32, 64, 128})
      for (bool prefetch : {false, true}) {
        if (cols > hd)
          continue;
        DecodeCase c;
        c.headDim = hd;
        c.batch = 11;
        c.padEvery = 4;
        c.cols = cols;
        c.prefetch = prefetch;
        runDecodeCase(c, testRng());
      }
}

TEST_CASE("lightning prefill then decode equals decode from the start",
          "[lightning][small]") {
  runPrefillThenDecode(ActDType::BF16, 128, {70, 1, 64}, {90, 12, 80},
                       testRng());
  runPrefillThenDecode(ActDType::F16, 64, {129, 5}, {140, 30}, testRng());
}

TEST_CASE("lightning prefill, required lengths", "[lightning][large]") {
  for (ActDType dtype : {ActDType::BF16, ActDType::F16}) {
    PrefillCase c;
    c.dtype = dtype;
    c.headDim = 128;
    c.lens = {1, 255, 256, 257, 1000, -300, 8192, 12000};
    runPrefillCase(c, testRng());
  }
  PrefillCase c;
  c.headDim = 128;
  c.dvTile = 32;
  c.lens = {257, 8192, 9001};
  runPrefillCase(c, testRng());
  for (ActDType dtype : {ActDType::BF16, ActDType::F16}) {
    PrefillCase c64;
    c64.dtype = dtype;
    c64.headDim = 64;
    c64.lens = {1, 255, 256, 257, 1000, -20, 8192, 10000};
    runPrefillCase(c64, testRng());
  }
}

TEST_CASE("lightning decode, large batch", "[lightning][large]") {
  DecodeCase c;
  c.batch = 300;
  c.heads = 8;
  c.padEvery = 7;
  runDecodeCase(c, testRng());
}

TEST_CASE("lightning prefill then decode, long prefix", "[lightning][large]") {
  runPrefillThenDecode(ActDType::BF16, 128, {3000, 257}, {3040, 300},
                       testRng());
}

TEST_CASE("lightning launchers reject bad arguments", "[lightning][small]") {
  LightningDims dims;
  dims.batch = 1;
  dims.numHeads = 2;
  dims.headDim = 96;
  dims.numSlots = 1;
  LightningTensors t;
  Status s = lightningDecode(dims, t, nullptr);
  REQUIRE(!s.ok());
  CHECK(s.message() ==
        "lightning_decode: headDim 96 is not supported (64 or 128)");
  dims.headDim = 64;
  s = lightningPrefill(dims, t, nullptr);
  REQUIRE(!s.ok());
  CHECK(s.message() == "lightning_prefill: q is null");
  s = lightningPrefillTiled(dims, t, 48, nullptr);
  REQUIRE(!s.ok());
}

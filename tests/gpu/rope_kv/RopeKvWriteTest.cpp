// rope_kv_write on the GPU against the CPU reference: both kernels x every
// variant x cache layout x dtype x pairing x QK-norm on/off, each on a
// different shape (odd token counts, batch 3 and 5, head dims 64, 80 and
// 128, GQA ratios 1, 4 and 8, partial rotary, ragged batches, odd block
// sizes, per-sequence tables, llama3 scaling), plus launches large enough
// for the launchers to pick the streamed kernel themselves.
#include "RopeKvCase.h"
#include "RopeKvTestSupport.h"

#include <catch2/catch.hpp>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {

struct Shape {
  int64_t batch, seq;
  int32_t hq, hkv, headDim, rotaryDim;
  bool ragged;
};

// None of the token counts is a multiple of a warp, a block or a page.
const Shape kShapes[] = {
    {3, 5, 8, 8, 64, 64, false},     // GQA 1
    {2, 37, 16, 4, 128, 128, false}, // GQA 4
    {5, 1, 32, 4, 128, 64, false},   // decode, GQA 8, partial rotary
    {3, 13, 8, 1, 64, 32, true},     // GQA 8, partial, ragged
    {1, 129, 4, 1, 128, 96, true},   // partial 3/4, ragged
    {4, 3, 12, 3, 80, 32, false},    // head dim 80: a partly idle lane group
    {3, 7, 32, 8, 128, 128, true},   // Llama-like GQA 4, ragged
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);
const int64_t kBlockSizes[] = {16, 7, 32, 1};

void runMatrix(RopeKvVariant variant, RopeKvKernel kernel) {
  std::mt19937_64 rng(testSeed() + uint64_t(variant) +
                      (kernel == RopeKvKernel::Streamed ? 1000 : 0));
  int index = 0;
  for (KvCacheLayout layout : {KvCacheLayout::Paged, KvCacheLayout::Contiguous})
    for (ActDType dtype : {ActDType::BF16, ActDType::F16})
      for (RopePairingKind pairing :
           {RopePairingKind::Neox, RopePairingKind::GptJ})
        for (bool norm : {false, true}) {
          const Shape &s = kShapes[(index + int(variant) * 3) % kNumShapes];
          RopeKvCase c;
          c.variant = variant;
          c.layout = layout;
          c.dtype = dtype;
          c.pairing = pairing;
          c.qkNorm = norm;
          c.batch = s.batch;
          c.seq = s.seq;
          c.numQHeads = s.hq;
          c.numKvHeads = s.hkv;
          c.headDim = s.headDim;
          c.rotaryDim = s.rotaryDim;
          c.ragged = s.ragged;
          c.minCached = index % 2 ? 1 : 0;
          c.maxCached = 50 + 17 * index;
          c.blockSize = kBlockSizes[index % 4];
          c.combinedPool = index % 3 == 0;
          c.extraCapacity = index % 5;
          c.perSequenceTable = index % 4 == 1;
          c.scaling =
              index % 5 == 2 ? RopeScalingKind::Llama3 : RopeScalingKind::None;
          c.invalidPosition = index % 3 == 1;
          c.kernel = kernel;
          runRopeKvCase(c, rng);
          ++index;
        }
}

} // namespace

const RopeKvKernel kKernels[] = {RopeKvKernel::PerThread,
                                 RopeKvKernel::Streamed};

TEST_CASE("packed rope_kv_write matches the CPU reference", "[gpu][rope_kv]") {
  for (RopeKvKernel kernel : kKernels)
    runMatrix(RopeKvVariant::Packed, kernel);
}

TEST_CASE("continuous rope_kv_write matches the CPU reference",
          "[gpu][rope_kv]") {
  for (RopeKvKernel kernel : kKernels)
    runMatrix(RopeKvVariant::Continuous, kernel);
}

TEST_CASE("tree rope_kv_write matches the CPU reference", "[gpu][rope_kv]") {
  for (RopeKvKernel kernel : kKernels)
    runMatrix(RopeKvVariant::Tree, kernel);
}

// Llama-like heads over enough tokens that Auto streams: ragged sequences,
// every variant, both layouts, and a head dim whose lane groups are partly
// idle; rows of 12 KB and, with head dim 256, rows split into two chunks.
TEST_CASE("large launches take the streamed kernel and match the reference",
          "[gpu][rope_kv]") {
  std::mt19937_64 rng(testSeed() + 77);
  struct Large {
    RopeKvVariant variant;
    KvCacheLayout layout;
    int32_t hq, hkv, headDim, rotaryDim;
    bool norm;
  };
  const Large cases[] = {
      {RopeKvVariant::Packed, KvCacheLayout::Paged, 32, 8, 128, 128, false},
      {RopeKvVariant::Continuous, KvCacheLayout::Contiguous, 32, 8, 128, 64,
       true},
      {RopeKvVariant::Tree, KvCacheLayout::Paged, 12, 3, 80, 32, false},
      {RopeKvVariant::Packed, KvCacheLayout::Contiguous, 40, 8, 256, 256, true},
  };
  for (const Large &l : cases) {
    RopeKvCase c;
    c.variant = l.variant;
    c.layout = l.layout;
    c.numQHeads = l.hq;
    c.numKvHeads = l.hkv;
    c.headDim = l.headDim;
    c.rotaryDim = l.rotaryDim;
    c.qkNorm = l.norm;
    c.batch = 3;
    c.seq = 397;
    c.ragged = true;
    c.minCached = 1;
    c.maxCached = 300;
    c.blockSize = 16;
    c.invalidPosition = l.variant == RopeKvVariant::Tree;
    REQUIRE(c.batch * c.seq * (l.hq + 2 * l.hkv) >= kStreamedMinHeadTokens);
    runRopeKvCase(c, rng);
  }
}

// rope_kv_write on the GPU against the CPU reference: every variant x cache
// layout x dtype x pairing x QK-norm on/off, each on a different shape (odd
// token counts, batch 3 and 5, head dims 64, 80 and 128, GQA ratios 1, 4 and
// 8, partial rotary, ragged batches, odd block sizes, per-sequence tables,
// llama3 scaling).
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

void runMatrix(RopeKvVariant variant) {
  std::mt19937_64 rng(testSeed() + uint64_t(variant));
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
          runRopeKvCase(c, rng);
          ++index;
        }
}

} // namespace

TEST_CASE("packed rope_kv_write matches the CPU reference", "[gpu][rope_kv]") {
  runMatrix(RopeKvVariant::Packed);
}

TEST_CASE("continuous rope_kv_write matches the CPU reference",
          "[gpu][rope_kv]") {
  runMatrix(RopeKvVariant::Continuous);
}

TEST_CASE("tree rope_kv_write matches the CPU reference", "[gpu][rope_kv]") {
  runMatrix(RopeKvVariant::Tree);
}

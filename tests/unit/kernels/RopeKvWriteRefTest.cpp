// The CPU reference of rope_kv_write, checked by hand on tiny inputs: it is
// the oracle of the GPU tests, so it must not share their assumptions.
#include "kernels/cpu/RopeKvWriteRef.h"
#include "kernels/common/RopeCosSin.h"
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace strata::kernels;

namespace {

constexpr uint16_t kPoison = 0xffff; // a NaN in both fp16 and bf16

float bf(uint16_t bits) { return bf16BitsToFloat(bits); }

struct Fixture {
  RopeKvDims dims;
  std::vector<uint16_t> qkv;
  std::vector<float> table;
  CosSinCache cosSin;

  Fixture(int32_t headDim, int32_t rotaryDim, RopePairingKind pairing,
          int64_t seq) {
    dims.batch = 1;
    dims.seq = seq;
    dims.numQHeads = 1;
    dims.numKvHeads = 1;
    dims.headDim = headDim;
    dims.rotaryDim = rotaryDim;
    dims.pairing = pairing;
    dims.dtype = ActDType::BF16;
    qkv.resize(seq * 3 * headDim);
    for (size_t i = 0; i < qkv.size(); ++i) // small exact values, never 0
      qkv[i] = floatToBf16Bits(float(int(i % 13) - 6) / 8.0f + 0.0625f);
    RopeTableSpec spec;
    spec.rotaryDim = rotaryDim;
    spec.maxPos = 64;
    REQUIRE(buildRopeCosSin(spec, table).ok());
    cosSin.data = table.data();
    cosSin.maxPos = 64;
  }
  float in(int64_t token, int head, int i) const {
    return bf(qkv[(token * 3 + head) * dims.headDim + i]);
  }
  // Rotation of element pair (i1, i2) of a head by frequency f at pos.
  std::pair<float, float> rotate(float x1, float x2, int f, int64_t pos) {
    float c = table[pos * dims.rotaryDim + f];
    float s = table[pos * dims.rotaryDim + dims.rotaryDim / 2 + f];
    return {x1 * c - x2 * s, x2 * c + x1 * s};
  }
};

} // namespace

TEST_CASE("packed neox rotates in place and fills slots from 0",
          "[kernels][rope_kv]") {
  Fixture f(32, 16, RopePairingKind::Neox, 3);
  std::vector<uint16_t> original = f.qkv;
  const int64_t capacity = 5;
  std::vector<uint16_t> cache(2 * 1 * capacity * 32, kPoison);
  REQUIRE(ropeKvWritePackedRef(f.dims, f.qkv.data(), f.cosSin, {},
                               KvCacheView::contiguous(cache.data(), capacity))
              .ok());
  for (int64_t t = 0; t < 3; ++t) {
    for (int head = 0; head < 2; ++head) { // q, k
      for (int i = 0; i < 8; ++i) {
        // f.qkv now holds the rotated values: rotate the original.
        float x1 = bf(original[(t * 3 + head) * 32 + i]);
        float x2 = bf(original[(t * 3 + head) * 32 + i + 8]);
        auto [y1, y2] = f.rotate(x1, x2, i, t);
        CHECK(f.qkv[(t * 3 + head) * 32 + i] == floatToBf16Bits(y1));
        CHECK(f.qkv[(t * 3 + head) * 32 + i + 8] == floatToBf16Bits(y2));
      }
      for (int i = 16; i < 32; ++i) // beyond rotaryDim: unchanged
        CHECK(f.qkv[(t * 3 + head) * 32 + i] ==
              original[(t * 3 + head) * 32 + i]);
    }
    for (int i = 0; i < 32; ++i) {
      CHECK(cache[t * 32 + i] == f.qkv[(t * 3 + 1) * 32 + i]); // K
      CHECK(cache[(capacity + t) * 32 + i] == original[(t * 3 + 2) * 32 + i]);
      CHECK(f.qkv[(t * 3 + 2) * 32 + i] == original[(t * 3 + 2) * 32 + i]);
    }
  }
  for (int64_t slot = 3; slot < capacity; ++slot)
    for (int i = 0; i < 32; ++i) {
      CHECK(cache[slot * 32 + i] == kPoison);
      CHECK(cache[(capacity + slot) * 32 + i] == kPoison);
    }
}

TEST_CASE("gptj pairs adjacent elements", "[kernels][rope_kv]") {
  Fixture f(16, 16, RopePairingKind::GptJ, 2);
  std::vector<uint16_t> original = f.qkv;
  std::vector<uint16_t> cache(2 * 2 * 16, kPoison);
  REQUIRE(ropeKvWritePackedRef(f.dims, f.qkv.data(), f.cosSin, {},
                               KvCacheView::contiguous(cache.data(), 2))
              .ok());
  const int64_t t = 1;
  for (int j = 0; j < 8; ++j) {
    auto [y1, y2] = f.rotate(bf(original[t * 48 + 2 * j]),
                             bf(original[t * 48 + 2 * j + 1]), j, t);
    CHECK(f.qkv[t * 48 + 2 * j] == floatToBf16Bits(y1));
    CHECK(f.qkv[t * 48 + 2 * j + 1] == floatToBf16Bits(y2));
  }
}

TEST_CASE("continuous writes q out and K/V after the cached tokens of a "
          "paged cache",
          "[kernels][rope_kv]") {
  Fixture f(16, 16, RopePairingKind::Neox, 3);
  std::vector<uint16_t> original = f.qkv;
  const int64_t blockSize = 4, numBlocks = 4;
  std::vector<uint16_t> k(numBlocks * blockSize * 16, kPoison);
  std::vector<uint16_t> v = k;
  std::vector<uint16_t> qOut(3 * 16, kPoison);
  std::vector<int32_t> blockTable = {2, 0, -1};
  std::vector<int32_t> kvLens = {6};
  std::vector<int32_t> seqLens = {2}; // token 2 is padding
  REQUIRE(ropeKvWriteContinuousRef(
              f.dims, f.qkv.data(), qOut.data(), kvLens.data(), f.cosSin, {},
              KvCacheView::paged(k.data(), v.data(), numBlocks, blockSize,
                                 blockTable.data(), 3),
              seqLens.data())
              .ok());
  CHECK(f.qkv == original);
  for (int64_t t = 0; t < 2; ++t) {
    int64_t pos = 6 + t; // logical block 1 -> physical block 0, rows 2, 3
    for (int i = 0; i < 8; ++i) {
      auto [y1, y2] = f.rotate(f.in(t, 0, i), f.in(t, 0, i + 8), i, pos);
      CHECK(qOut[t * 16 + i] == floatToBf16Bits(y1));
      CHECK(qOut[t * 16 + i + 8] == floatToBf16Bits(y2));
      auto [k1, k2] = f.rotate(f.in(t, 1, i), f.in(t, 1, i + 8), i, pos);
      CHECK(k[(2 + t) * 16 + i] == floatToBf16Bits(k1));
      CHECK(k[(2 + t) * 16 + i + 8] == floatToBf16Bits(k2));
    }
    for (int i = 0; i < 16; ++i)
      CHECK(v[(2 + t) * 16 + i] == original[(t * 3 + 2) * 16 + i]);
  }
  for (int i = 0; i < 16; ++i)
    CHECK(qOut[2 * 16 + i] == kPoison); // padding untouched
  size_t written = 0;
  for (uint16_t x : k)
    written += x != kPoison;
  CHECK(written == 2 * 16);
}

TEST_CASE("tree rotates by position ids but writes at kvLens + t",
          "[kernels][rope_kv]") {
  Fixture f(16, 16, RopePairingKind::Neox, 2);
  std::vector<uint16_t> cache(2 * 8 * 16, kPoison);
  std::vector<uint16_t> qOut(2 * 16, kPoison);
  std::vector<int32_t> kvLens = {3};
  std::vector<int32_t> posIds = {3, 3}; // two siblings at depth 0
  REQUIRE(ropeKvWriteTreeRef(f.dims, f.qkv.data(), qOut.data(), kvLens.data(),
                             posIds.data(), f.cosSin, {},
                             KvCacheView::contiguous(cache.data(), 8))
              .ok());
  for (int64_t t = 0; t < 2; ++t)
    for (int i = 0; i < 8; ++i) {
      auto [k1, k2] = f.rotate(f.in(t, 1, i), f.in(t, 1, i + 8), i, 3);
      CHECK(cache[(3 + t) * 16 + i] == floatToBf16Bits(k1));
      CHECK(cache[(3 + t) * 16 + i + 8] == floatToBf16Bits(k2));
    }
}

TEST_CASE("QK-norm normalises over headDim before rotating",
          "[kernels][rope_kv]") {
  Fixture f(16, 16, RopePairingKind::Neox, 1);
  std::vector<uint16_t> weight(16, floatToBf16Bits(2.0f));
  std::vector<uint16_t> cache(2 * 16, kPoison);
  QkNormParams norm{weight.data(), weight.data(), 0.0f};
  std::vector<float> x(16);
  float sumSq = 0;
  for (int i = 0; i < 16; ++i) {
    x[i] = f.in(0, 0, i);
    sumSq += x[i] * x[i];
  }
  REQUIRE(ropeKvWritePackedRef(f.dims, f.qkv.data(), f.cosSin, norm,
                               KvCacheView::contiguous(cache.data(), 1))
              .ok());
  // Position 0 does not rotate, so q is exactly the normalised input.
  float scale = 1.0f / std::sqrt(sumSq / 16);
  for (int i = 0; i < 16; ++i)
    CHECK(f.qkv[i] == floatToBf16Bits(x[i] * scale * 2.0f));
}

TEST_CASE("inconsistent shapes are rejected with the mismatch named",
          "[kernels][rope_kv]") {
  Fixture f(32, 16, RopePairingKind::Neox, 2);
  std::vector<uint16_t> cache(2 * 2 * 32, kPoison);
  auto view = KvCacheView::contiguous(cache.data(), 2);
  RopeKvDims dims = f.dims;
  dims.headDim = 100;
  Status s = ropeKvWritePackedRef(dims, f.qkv.data(), f.cosSin, {}, view);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() ==
        "rope_kv_write(packed): headDim 100 must be a multiple of 8 in "
        "[8, 256]");
  dims = f.dims;
  dims.rotaryDim = 24;
  CHECK(
      ropeKvWritePackedRef(dims, f.qkv.data(), f.cosSin, {}, view).message() ==
      "rope_kv_write(packed): rotaryDim 24 must be a multiple of 16 in "
      "[16, headDim 32]");
  dims = f.dims;
  dims.seq = 3; // more tokens than the cache holds
  CHECK(
      ropeKvWritePackedRef(dims, f.qkv.data(), f.cosSin, {}, view).message() ==
      "rope_kv_write(packed): seq 3 exceeds the cache capacity 2");
  std::vector<uint16_t> qOut(2 * 32);
  CHECK(ropeKvWriteContinuousRef(f.dims, f.qkv.data(), qOut.data(), nullptr,
                                 f.cosSin, {}, view)
            .message() ==
        "rope_kv_write(continuous): kvLens [batch] must not be null");
  CosSinCache badTable = f.cosSin;
  badTable.cacheBatch = 3;
  CHECK_FALSE(
      ropeKvWritePackedRef(f.dims, f.qkv.data(), badTable, {}, view).ok());
}

TEST_CASE("f32 continuous with QK-norm keeps fp32 values in q and a paged "
          "f32 cache",
          "[kernels][rope_kv]") {
  // Full-mantissa fp32 inputs and norm weights: reading two bytes of an
  // element or rounding a result to bf16 errs by far more than 2e-6.
  Fixture f(16, 16, RopePairingKind::Neox, 2);
  f.dims.dtype = ActDType::F32;
  std::vector<float> qkv(2 * 3 * 16), qWeight(16), kWeight(16);
  for (size_t i = 0; i < qkv.size(); ++i)
    qkv[i] = std::sin(0.37f * float(i) + 0.1f) * 1.7f;
  for (int i = 0; i < 16; ++i) {
    qWeight[i] = 1.0f + 0.013f * float(i);
    kWeight[i] = 0.9f - 0.011f * float(i);
  }
  const std::vector<float> original = qkv;
  const float kPoison32 = -1234.5f;
  const int64_t blockSize = 4, numBlocks = 3;
  std::vector<float> k(numBlocks * blockSize * 16, kPoison32), v = k;
  std::vector<float> qOut(2 * 16, kPoison32);
  std::vector<int32_t> blockTable = {2, 1}, kvLens = {3};
  QkNormParams norm{qWeight.data(), kWeight.data(), 1e-6f};
  REQUIRE(ropeKvWriteContinuousRef(
              f.dims, qkv.data(), qOut.data(), kvLens.data(), f.cosSin, norm,
              KvCacheView::paged(k.data(), v.data(), numBlocks, blockSize,
                                 blockTable.data(), 2))
              .ok());
  CHECK(qkv == original);
  // Token t goes to slot 3 + t: block 2 row 3, then block 1 row 0.
  const int64_t rows[2] = {2 * blockSize + 3, 1 * blockSize + 0};
  for (int64_t t = 0; t < 2; ++t) {
    for (int head = 0; head < 2; ++head) { // q, k
      const float *w = head == 0 ? qWeight.data() : kWeight.data();
      std::vector<double> x(16);
      double sumSq = 0;
      for (int i = 0; i < 16; ++i) {
        x[i] = original[(t * 3 + head) * 16 + i];
        sumSq += x[i] * x[i];
      }
      for (int i = 0; i < 16; ++i)
        x[i] = x[i] / std::sqrt(sumSq / 16 + 1e-6) * w[i];
      const float *got = head == 0 ? &qOut[t * 16] : &k[rows[t] * 16];
      for (int i = 0; i < 8; ++i) {
        double c = f.table[(3 + t) * 16 + i], s = f.table[(3 + t) * 16 + 8 + i];
        CHECK(std::abs(got[i] - (x[i] * c - x[i + 8] * s)) < 2e-6);
        CHECK(std::abs(got[i + 8] - (x[i + 8] * c + x[i] * s)) < 2e-6);
      }
    }
    for (int i = 0; i < 16; ++i)
      CHECK(floatBits(v[rows[t] * 16 + i]) ==
            floatBits(original[(t * 3 + 2) * 16 + i]));
  }
  size_t written = 0;
  for (float x : k)
    written += x != kPoison32;
  CHECK(written == 2 * 16);
}

TEST_CASE("f32 packed rotated and rounded to bf16 is the bf16 packed write",
          "[kernels][rope_kv]") {
  // Inputs bf16 holds exactly: the same fp32 arithmetic, one rounding for
  // bf16, none for f32.
  Fixture f(32, 16, RopePairingKind::GptJ, 3);
  std::vector<float> qkv32;
  for (uint16_t x : f.qkv)
    qkv32.push_back(bf(x));
  std::vector<uint16_t> cache16(2 * 3 * 32, kPoison);
  std::vector<float> cache32(cache16.size(), -1234.5f);
  REQUIRE(ropeKvWritePackedRef(f.dims, f.qkv.data(), f.cosSin, {},
                               KvCacheView::contiguous(cache16.data(), 3))
              .ok());
  RopeKvDims dims = f.dims;
  dims.dtype = ActDType::F32;
  REQUIRE(ropeKvWritePackedRef(dims, qkv32.data(), f.cosSin, {},
                               KvCacheView::contiguous(cache32.data(), 3))
              .ok());
  for (size_t i = 0; i < qkv32.size(); ++i)
    CHECK(floatToBf16Bits(qkv32[i]) == f.qkv[i]);
  for (size_t i = 0; i < cache32.size(); ++i)
    CHECK(floatToBf16Bits(cache32[i]) == cache16[i]);
}

// Softmax attention reference: closed-form cases, layout independence, and
// the identities between phases (a chain tree is causal extend; decoding one
// query at a time equals extending them all).
#include "kernels/cpu/AttentionRef.h"
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

using namespace strata::kernels;

namespace {

constexpr int kHq = 4, kHkv = 2, kD = 8;

/// One sequence with `kvLen` cached tokens in a contiguous cache
/// [1, 2, Hkv, capacity, D] and `qLen` queries (the last qLen slots).
struct Fixture {
  int64_t kvLen, qLen;
  std::vector<uint16_t> q, cache, out;
  std::vector<int32_t> cuQ, kvLens;

  Fixture(int64_t kvLen, int64_t qLen, unsigned seed)
      : kvLen(kvLen), qLen(qLen), q(qLen * kHq * kD),
        cache(2 * kHkv * kvLen * kD),
        out(qLen * kHq * kD, 0x7fff), cuQ{0, int32_t(qLen)}, kvLens{int32_t(
                                                                 kvLen)} {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto &x : q)
      x = floatToBf16Bits(dist(rng));
    for (auto &x : cache)
      x = floatToBf16Bits(dist(rng));
  }
  AttentionDims dims(int64_t window = 0) const {
    AttentionDims d;
    d.batch = 1;
    d.numQHeads = kHq;
    d.numKvHeads = kHkv;
    d.headDim = kD;
    d.scale = 1.0f / std::sqrt(float(kD));
    d.slidingWindow = window;
    return d;
  }
  AttentionTensors tensors() {
    AttentionTensors t;
    t.q = q.data();
    t.out = out.data();
    t.cuQLens = cuQ.data();
    t.kvLens = kvLens.data();
    t.cache = KvCacheView::contiguous(cache.data(), kvLen);
    return t;
  }
  uint16_t *v(int64_t head, int64_t slot) {
    return &cache[((1 * kHkv + head) * kvLen + slot) * kD];
  }
};

} // namespace

TEST_CASE("zero queries average the visible values") {
  Fixture f(5, 2, 1);
  std::fill(f.q.begin(), f.q.end(), 0);
  REQUIRE(attentionRef(f.dims(), f.tensors()).ok());
  // Query 0 sits at slot 3 and sees slots 0..3, query 1 sees 0..4.
  for (int64_t i = 0; i < 2; ++i)
    for (int h = 0; h < kHq; ++h)
      for (int e = 0; e < kD; ++e) {
        double mean = 0;
        for (int64_t s = 0; s <= 3 + i; ++s)
          mean += bf16BitsToFloat(f.v(h / 2, s)[e]);
        mean /= 4 + i;
        float got = bf16BitsToFloat(f.out[(i * kHq + h) * kD + e]);
        CHECK(got == Approx(mean).margin(1e-2).epsilon(8e-3));
      }
}

TEST_CASE("a window of one sees only the query's own value") {
  Fixture f(6, 3, 2);
  REQUIRE(attentionRef(f.dims(/*window=*/1), f.tensors()).ok());
  for (int64_t i = 0; i < 3; ++i)
    for (int h = 0; h < kHq; ++h)
      for (int e = 0; e < kD; ++e)
        CHECK(f.out[(i * kHq + h) * kD + e] == f.v(h / 2, 3 + i)[e]);
}

TEST_CASE("grouped query heads read their group's kv head") {
  Fixture f(4, 1, 3);
  for (int64_t s = 0; s < 4; ++s)
    for (int e = 0; e < kD; ++e) {
      f.v(0, s)[e] = floatToBf16Bits(1.0f);
      f.v(1, s)[e] = floatToBf16Bits(-2.0f);
    }
  REQUIRE(attentionRef(f.dims(), f.tensors()).ok());
  for (int h = 0; h < kHq; ++h)
    CHECK(bf16BitsToFloat(f.out[h * kD]) == (h < 2 ? 1.0f : -2.0f));
}

TEST_CASE("a chain-shaped tree equals causal extend") {
  Fixture f(9, 4, 4);
  REQUIRE(attentionRef(f.dims(), f.tensors()).ok());
  std::vector<uint16_t> extend = f.out;
  std::vector<int32_t> parents{-1, 0, 1, 2};
  AttentionTensors t = f.tensors();
  std::fill(f.out.begin(), f.out.end(), 0x7fff);
  t.parentIds = parents.data();
  REQUIRE(attentionRef(f.dims(), t).ok());
  CHECK(f.out == extend);
}

TEST_CASE("siblings in a tree do not see each other") {
  Fixture f(6, 2, 5);
  std::vector<int32_t> parents{-1, -1}; // two roots on the 4-token prefix
  AttentionTensors t = f.tensors();
  t.parentIds = parents.data();
  REQUIRE(attentionRef(f.dims(), t).ok());
  std::vector<uint16_t> tree = f.out;
  // Root 1 alone (slot 5) with the prefix: move its K/V to slot 4 and run
  // it as a single decode query over 5 tokens.
  Fixture g(5, 1, 6);
  for (int kv = 0; kv < 2; ++kv)
    for (int h = 0; h < kHkv; ++h)
      for (int64_t s = 0; s < 5; ++s)
        for (int e = 0; e < kD; ++e)
          g.cache[((kv * kHkv + h) * 5 + s) * kD + e] =
              f.cache[((kv * kHkv + h) * 6 + (s < 4 ? s : 5)) * kD + e];
  std::copy(f.q.begin() + kHq * kD, f.q.end(), g.q.begin());
  REQUIRE(attentionRef(g.dims(), g.tensors()).ok());
  CHECK(std::equal(g.out.begin(), g.out.end(), tree.begin() + kHq * kD));
}

TEST_CASE("decoding queries one at a time equals extending them together") {
  Fixture f(10, 3, 7);
  REQUIRE(attentionRef(f.dims(3), f.tensors()).ok());
  for (int64_t i = 0; i < 3; ++i) {
    AttentionTensors t = f.tensors();
    std::vector<uint16_t> out(kHq * kD, 0x7fff);
    std::vector<int32_t> cuQ{0, 1}, kvLens{int32_t(10 - 3 + i + 1)};
    t.q = f.q.data() + i * kHq * kD;
    t.out = out.data();
    t.cuQLens = cuQ.data();
    t.kvLens = kvLens.data();
    REQUIRE(attentionRef(f.dims(3), t).ok());
    CHECK(std::equal(out.begin(), out.end(), f.out.begin() + i * kHq * kD));
  }
}

TEST_CASE("a paged cache gives the same result as a contiguous one") {
  Fixture f(13, 5, 8);
  REQUIRE(attentionRef(f.dims(), f.tensors()).ok());
  const int64_t blockSize = 4, numBlocks = 6;
  std::vector<int32_t> table{5, 2, 0, 3}; // 13 tokens -> 4 blocks
  std::vector<uint16_t> kPool(numBlocks * kHkv * blockSize * kD),
      vPool(kPool.size());
  for (int kv = 0; kv < 2; ++kv)
    for (int h = 0; h < kHkv; ++h)
      for (int64_t s = 0; s < 13; ++s)
        for (int e = 0; e < kD; ++e)
          (kv ? vPool : kPool)[((table[s / blockSize] * kHkv + h) * blockSize +
                                s % blockSize) *
                                   kD +
                               e] =
              f.cache[((kv * kHkv + h) * 13 + s) * kD + e];
  std::vector<uint16_t> contiguousOut = f.out;
  AttentionTensors t = f.tensors();
  t.cache = KvCacheView::paged(kPool.data(), vPool.data(), numBlocks, blockSize,
                               table.data(), 4);
  std::fill(f.out.begin(), f.out.end(), 0x7fff);
  REQUIRE(attentionRef(f.dims(), t).ok());
  CHECK(f.out == contiguousOut);
}

TEST_CASE("inconsistent attention operands are named") {
  Fixture f(4, 2, 9);
  AttentionDims d = f.dims();
  d.numQHeads = 3;
  CHECK(attentionRef(d, f.tensors()).message() ==
        "attention: numQHeads 3 is not a multiple of numKvHeads 2");
  f.kvLens[0] = 1;
  CHECK(attentionRef(f.dims(), f.tensors()).message() ==
        "attention: sequence 0 has kvLen 1 < its 2 queries");
  f.kvLens[0] = 4;
  std::vector<int32_t> parents{-1, 1};
  AttentionTensors t = f.tensors();
  t.parentIds = parents.data();
  CHECK(attentionRef(f.dims(), t).message() ==
        "attention: query 1 of sequence 0 has parent 1; parents precede "
        "children");
}

TEST_CASE("f32 attention over a paged f32 cache matches fp64") {
  // Full-mantissa fp32 inputs: reading two bytes of an element or rounding
  // the output to bf16 errs by far more than the tolerance.
  const int64_t kvLen = 13, qLen = 5, prefix = kvLen - qLen;
  const int64_t blockSize = 4, numBlocks = 6;
  std::mt19937 rng(21);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(qLen * kHq * kD),
      kPool(numBlocks * kHkv * blockSize * kD), vPool(kPool.size()),
      out(qLen * kHq * kD, -7.0f);
  for (auto *v : {&q, &kPool, &vPool})
    for (float &x : *v)
      x = dist(rng);
  std::vector<int32_t> table{5, 2, 0, 3}, cuQ{0, int32_t(qLen)},
      kvLens{int32_t(kvLen)};
  auto at = [&](const std::vector<float> &pool, int64_t head, int64_t slot,
                int e) {
    return double(pool[((table[slot / blockSize] * kHkv + head) * blockSize +
                        slot % blockSize) *
                           kD +
                       e]);
  };
  for (int64_t window : {0, 4}) {
    INFO("window " << window);
    Fixture shape(kvLen, qLen, 1);
    AttentionDims d = shape.dims(window);
    d.dtype = ActDType::F32;
    AttentionTensors t;
    t.q = q.data();
    t.out = out.data();
    t.cuQLens = cuQ.data();
    t.kvLens = kvLens.data();
    t.cache = KvCacheView::paged(kPool.data(), vPool.data(), numBlocks,
                                 blockSize, table.data(), 4);
    REQUIRE(attentionRef(d, t).ok());
    for (int64_t i = 0; i < qLen; ++i)
      for (int h = 0; h < kHq; ++h) {
        const int64_t slot = prefix + i, kvHead = h / (kHq / kHkv);
        std::vector<double> w(kvLen, 0.0);
        double maxScore = -1e300, total = 0;
        for (int64_t s = 0; s <= slot; ++s) {
          if (window > 0 && slot - s >= window)
            continue;
          double dot = 0;
          for (int e = 0; e < kD; ++e)
            dot += double(q[(i * kHq + h) * kD + e]) * at(kPool, kvHead, s, e);
          w[s] = dot * d.scale;
          maxScore = std::max(maxScore, w[s]);
        }
        for (int64_t s = 0; s <= slot; ++s) {
          if (window > 0 && slot - s >= window)
            continue;
          w[s] = std::exp(w[s] - maxScore);
          total += w[s];
        }
        for (int e = 0; e < kD; ++e) {
          double expected = 0;
          for (int64_t s = 0; s <= slot; ++s)
            if (!(window > 0 && slot - s >= window))
              expected += w[s] * at(vPool, kvHead, s, e) / total;
          CHECK(std::abs(out[(i * kHq + h) * kD + e] - expected) < 2e-6);
        }
      }
  }
}

TEST_CASE("f32 attention rounded to bf16 is the bf16 attention") {
  // Inputs bf16 holds exactly: both dtypes compute the same fp32 values and
  // the bf16 one rounds each output once.
  Fixture f(13, 5, 8);
  REQUIRE(attentionRef(f.dims(3), f.tensors()).ok());
  std::vector<float> q, cache, out(f.out.size(), -7.0f);
  for (uint16_t x : f.q)
    q.push_back(bf16BitsToFloat(x));
  for (uint16_t x : f.cache)
    cache.push_back(bf16BitsToFloat(x));
  AttentionDims d = f.dims(3);
  d.dtype = ActDType::F32;
  AttentionTensors t = f.tensors();
  t.q = q.data();
  t.out = out.data();
  t.cache = KvCacheView::contiguous(cache.data(), f.kvLen);
  REQUIRE(attentionRef(d, t).ok());
  for (size_t i = 0; i < out.size(); ++i)
    CHECK(floatToBf16Bits(out[i]) == f.out[i]);
}

// Checks of the lightning attention CPU reference: the chunked formulation
// the GPU prefill kernel uses, computed in fp64, equals the literal fp64
// recurrence; the fp32 reference stays close to fp64; splitting a sequence
// across calls and decode steps gives the same bits; padding is untouched;
// bad arguments are rejected with a message.
#include "kernels/cpu/LightningRef.h"
#include "kernels/cpu/HalfTypes.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace strata::kernels;

namespace {

struct Problem {
  int heads = 3;
  int hd = 64;
  std::vector<int32_t> lens;
  std::vector<float> decay;
  // Inputs as fp32 values (exact in bf16 unless made at full precision).
  std::vector<float> q, k, v;
  std::vector<float> state0; // [heads, hd, hd] for one sequence
  int64_t tokens() const {
    int64_t n = 0;
    for (int32_t l : lens)
      n += l;
    return n;
  }
};

float roundBf16(float x) { return bf16BitsToFloat(floatToBf16Bits(x)); }

/// Inputs are exact in bf16 unless `fullPrecision`.
Problem makeProblem(std::vector<int32_t> lens, int hd, uint32_t seed,
                    bool fullPrecision = false) {
  Problem p;
  p.hd = hd;
  p.lens = std::move(lens);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Rates 1e-3 .. 1, log-spaced over the heads.
  for (int h = 0; h < p.heads; ++h)
    p.decay.push_back(std::pow(10.0f, -3.0f + 3.0f * h / (p.heads - 1)));
  int64_t n = p.tokens() * p.heads * hd;
  for (auto *vec : {&p.q, &p.k, &p.v}) {
    vec->resize(n);
    for (float &x : *vec)
      x = fullPrecision ? normal(rng) : roundBf16(normal(rng));
  }
  p.state0.resize(static_cast<int64_t>(p.heads) * hd * hd);
  for (float &x : p.state0)
    x = 4.0f * normal(rng);
  return p;
}

/// Literal recurrence in fp64 for one sequence (tokens [begin, end)).
void recurrence64(const Problem &p, int64_t begin, int64_t end,
                  std::vector<double> &out, std::vector<double> &state) {
  const int hd = p.hd;
  for (int h = 0; h < p.heads; ++h) {
    double lambda = std::exp(-static_cast<double>(p.decay[h]));
    double *s = state.data() + static_cast<int64_t>(h) * hd * hd;
    for (int64_t t = begin; t < end; ++t) {
      int64_t row = (t * p.heads + h) * hd;
      for (int i = 0; i < hd; ++i)
        for (int j = 0; j < hd; ++j)
          s[i * hd + j] = lambda * s[i * hd + j] +
                          static_cast<double>(p.k[row + i]) * p.v[row + j];
      for (int j = 0; j < hd; ++j) {
        double acc = 0;
        for (int i = 0; i < hd; ++i)
          acc += p.q[row + i] * s[i * hd + j];
        out[row + j] = acc;
      }
    }
  }
}

/// The chunked formulation of the GPU prefill in fp64. Within a chunk of L
/// tokens starting from state S0, token r (0-based) gets
///   o_r = lambda^(r+1) q_r S0 + sum_{u<=r} lambda^(r-u) (q_r . k_u) v_u
/// and the chunk leaves S = lambda^L S0 + sum_u lambda^(L-1-u) k_u^T v_u.
void chunked64(const Problem &p, int64_t begin, int64_t end, int chunk,
               std::vector<double> &out, std::vector<double> &state) {
  const int hd = p.hd;
  for (int h = 0; h < p.heads; ++h) {
    double s = p.decay[h];
    double *st = state.data() + static_cast<int64_t>(h) * hd * hd;
    auto at = [&](const std::vector<float> &x, int64_t t, int i) {
      return static_cast<double>(x[(t * p.heads + h) * hd + i]);
    };
    for (int64_t c0 = begin; c0 < end; c0 += chunk) {
      int64_t len = std::min<int64_t>(chunk, end - c0);
      for (int64_t r = 0; r < len; ++r) {
        for (int j = 0; j < hd; ++j) {
          double inter = 0;
          for (int i = 0; i < hd; ++i)
            inter += at(p.q, c0 + r, i) * st[i * hd + j];
          double acc = std::exp(-s * (r + 1)) * inter;
          for (int64_t u = 0; u <= r; ++u) {
            double qk = 0;
            for (int i = 0; i < hd; ++i)
              qk += at(p.q, c0 + r, i) * at(p.k, c0 + u, i);
            acc += std::exp(-s * (r - u)) * qk * at(p.v, c0 + u, j);
          }
          out[((c0 + r) * p.heads + h) * hd + j] = acc;
        }
      }
      std::vector<double> next(static_cast<size_t>(hd) * hd);
      for (int i = 0; i < hd; ++i)
        for (int j = 0; j < hd; ++j) {
          double acc = std::exp(-s * len) * st[i * hd + j];
          for (int64_t u = 0; u < len; ++u)
            acc += std::exp(-s * (len - 1 - u)) * at(p.k, c0 + u, i) *
                   at(p.v, c0 + u, j);
          next[i * hd + j] = acc;
        }
      std::copy(next.begin(), next.end(), st);
    }
  }
}

double relErr(const std::vector<double> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

/// Bf16 device-layout copies of a problem plus a state tensor of `slots`
/// slots, for calling the fp32 reference.
struct RefBuffers {
  std::vector<BFloat16> q, k, v, out;
  std::vector<float> state;
  std::vector<int32_t> cuSeqLens, slots;
  LightningDims dims;
  LightningTensors tensors(const Problem &p) {
    LightningTensors t;
    t.q = q.data();
    t.k = k.data();
    t.v = v.data();
    t.out = out.data();
    t.state = state.data();
    t.slots = slots.data();
    t.decay = p.decay.data();
    t.cuSeqLens = cuSeqLens.data();
    return t;
  }
};

RefBuffers makeRef(const Problem &p, int numSlots) {
  RefBuffers r;
  for (float x : p.q)
    r.q.push_back(BFloat16::fromFloat(x));
  for (float x : p.k)
    r.k.push_back(BFloat16::fromFloat(x));
  for (float x : p.v)
    r.v.push_back(BFloat16::fromFloat(x));
  r.out.assign(p.q.size(), BFloat16{0x7fc1});
  int64_t per = static_cast<int64_t>(p.heads) * p.hd * p.hd;
  r.state.resize(per * numSlots);
  for (int s = 0; s < numSlots; ++s)
    std::copy(p.state0.begin(), p.state0.end(), r.state.begin() + s * per);
  r.cuSeqLens.push_back(0);
  for (int32_t l : p.lens)
    r.cuSeqLens.push_back(r.cuSeqLens.back() + l);
  for (size_t b = 0; b < p.lens.size(); ++b)
    r.slots.push_back(static_cast<int32_t>(b));
  r.dims.batch = static_cast<int64_t>(p.lens.size());
  r.dims.numHeads = p.heads;
  r.dims.headDim = p.hd;
  r.dims.numSlots = numSlots;
  r.dims.dtype = ActDType::BF16;
  return r;
}

} // namespace

TEST_CASE("chunked formulation equals the recurrence in fp64", "[lightning]") {
  for (int64_t len : {1, 63, 64, 65, 130}) {
    Problem p = makeProblem({static_cast<int32_t>(len)}, 64, 7 + len);
    std::vector<double> outA(p.q.size()), outB(p.q.size());
    std::vector<double> stA(p.state0.begin(), p.state0.end()), stB = stA;
    recurrence64(p, 0, len, outA, stA);
    chunked64(p, 0, len, 64, outB, stB);
    INFO("length " << len);
    CHECK(relErr(outB, outA) < 1e-12);
    CHECK(relErr(stB, stA) < 1e-12);
  }
}

TEST_CASE("fp32 reference is close to fp64", "[lightning]") {
  Problem p = makeProblem({300}, 64, 11);
  RefBuffers r = makeRef(p, 1);
  REQUIRE(lightningPrefillRef(r.dims, r.tensors(p)).ok());
  std::vector<double> out64(p.q.size()), st64(p.state0.begin(), p.state0.end());
  recurrence64(p, 0, 300, out64, st64);
  std::vector<double> out32(p.q.size()), st32(r.state.begin(), r.state.end());
  for (size_t i = 0; i < out32.size(); ++i)
    out32[i] = r.out[i].toFloat();
  CHECK(relErr(st32, st64) < 1e-5);
  // The output is rounded to bf16 (relative step 2^-8).
  CHECK(relErr(out32, out64) < 4e-3);
}

TEST_CASE("f32 storage keeps the fp32 inputs and outputs", "[lightning]") {
  // Full-precision q, k, v read as 4-byte floats and the output stored
  // unrounded: 1e-5 of fp64, where the bf16 path above needs 4e-3.
  Problem p = makeProblem({70, 5}, 64, 13, /*fullPrecision=*/true);
  LightningDims dims;
  dims.batch = 2;
  dims.numHeads = p.heads;
  dims.headDim = p.hd;
  dims.numSlots = 2;
  dims.dtype = ActDType::F32;
  std::vector<float> q = p.q, k = p.k, v = p.v, out(p.q.size(), -1234.5f);
  const int64_t per = int64_t(p.heads) * p.hd * p.hd;
  std::vector<float> state(2 * per);
  for (int s = 0; s < 2; ++s)
    std::copy(p.state0.begin(), p.state0.end(), state.begin() + s * per);
  std::vector<int32_t> cuSeqLens{0, 70, 75}, slots{1, 0};
  LightningTensors t;
  t.q = q.data();
  t.k = k.data();
  t.v = v.data();
  t.out = out.data();
  t.state = state.data();
  t.slots = slots.data();
  t.decay = p.decay.data();
  t.cuSeqLens = cuSeqLens.data();
  REQUIRE(lightningPrefillRef(dims, t).ok());
  std::vector<double> out64(p.q.size());
  for (int b = 0; b < 2; ++b) {
    INFO("sequence " << b);
    std::vector<double> st64(p.state0.begin(), p.state0.end());
    recurrence64(p, cuSeqLens[b], cuSeqLens[b + 1], out64, st64);
    std::vector<double> st32(state.begin() + slots[b] * per,
                             state.begin() + (slots[b] + 1) * per);
    CHECK(relErr(st32, st64) < 1e-5);
    const int64_t row = int64_t(p.heads) * p.hd;
    std::vector<double> o32(out.begin() + cuSeqLens[b] * row,
                            out.begin() + cuSeqLens[b + 1] * row),
        o64(out64.begin() + cuSeqLens[b] * row,
            out64.begin() + cuSeqLens[b + 1] * row);
    CHECK(relErr(o32, o64) < 1e-5);
  }

  // One decode step more for sequence 0 (slot 1) equals the recurrence.
  Problem next = makeProblem({1}, 64, 14, /*fullPrecision=*/true);
  std::vector<float> outStep(next.q.size());
  LightningDims one = dims;
  one.batch = 1;
  LightningTensors step = t;
  step.q = next.q.data();
  step.k = next.k.data();
  step.v = next.v.data();
  step.out = outStep.data();
  step.cuSeqLens = nullptr;
  std::vector<double> st64(state.begin() + per, state.end());
  REQUIRE(lightningDecodeRef(one, step).ok());
  next.decay = p.decay;
  std::vector<double> step64(next.q.size());
  recurrence64(next, 0, 1, step64, st64);
  std::vector<double> step32(outStep.begin(), outStep.end());
  CHECK(relErr(step32, step64) < 1e-5);
}

TEST_CASE("f32 output rounded to bf16 is the bf16 output", "[lightning]") {
  // Inputs bf16 holds exactly: the same fp32 recurrence in both dtypes.
  Problem p = makeProblem({33}, 64, 15);
  RefBuffers r16 = makeRef(p, 1);
  REQUIRE(lightningPrefillRef(r16.dims, r16.tensors(p)).ok());
  RefBuffers r32 = makeRef(p, 1);
  r32.dims.dtype = ActDType::F32;
  std::vector<float> out(p.q.size());
  LightningTensors t = r32.tensors(p);
  t.q = p.q.data();
  t.k = p.k.data();
  t.v = p.v.data();
  t.out = out.data();
  REQUIRE(lightningPrefillRef(r32.dims, t).ok());
  CHECK(r32.state == r16.state);
  for (size_t i = 0; i < out.size(); ++i)
    CHECK(floatToBf16Bits(out[i]) == r16.out[i].bits);
}

TEST_CASE("split prefill and decode steps give the same bits", "[lightning]") {
  Problem p = makeProblem({40}, 64, 3);
  RefBuffers whole = makeRef(p, 1);
  REQUIRE(lightningPrefillRef(whole.dims, whole.tensors(p)).ok());

  // 25 tokens by prefill, then 15 decode steps.
  RefBuffers split = makeRef(p, 1);
  split.dims.batch = 1;
  split.cuSeqLens = {0, 25};
  REQUIRE(lightningPrefillRef(split.dims, split.tensors(p)).ok());
  int64_t row = static_cast<int64_t>(p.heads) * p.hd;
  for (int t = 25; t < 40; ++t) {
    LightningTensors step = split.tensors(p);
    step.q = split.q.data() + t * row;
    step.k = split.k.data() + t * row;
    step.v = split.v.data() + t * row;
    step.out = split.out.data() + t * row;
    step.cuSeqLens = nullptr;
    REQUIRE(lightningDecodeRef(split.dims, step).ok());
  }
  CHECK(std::memcmp(whole.out.data(), split.out.data(), whole.out.size() * 2) ==
        0);
  CHECK(whole.state == split.state);
}

TEST_CASE("padding entries leave output and state untouched", "[lightning]") {
  Problem p = makeProblem({5, 7, 3}, 64, 5);
  RefBuffers r = makeRef(p, 4);
  r.slots = {2, -1, 0};
  std::vector<float> before = r.state;
  REQUIRE(lightningPrefillRef(r.dims, r.tensors(p)).ok());
  int64_t row = static_cast<int64_t>(p.heads) * p.hd;
  int64_t per = row * p.hd;
  for (int64_t i = 5 * row; i < 12 * row; ++i)
    REQUIRE(r.out[i].bits == 0x7fc1);
  for (int64_t i = 0; i < 5 * row; ++i)
    REQUIRE(r.out[i].bits != 0x7fc1);
  // Slots 1 and 3 are not named; slots 0 and 2 changed.
  CHECK(std::equal(before.begin() + per, before.begin() + 2 * per,
                   r.state.begin() + per));
  CHECK(std::equal(before.begin() + 3 * per, before.end(),
                   r.state.begin() + 3 * per));
  CHECK(!std::equal(before.begin(), before.begin() + per, r.state.begin()));
}

TEST_CASE("bad arguments are rejected with a message", "[lightning]") {
  Problem p = makeProblem({4, 4}, 64, 9);
  {
    RefBuffers r = makeRef(p, 2);
    r.dims.headDim = 96;
    Status s = lightningPrefillRef(r.dims, r.tensors(p));
    REQUIRE(!s.ok());
    CHECK(s.message().find("headDim 96") != std::string::npos);
  }
  {
    RefBuffers r = makeRef(p, 2);
    r.slots = {1, 1};
    Status s = lightningPrefillRef(r.dims, r.tensors(p));
    REQUIRE(!s.ok());
    CHECK(s.message().find("used twice") != std::string::npos);
  }
  {
    RefBuffers r = makeRef(p, 2);
    r.slots = {0, 2};
    Status s = lightningPrefillRef(r.dims, r.tensors(p));
    REQUIRE(!s.ok());
    CHECK(s.message().find("outside [0, 2)") != std::string::npos);
  }
  {
    RefBuffers r = makeRef(p, 2);
    Problem bad = p;
    bad.decay[1] = 0.0f;
    Status s = lightningPrefillRef(r.dims, r.tensors(bad));
    REQUIRE(!s.ok());
    CHECK(s.message().find("head 1") != std::string::npos);
  }
  {
    RefBuffers r = makeRef(p, 2);
    r.dims.qTokenStride = 100;
    Status s = lightningPrefillRef(r.dims, r.tensors(p));
    REQUIRE(!s.ok());
    CHECK(s.message().find("q token stride 100") != std::string::npos);
  }
}

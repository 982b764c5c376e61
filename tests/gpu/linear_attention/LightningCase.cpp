#include "tests/gpu/linear_attention/LightningCase.h"

#include "kernels/cpu/LightningRef.h"
#include "kernels/linear_attention/LightningAttention.h"
#include "tests/gpu/linear_attention/LightningTestUtil.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

namespace strata::kernels::lightning_test {

Tolerance prefillTolerance(ActDType dtype) {
  return dtype == ActDType::BF16 ? Tolerance{8e-3, 5e-3}
                                 : Tolerance{1.5e-3, 1e-3};
}

Tolerance decodeTolerance(ActDType dtype, int steps) {
  // fp32 rounding of the state grows about with the number of steps.
  double state = 1e-6 * std::max(10.0, 0.1 * steps);
  return dtype == ActDType::BF16 ? Tolerance{4e-3, state}
                                 : Tolerance{1e-3, state};
}

namespace {

const char *dtypeName(ActDType dtype) {
  return dtype == ActDType::BF16 ? "bf16" : "fp16";
}

/// The CPU reference of a prefill batch, one thread per sequence (they touch
/// disjoint output rows and slots).
void prefillRefParallel(const LightningDims &dims, const LightningTensors &t,
                        const std::vector<int32_t> &cu,
                        const std::vector<int32_t> &slots) {
  LightningDims d = lightningResolvedDims(dims);
  std::vector<Status> status(d.batch);
  std::vector<std::thread> threads;
  for (int64_t b = 0; b < d.batch; ++b)
    threads.emplace_back([&, b] {
      int32_t lens[2] = {0, cu[b + 1] - cu[b]};
      LightningDims one = d;
      one.batch = 1;
      LightningTensors s = t;
      s.q = static_cast<const uint16_t *>(t.q) + cu[b] * d.qTokenStride;
      s.k = static_cast<const uint16_t *>(t.k) + cu[b] * d.kTokenStride;
      s.v = static_cast<const uint16_t *>(t.v) + cu[b] * d.vTokenStride;
      s.out = static_cast<uint16_t *>(t.out) + cu[b] * d.outTokenStride;
      s.slots = &slots[b];
      s.cuSeqLens = lens;
      status[b] = lightningPrefillRef(one, s);
    });
  for (std::thread &th : threads)
    th.join();
  for (const Status &s : status) {
    INFO(s.message());
    REQUIRE(s.ok());
  }
}

/// Relative error of one head over the given token rows; `finite` is
/// cleared when a GPU value is not finite (for instance left poisoned).
void addHeadError(ErrorStats &stats, const std::vector<uint16_t> &gpu,
                  const std::vector<uint16_t> &ref,
                  const std::vector<int64_t> &rows, int64_t stride, int h,
                  int hd, ActDType dtype) {
  double num = 0, den = 0;
  bool finite = true;
  for (int64_t row : rows)
    for (int j = 0; j < hd; ++j) {
      int64_t i = row * stride + static_cast<int64_t>(h) * hd + j;
      double g = halfBitsToFloat(dtype, gpu[i]), r = halfBitsToFloat(dtype, ref[i]);
      finite = finite && std::isfinite(g);
      num += (g - r) * (g - r);
      den += r * r;
    }
  stats.add(num, den, finite);
}

void addStateError(ErrorStats &stats, const std::vector<float> &gpu,
                   int32_t gpuSlot, const std::vector<float> &ref,
                   int32_t refSlot, int heads, int hd) {
  int64_t per = static_cast<int64_t>(hd) * hd;
  for (int h = 0; h < heads; ++h) {
    double num = 0, den = 0;
    bool finite = true;
    const float *g = gpu.data() + (int64_t(gpuSlot) * heads + h) * per;
    const float *r = ref.data() + (int64_t(refSlot) * heads + h) * per;
    for (int64_t i = 0; i < per; ++i) {
      finite = finite && std::isfinite(g[i]);
      num += double(g[i] - r[i]) * (g[i] - r[i]);
      den += double(r[i]) * r[i];
    }
    stats.add(num, den, finite);
  }
}

/// Counts elements of rows [first, first + count) that are not the poison.
int64_t unpoisoned(const std::vector<uint16_t> &out, int64_t first,
                   int64_t count, int64_t stride) {
  int64_t n = 0;
  for (int64_t i = first * stride; i < (first + count) * stride; ++i)
    n += out[i] != kPoison;
  return n;
}

bool slotUnchanged(const std::vector<float> &now,
                   const std::vector<float> &before, int32_t slot,
                   int64_t per) {
  return std::memcmp(now.data() + slot * per, before.data() + slot * per,
                     per * sizeof(float)) == 0;
}

std::vector<int64_t> rowRange(int64_t first, int64_t count) {
  std::vector<int64_t> rows(count);
  for (int64_t i = 0; i < count; ++i)
    rows[i] = first + i;
  return rows;
}

} // namespace

void runPrefillCase(const PrefillCase &c, std::mt19937_64 &rng) {
  const int64_t batch = static_cast<int64_t>(c.lens.size());
  const int hd = c.headDim;
  const int64_t row = static_cast<int64_t>(c.heads) * hd;
  // Slots batch .. 1 in reverse order; slots 0 and batch+1 are named by no
  // sequence and must come back bit for bit.
  const int64_t numSlots = batch + 2;
  std::vector<int32_t> cu{0}, slots;
  std::string lensText;
  for (int64_t b = 0; b < batch; ++b) {
    int32_t n = std::abs(c.lens[b]);
    cu.push_back(cu.back() + n);
    slots.push_back(c.lens[b] < 0 ? -1 : static_cast<int32_t>(batch - b));
    lensText += (b ? "," : "") + std::to_string(c.lens[b]);
  }
  const int64_t total = cu.back();
  INFO("prefill " << dtypeName(c.dtype) << " headDim " << hd << " heads "
                  << c.heads << " tile " << c.dvTile << " lens " << lensText);

  auto q = randomHalves(total * row, c.dtype, rng);
  auto k = randomHalves(total * row, c.dtype, rng);
  auto v = randomHalves(total * row, c.dtype, rng);
  std::vector<uint16_t> out(total * row, kPoison);
  std::vector<float> decay = logSpacedDecayRates(c.heads);
  std::vector<float> state = makeState(numSlots, c.heads, hd, slots, rng);

  DeviceBuffer<uint16_t> dq(q), dk(k), dv(v), dout(out);
  DeviceBuffer<float> dstate(state), ddecay(decay);
  DeviceBuffer<int32_t> dslots(slots), dcu(cu);
  LightningDims dims;
  dims.batch = batch;
  dims.numHeads = c.heads;
  dims.headDim = hd;
  dims.numSlots = numSlots;
  dims.dtype = c.dtype;
  LightningTensors t{dq.get(),     dk.get(),     dv.get(),     dout.get(),
                     dstate.get(), dslots.get(), ddecay.get(), dcu.get()};
  Status s = lightningPrefillTiled(dims, t, c.dvTile, nullptr);
  INFO(s.message());
  REQUIRE(s.ok());
  CUDA_REQUIRE(cudaDeviceSynchronize());
  std::vector<uint16_t> gOut = dout.download();
  std::vector<float> gState = dstate.download();

  std::vector<uint16_t> rOut = out;
  std::vector<float> rState = state;
  LightningTensors rt{q.data(),      k.data(),     v.data(),     rOut.data(),
                      rState.data(), slots.data(), decay.data(), cu.data()};
  prefillRefParallel(dims, rt, cu, slots);

  ErrorStats outErr, stateErr;
  const int64_t per = static_cast<int64_t>(c.heads) * hd * hd;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t n = cu[b + 1] - cu[b];
    if (slots[b] < 0) {
      CHECK(unpoisoned(gOut, cu[b], n, row) == 0);
      continue;
    }
    if (n == 0) {
      CHECK(slotUnchanged(gState, state, slots[b], per));
      continue;
    }
    std::vector<int64_t> rows = rowRange(cu[b], n);
    for (int h = 0; h < c.heads; ++h)
      addHeadError(outErr, gOut, rOut, rows, row, h, hd, c.dtype);
    addStateError(stateErr, gState, slots[b], rState, slots[b], c.heads, hd);
  }
  CHECK(slotUnchanged(gState, state, 0, per));
  CHECK(slotUnchanged(gState, state, static_cast<int32_t>(batch + 1), per));
  std::printf("[lightning] prefill %s hd=%d tile=%d lens=%s: max rel err "
              "out %.2e state %.2e\n",
              dtypeName(c.dtype), hd, c.dvTile, lensText.c_str(), outErr.maxRel,
              stateErr.maxRel);
  Tolerance tol = prefillTolerance(c.dtype);
  CHECK(outErr.allFinite);
  CHECK(stateErr.allFinite);
  CHECK(outErr.maxRel < tol.out);
  CHECK(stateErr.maxRel < tol.state);
}

void runDecodeCase(const DecodeCase &c, std::mt19937_64 &rng) {
  const int64_t batch = c.batch;
  const int hd = c.headDim;
  const int64_t row = static_cast<int64_t>(c.heads) * hd;
  const int64_t numSlots = batch + 3;
  std::vector<int32_t> slots;
  for (int64_t b = 0; b < batch; ++b)
    slots.push_back(c.padEvery && b % c.padEvery == c.padEvery - 1
                        ? -1
                        : static_cast<int32_t>(batch + 2 - b));
  INFO("decode " << dtypeName(c.dtype) << " headDim " << hd << " batch "
                 << batch << " cols " << c.cols << " prefetch " << c.prefetch);
  // q, k and v of a token are consecutive rows of one fused projection
  // [batch, 3, heads, headDim]: the token strides are 3 rows.
  auto qkv = randomHalves(batch * 3 * row, c.dtype, rng);
  std::vector<uint16_t> out(batch * row, kPoison);
  std::vector<float> decay = logSpacedDecayRates(c.heads);
  std::vector<float> state = makeState(numSlots, c.heads, hd, slots, rng);

  DeviceBuffer<uint16_t> dqkv(qkv), dout(out);
  DeviceBuffer<float> dstate(state), ddecay(decay);
  DeviceBuffer<int32_t> dslots(slots);
  LightningDims dims;
  dims.batch = batch;
  dims.numHeads = c.heads;
  dims.headDim = hd;
  dims.numSlots = numSlots;
  dims.dtype = c.dtype;
  dims.qTokenStride = dims.kTokenStride = dims.vTokenStride = 3 * row;
  LightningTensors t{dqkv.get(),   dqkv.get() + row, dqkv.get() + 2 * row,
                     dout.get(),   dstate.get(),     dslots.get(),
                     ddecay.get(), nullptr};
  Status s = lightningDecodeTiled(dims, t, c.cols, c.prefetch, nullptr);
  INFO(s.message());
  REQUIRE(s.ok());
  std::vector<uint16_t> gOut = dout.download();
  std::vector<float> gState = dstate.download();

  std::vector<uint16_t> rOut = out;
  std::vector<float> rState = state;
  LightningTensors rt{qkv.data(),   qkv.data() + row, qkv.data() + 2 * row,
                      rOut.data(),  rState.data(),    slots.data(),
                      decay.data(), nullptr};
  Status rs = lightningDecodeRef(dims, rt);
  INFO(rs.message());
  REQUIRE(rs.ok());

  ErrorStats outErr, stateErr;
  const int64_t per = static_cast<int64_t>(c.heads) * hd * hd;
  for (int64_t b = 0; b < batch; ++b) {
    if (slots[b] < 0) {
      CHECK(unpoisoned(gOut, b, 1, row) == 0);
      continue;
    }
    for (int h = 0; h < c.heads; ++h)
      addHeadError(outErr, gOut, rOut, {b}, row, h, hd, c.dtype);
    addStateError(stateErr, gState, slots[b], rState, slots[b], c.heads, hd);
  }
  for (int32_t slot : {0, 1})
    CHECK(slotUnchanged(gState, state, slot, per));
  std::printf("[lightning] decode %s hd=%d batch=%lld cols=%d prefetch=%d: "
              "max rel err out %.2e state %.2e\n",
              dtypeName(c.dtype), hd, static_cast<long long>(batch), c.cols,
              int(c.prefetch), outErr.maxRel, stateErr.maxRel);
  Tolerance tol = decodeTolerance(c.dtype);
  CHECK(outErr.allFinite);
  CHECK(stateErr.allFinite);
  CHECK(outErr.maxRel < tol.out);
  CHECK(stateErr.maxRel < tol.state);
}

} // namespace strata::kernels::lightning_test

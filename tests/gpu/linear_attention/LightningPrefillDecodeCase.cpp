// Prefill followed by decode steps must continue the recurrence exactly
// where decoding every token from the start would be.
#include "kernels/cpu/LightningRef.h"
#include "kernels/linear_attention/LightningAttention.h"
#include "tests/gpu/linear_attention/LightningCase.h"
#include "tests/gpu/linear_attention/LightningTestUtil.h"

#include <algorithm>
#include <cstdio>

namespace strata::kernels::lightning_test {

namespace {

double headError(const std::vector<uint16_t> &gpu,
                 const std::vector<uint16_t> &ref, int64_t rowBegin,
                 int64_t rowEnd, int64_t rowStep, int64_t rowOffset,
                 int64_t row, int h, int hd, ActDType dtype, bool &finite) {
  double num = 0, den = 0;
  for (int64_t r = rowBegin; r < rowEnd; ++r)
    for (int j = 0; j < hd; ++j) {
      int64_t i = (r * rowStep + rowOffset) * row + int64_t(h) * hd + j;
      double g = halfBitsToFloat(dtype, gpu[i]), x = halfBitsToFloat(dtype, ref[i]);
      finite = finite && std::isfinite(g);
      num += (g - x) * (g - x);
      den += x * x;
    }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double stateError(const std::vector<float> &a, int32_t slotA,
                  const std::vector<float> &b, int32_t slotB, int heads,
                  int hd) {
  double worst = 0;
  int64_t per = int64_t(hd) * hd;
  for (int h = 0; h < heads; ++h) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < per; ++i) {
      double x = a[(int64_t(slotA) * heads + h) * per + i];
      double y = b[(int64_t(slotB) * heads + h) * per + i];
      num += (x - y) * (x - y);
      den += y * y;
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
}

} // namespace

void runPrefillThenDecode(ActDType dtype, int hd,
                          const std::vector<int32_t> &prefillLens,
                          const std::vector<int32_t> &totalLens,
                          std::mt19937_64 &rng) {
  const int heads = 4;
  const int64_t batch = static_cast<int64_t>(prefillLens.size());
  const int64_t row = int64_t(heads) * hd;
  const int32_t steps = *std::max_element(totalLens.begin(), totalLens.end());
  // Token t of sequence b is row t * batch + b of every tensor, the layout
  // batched decode steps read; prefill reads a sequence with token stride
  // batch * row.
  const int64_t rows = int64_t(steps) * batch;
  auto q = randomHalves(rows * row, dtype, rng);
  auto k = randomHalves(rows * row, dtype, rng);
  auto v = randomHalves(rows * row, dtype, rng);
  std::vector<uint16_t> poisoned(rows * row, kPoison);
  std::vector<float> decay = logSpacedDecayRates(heads);
  // Path A (prefill, then decode) uses slot b, path B (decode only) slot
  // batch + b; both start from the same saved state. Slot 2 * batch is
  // never named.
  const int64_t numSlots = 2 * batch + 1;
  const int64_t per = int64_t(heads) * hd * hd;
  std::vector<int32_t> used;
  for (int32_t b = 0; b < batch; ++b)
    used.push_back(b);
  std::vector<float> state = makeState(numSlots, heads, hd, used, rng);
  for (int64_t b = 0; b < batch; ++b)
    std::copy(state.begin() + b * per, state.begin() + (b + 1) * per,
              state.begin() + (batch + b) * per);

  std::vector<int32_t> slotsA(int64_t(steps) * batch),
      slotsB(int64_t(steps) * batch);
  for (int32_t t = 0; t < steps; ++t)
    for (int32_t b = 0; b < batch; ++b) {
      bool live = t < totalLens[b];
      slotsA[t * batch + b] = live && t >= prefillLens[b] ? b : -1;
      slotsB[t * batch + b] = live ? int32_t(batch + b) : -1;
    }
  std::vector<int32_t> prefillArgs; // per sequence: slot, cuSeqLens[2]
  for (int32_t b = 0; b < batch; ++b)
    prefillArgs.insert(prefillArgs.end(), {b, 0, prefillLens[b]});

  DeviceBuffer<uint16_t> dq(q), dk(k), dv(v), doutA(poisoned), doutB(poisoned);
  DeviceBuffer<float> dstate(state), ddecay(decay);
  DeviceBuffer<int32_t> dslotsA(slotsA), dslotsB(slotsB), dargs(prefillArgs);

  LightningDims dims;
  dims.numHeads = heads;
  dims.headDim = hd;
  dims.numSlots = numSlots;
  dims.dtype = dtype;
  auto at = [&](const DeviceBuffer<uint16_t> &buf, int64_t r) {
    return buf.get() + r * row;
  };
  // Path A: each sequence's prefix by prefill.
  for (int32_t b = 0; b < batch; ++b) {
    LightningDims one = dims;
    one.batch = 1;
    one.qTokenStride = one.kTokenStride = one.vTokenStride =
        one.outTokenStride = batch * row;
    LightningTensors t{at(dq, b),    at(dk, b),
                       at(dv, b),    at(doutA, b),
                       dstate.get(), dargs.get() + 3 * b,
                       ddecay.get(), dargs.get() + 3 * b + 1};
    Status s = lightningPrefill(one, t, nullptr);
    INFO(s.message());
    REQUIRE(s.ok());
  }
  // Then batched decode steps for both paths; finished or prefilled
  // sequences are padding entries of the step.
  dims.batch = batch;
  for (int32_t t = 0; t < steps; ++t)
    for (bool pathA : {true, false}) {
      LightningTensors d{at(dq, int64_t(t) * batch),
                         at(dk, int64_t(t) * batch),
                         at(dv, int64_t(t) * batch),
                         at(pathA ? doutA : doutB, int64_t(t) * batch),
                         dstate.get(),
                         (pathA ? dslotsA : dslotsB).get() + t * batch,
                         ddecay.get(),
                         nullptr};
      Status s = lightningDecode(dims, d, nullptr);
      INFO(s.message());
      REQUIRE(s.ok());
    }
  std::vector<uint16_t> outA = doutA.download(), outB = doutB.download();
  std::vector<float> gState = dstate.download();

  // CPU reference: path B's decode steps.
  std::vector<uint16_t> ref = poisoned;
  std::vector<float> refState = state;
  for (int32_t t = 0; t < steps; ++t) {
    int64_t r0 = int64_t(t) * batch * row;
    LightningTensors d{q.data() + r0,   k.data() + r0,
                       v.data() + r0,   ref.data() + r0,
                       refState.data(), slotsB.data() + t * batch,
                       decay.data(),    nullptr};
    REQUIRE(lightningDecodeRef(dims, d).ok());
  }

  Tolerance pre = prefillTolerance(dtype), dec = decodeTolerance(dtype, steps);
  double errAB = 0, errBRef = 0, errARef = 0;
  bool finite = true;
  int64_t leaked = 0;
  for (int32_t b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      errAB = std::max(errAB, headError(outA, outB, 0, totalLens[b], batch, b,
                                        row, h, hd, dtype, finite));
      errBRef = std::max(errBRef, headError(outB, ref, 0, totalLens[b], batch,
                                            b, row, h, hd, dtype, finite));
      errARef = std::max(errARef, headError(outA, ref, 0, totalLens[b], batch,
                                            b, row, h, hd, dtype, finite));
    }
    for (int32_t t = totalLens[b]; t < steps; ++t)
      for (int64_t j = 0; j < row; ++j) {
        int64_t i = (int64_t(t) * batch + b) * row + j;
        leaked += (outA[i] != kPoison) + (outB[i] != kPoison);
      }
  }
  double stAB = 0, stBRef = 0;
  for (int32_t b = 0; b < batch; ++b) {
    stAB = std::max(
        stAB, stateError(gState, b, gState, int32_t(batch + b), heads, hd));
    stBRef = std::max(stBRef, stateError(gState, int32_t(batch + b), refState,
                                         int32_t(batch + b), heads, hd));
  }
  std::printf("[lightning] prefill+decode %s hd=%d: out A-vs-B %.2e, B-vs-ref "
              "%.2e, A-vs-ref %.2e; state A-vs-B %.2e, B-vs-ref %.2e\n",
              dtype == ActDType::BF16 ? "bf16" : "fp16", hd, errAB, errBRef,
              errARef, stAB, stBRef);
  CHECK(finite);
  CHECK(leaked == 0);
  CHECK(errAB < pre.out);
  CHECK(errARef < pre.out);
  CHECK(errBRef < dec.out);
  CHECK(stAB < pre.state);
  CHECK(stBRef < dec.state);
  CHECK(std::memcmp(gState.data() + 2 * batch * per,
                    state.data() + 2 * batch * per, per * sizeof(float)) == 0);
}

} // namespace strata::kernels::lightning_test

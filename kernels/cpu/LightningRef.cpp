#include "kernels/cpu/LightningRef.h"

#include "kernels/cpu/CpuAccess.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace strata::kernels {

namespace {

Status checkHostArgs(const char *op, const LightningDims &dims,
                     const LightningTensors &t) {
  auto fail = [&](const std::string &what) {
    return Status::error(std::string(op) + ": " + what);
  };
  std::set<int32_t> seen;
  for (int64_t b = 0; b < dims.batch; ++b) {
    int32_t slot = t.slots[b];
    if (slot == -1)
      continue;
    if (slot < 0 || slot >= dims.numSlots)
      return fail("slot " + std::to_string(slot) + " of sequence " +
                  std::to_string(b) + " is outside [0, " +
                  std::to_string(dims.numSlots) + ")");
    if (!seen.insert(slot).second)
      return fail("slot " + std::to_string(slot) + " is used twice");
  }
  for (int32_t h = 0; h < dims.numHeads; ++h)
    if (!(t.decay[h] > 0.0f) || !std::isfinite(t.decay[h]))
      return fail("decay rate of head " + std::to_string(h) +
                  " is not positive and finite");
  if (t.cuSeqLens) {
    if (t.cuSeqLens[0] != 0)
      return fail("cuSeqLens[0] is not 0");
    for (int64_t b = 0; b < dims.batch; ++b)
      if (t.cuSeqLens[b + 1] < t.cuSeqLens[b])
        return fail("cuSeqLens decreases at sequence " + std::to_string(b));
  }
  return Status::success();
}

/// Runs tokens [begin, end) of one sequence through the recurrence for every
/// head, starting from and updating the state of `slot`.
void runSequence(const LightningDims &d, const LightningTensors &t,
                 int32_t slot, int64_t begin, int64_t end) {
  const int64_t hd = d.headDim;
  std::vector<float> q(hd), k(hd), v(hd), acc(hd);
  for (int32_t h = 0; h < d.numHeads; ++h) {
    const float lambda = std::exp(-t.decay[h]);
    float *s =
        t.state + (static_cast<int64_t>(slot) * d.numHeads + h) * hd * hd;
    for (int64_t tok = begin; tok < end; ++tok) {
      for (int64_t i = 0; i < hd; ++i) {
        q[i] = loadAct(d.dtype, t.q, tok * d.qTokenStride + h * hd + i);
        k[i] = loadAct(d.dtype, t.k, tok * d.kTokenStride + h * hd + i);
        v[i] = loadAct(d.dtype, t.v, tok * d.vTokenStride + h * hd + i);
      }
      // One pass over the state: row i is updated, then added into every
      // output column (so each o_j sums over i in ascending order).
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t i = 0; i < hd; ++i) {
        float *row = s + i * hd;
        for (int64_t j = 0; j < hd; ++j) {
          row[j] = lambda * row[j] + k[i] * v[j];
          acc[j] += q[i] * row[j];
        }
      }
      for (int64_t j = 0; j < hd; ++j)
        storeAct(d.dtype, t.out, tok * d.outTokenStride + h * hd + j, acc[j]);
    }
  }
}

} // namespace

Status lightningPrefillRef(const LightningDims &dims,
                           const LightningTensors &t) {
  const char *op = "lightning_prefill_ref";
  if (Status s = checkLightningArgs(op, dims, t, /*prefill=*/true); !s)
    return s;
  if (dims.batch == 0)
    return Status::success();
  if (Status s = checkHostArgs(op, dims, t); !s)
    return s;
  LightningDims d = lightningResolvedDims(dims);
  for (int64_t b = 0; b < d.batch; ++b)
    if (t.slots[b] != -1)
      runSequence(d, t, t.slots[b], t.cuSeqLens[b], t.cuSeqLens[b + 1]);
  return Status::success();
}

Status lightningDecodeRef(const LightningDims &dims,
                          const LightningTensors &t) {
  const char *op = "lightning_decode_ref";
  if (Status s = checkLightningArgs(op, dims, t, /*prefill=*/false); !s)
    return s;
  if (dims.batch == 0)
    return Status::success();
  LightningTensors noLens = t;
  noLens.cuSeqLens = nullptr;
  if (Status s = checkHostArgs(op, dims, noLens); !s)
    return s;
  LightningDims d = lightningResolvedDims(dims);
  for (int64_t b = 0; b < d.batch; ++b)
    if (t.slots[b] != -1)
      runSequence(d, t, t.slots[b], b, b + 1);
  return Status::success();
}

} // namespace strata::kernels

#include "kernels/cpu/AttentionRef.h"

#include "kernels/cpu/CpuAccess.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace strata::kernels {

namespace {

Status fail(const std::string &message) {
  return Status::error("attention: " + message);
}

Status validate(const AttentionDims &d, const AttentionTensors &t) {
  if (d.batch < 0 || d.numQHeads <= 0 || d.numKvHeads <= 0 || d.headDim <= 0)
    return fail("batch, head counts and head dim must be positive");
  if (d.numQHeads % d.numKvHeads != 0)
    return fail("numQHeads " + std::to_string(d.numQHeads) +
                " is not a multiple of numKvHeads " +
                std::to_string(d.numKvHeads));
  if (d.slidingWindow < 0)
    return fail("slidingWindow must be >= 0, got " +
                std::to_string(d.slidingWindow));
  if (!t.q || !t.out || !t.cuQLens || !t.kvLens || !t.cache.k)
    return fail("q, out, cuQLens, kvLens and the cache must be given");
  if (t.cache.layout == KvCacheLayout::Paged &&
      (!t.cache.v || !t.cache.blockTables || t.cache.blockSize <= 0))
    return fail("a paged cache needs V, block tables and a block size");
  if (t.cuQLens[0] != 0)
    return fail("cuQLens[0] must be 0, got " + std::to_string(t.cuQLens[0]));
  for (int64_t b = 0; b < d.batch; ++b) {
    int64_t qLen = t.cuQLens[b + 1] - t.cuQLens[b];
    if (qLen < 0)
      return fail("cuQLens decreases at sequence " + std::to_string(b));
    if (t.kvLens[b] < qLen)
      return fail("sequence " + std::to_string(b) + " has kvLen " +
                  std::to_string(t.kvLens[b]) + " < its " +
                  std::to_string(qLen) + " queries");
    if (t.parentIds)
      for (int64_t i = 0; i < qLen; ++i) {
        int32_t p = t.parentIds[t.cuQLens[b] + i];
        if (p < -1 || p >= i)
          return fail("query " + std::to_string(i) + " of sequence " +
                      std::to_string(b) + " has parent " + std::to_string(p) +
                      "; parents precede children");
      }
  }
  return Status::success();
}

} // namespace

Status attentionRef(const AttentionDims &d, const AttentionTensors &t) {
  if (Status s = validate(d, t); !s.ok())
    return s;
  const int64_t D = d.headDim;
  const int64_t group = d.numQHeads / d.numKvHeads;
  const ActDType type = d.dtype;
  std::vector<float> scores, acc(D);
  std::vector<char> visible;

  for (int64_t b = 0; b < d.batch; ++b) {
    const int64_t qBegin = t.cuQLens[b];
    const int64_t qLen = t.cuQLens[b + 1] - qBegin;
    const int64_t kvLen = t.kvLens[b];
    const int64_t prefix = kvLen - qLen; // slots cached before this step
    for (int64_t i = 0; i < qLen; ++i) {
      const int64_t row = qBegin + i;
      const int64_t slot = prefix + i;
      const int64_t qPos = t.positions ? t.positions[row] : slot;
      // Keys this query sees, by slot.
      visible.assign(kvLen, 0);
      for (int64_t s = 0; s < prefix; ++s)
        visible[s] = 1;
      if (t.parentIds) {
        for (int64_t a = i; a >= 0; a = t.parentIds[qBegin + a])
          visible[prefix + a] = 1;
      } else {
        for (int64_t s = prefix; s <= slot; ++s)
          visible[s] = 1;
      }
      if (d.slidingWindow > 0)
        for (int64_t s = 0; s < kvLen; ++s) {
          int64_t kPos = s >= prefix && t.positions
                             ? t.positions[qBegin + (s - prefix)]
                             : s;
          if (qPos - kPos >= d.slidingWindow)
            visible[s] = 0;
        }

      for (int64_t h = 0; h < d.numQHeads; ++h) {
        const int64_t kvHead = h / group;
        const void *qRow = actAt(type, t.q, (row * d.numQHeads + h) * D);
        scores.assign(kvLen, -std::numeric_limits<float>::infinity());
        float maxScore = -std::numeric_limits<float>::infinity();
        for (int64_t s = 0; s < kvLen; ++s) {
          if (!visible[s])
            continue;
          const void *kRow = kvCacheRow(t.cache, type, d.numKvHeads, D, b, s,
                                        kvHead, /*isV=*/false);
          if (!kRow)
            return fail("sequence " + std::to_string(b) + " slot " +
                        std::to_string(s) + " has no cache storage");
          float dot = 0.0f;
          for (int64_t e = 0; e < D; ++e)
            dot += loadAct(type, qRow, e) * loadAct(type, kRow, e);
          scores[s] = dot * d.scale;
          maxScore = std::max(maxScore, scores[s]);
        }
        std::fill(acc.begin(), acc.end(), 0.0f);
        float total = 0.0f;
        for (int64_t s = 0; s < kvLen; ++s) {
          if (!visible[s])
            continue;
          float w = std::exp(scores[s] - maxScore);
          total += w;
          const void *vRow = kvCacheRow(t.cache, type, d.numKvHeads, D, b, s,
                                        kvHead, /*isV=*/true);
          for (int64_t e = 0; e < D; ++e)
            acc[e] += w * loadAct(type, vRow, e);
        }
        void *outRow = actAt(type, t.out, (row * d.numQHeads + h) * D);
        for (int64_t e = 0; e < D; ++e)
          storeAct(type, outRow, e, total > 0.0f ? acc[e] / total : 0.0f);
      }
    }
  }
  return Status::success();
}

} // namespace strata::kernels

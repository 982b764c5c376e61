#include "kernels/cpu/RopeKvWriteRef.h"

#include "kernels/cpu/CpuAccess.h"

#include <cmath>
#include <vector>

namespace strata::kernels {

namespace {

/// The cache row of (sequence b, slot, kvHead) in K or V, or null where the
/// slot has no storage (the GPU kernel skips such writes the same way).
void *cacheRow(const RopeKvArgs &a, int64_t b, int64_t slot, int64_t kvHead,
               bool isV) {
  return kvCacheRow(a.cache, a.dims.dtype, a.dims.numKvHeads, a.dims.headDim, b,
                    slot, kvHead, isV);
}

/// RMSNorm (optional) and rotation of one q or k head, in place, in fp32.
void normAndRotate(const RopeKvArgs &a, std::vector<float> &x,
                   const void *normWeight, const float *cosSinRow) {
  const RopeKvDims &d = a.dims;
  if (normWeight) {
    float sumSq = 0.0f;
    for (float v : x)
      sumSq += v * v;
    float scale = 1.0f / std::sqrt(sumSq / d.headDim + a.qkNorm.eps);
    for (int32_t i = 0; i < d.headDim; ++i)
      x[i] = x[i] * scale * loadAct(d.dtype, normWeight, i);
  }
  int32_t half = d.rotaryDim / 2;
  for (int32_t i = 0; i < half; ++i) {
    float c = cosSinRow[i];
    float s = cosSinRow[half + i];
    int32_t i1 = d.pairing == RopePairingKind::Neox ? i : 2 * i;
    int32_t i2 = d.pairing == RopePairingKind::Neox ? i + half : 2 * i + 1;
    float x1 = x[i1];
    float x2 = x[i2];
    x[i1] = x1 * c - x2 * s;
    x[i2] = x2 * c + x1 * s;
  }
}

} // namespace

Status ropeKvWriteRef(const RopeKvArgs &a) {
  if (Status s = validateRopeKv(a); !s)
    return s;
  const RopeKvDims &d = a.dims;
  const int64_t numHeads = a.numHeads();
  const int64_t headDim = d.headDim;
  const bool packed = a.variant == RopeKvVariant::Packed;
  const ActDType type = d.dtype;
  std::vector<float> x(headDim);

  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t t = 0; t < d.seq; ++t) {
      if (a.seqLens && t >= a.seqLens[b])
        continue;
      int64_t slot = packed ? t : int64_t(a.kvLens[b]) + t;
      int64_t pos = a.variant == RopeKvVariant::Tree
                        ? int64_t(a.posIds[b * d.seq + t])
                        : slot;
      if (pos < 0 || pos >= a.cosSin.maxPos)
        continue;
      int64_t table = a.cosSin.cacheBatch == 1 ? 0 : b;
      const float *cosSinRow =
          a.cosSin.data + (table * a.cosSin.maxPos + pos) * d.rotaryDim;
      int64_t token = b * d.seq + t;

      for (int64_t h = 0; h < numHeads; ++h) {
        void *src = actAt(type, a.qkv, (token * numHeads + h) * headDim);
        bool isQ = h < d.numQHeads;
        bool isV = h >= d.numQHeads + d.numKvHeads;
        int64_t kvHead = isV ? h - d.numQHeads - d.numKvHeads : h - d.numQHeads;
        if (isV) {
          if (void *dst = cacheRow(a, b, slot, kvHead, true))
            copyAct(type, dst, src, headDim);
          continue;
        }
        for (int64_t i = 0; i < headDim; ++i)
          x[i] = loadAct(type, src, i);
        normAndRotate(a, x, isQ ? a.qkNorm.qWeight : a.qkNorm.kWeight,
                      cosSinRow);

        void *dsts[2] = {nullptr, nullptr};
        if (packed)
          dsts[0] = src;
        else if (isQ)
          dsts[0] = actAt(type, a.qOut, (token * d.numQHeads + h) * headDim);
        if (!isQ)
          dsts[1] = cacheRow(a, b, slot, kvHead, false);
        for (void *dst : dsts)
          if (dst)
            for (int64_t i = 0; i < headDim; ++i)
              storeAct(type, dst, i, x[i]);
      }
    }
  }
  return Status::success();
}

Status ropeKvWritePackedRef(const RopeKvDims &dims, void *qkv,
                            const CosSinCache &cosSin,
                            const QkNormParams &qkNorm,
                            const KvCacheView &cache, const int32_t *seqLens) {
  return ropeKvWriteRef(
      RopeKvArgs::packed(dims, qkv, cosSin, qkNorm, cache, seqLens));
}

Status ropeKvWriteContinuousRef(const RopeKvDims &dims, const void *qkv,
                                void *qOut, const int32_t *kvLens,
                                const CosSinCache &cosSin,
                                const QkNormParams &qkNorm,
                                const KvCacheView &cache,
                                const int32_t *seqLens) {
  return ropeKvWriteRef(RopeKvArgs::continuous(dims, qkv, qOut, kvLens, cosSin,
                                               qkNorm, cache, seqLens));
}

Status ropeKvWriteTreeRef(const RopeKvDims &dims, const void *qkv, void *qOut,
                          const int32_t *kvLens, const int32_t *posIds,
                          const CosSinCache &cosSin, const QkNormParams &qkNorm,
                          const KvCacheView &cache, const int32_t *seqLens) {
  return ropeKvWriteRef(RopeKvArgs::tree(dims, qkv, qOut, kvLens, posIds,
                                         cosSin, qkNorm, cache, seqLens));
}

} // namespace strata::kernels

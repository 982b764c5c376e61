#include "kernels/cpu/RopeApartRef.h"

#include "kernels/cpu/CpuAccess.h"

#include <cstring>
#include <vector>

namespace strata::kernels {

Status ropeRotateRef(const RopeRotateDims &d, const void *x, void *out,
                     const int32_t *positions, const CosSinCache &cosSin) {
  if (Status s = validateRopeRotate(d, x, out, positions, cosSin); !s.ok())
    return s;
  const int64_t half = d.rotaryDim / 2;
  const bool neox = d.pairing == RopePairingKind::Neox;
  std::vector<float> row(size_t(d.headDim));
  for (int64_t t = 0; t < d.tokens; ++t) {
    const int64_t pos = positions[t];
    const bool rotate = pos >= 0 && pos < cosSin.maxPos;
    for (int64_t h = 0; h < d.numHeads; ++h) {
      const int64_t base = (t * d.numHeads + h) * d.headDim;
      // Read the whole head first: out may be x.
      for (int64_t e = 0; e < d.headDim; ++e)
        row[size_t(e)] = loadAct(d.dtype, x, base + e);
      for (int64_t e = 0; e < d.headDim; ++e)
        storeAct(d.dtype, out, base + e, row[size_t(e)]);
      if (!rotate)
        continue;
      const float *table = cosSin.data + pos * d.rotaryDim;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
        const float xa = row[size_t(a)], xb = row[size_t(b)];
        const float c = table[i], s = table[half + i];
        // Each product rounded to fp32 before the sum, as on the GPU.
        const float ac = xa * c, bs = xb * s, bc = xb * c, as = xa * s;
        storeAct(d.dtype, out, base + a, ac - bs);
        storeAct(d.dtype, out, base + b, bc + as);
      }
    }
  }
  return Status::success();
}

Status kvAppendRef(const KvAppendDims &d, const void *k, const void *v,
                   const int32_t *cuQLens, const int32_t *kvLens,
                   const KvCacheView &cache) {
  if (Status s = validateKvAppend(d, k, v, cuQLens, kvLens, cache); !s.ok())
    return s;
  if (d.batch == 0 || d.tokens == 0)
    return Status::success();
  const int64_t stride = kvAppendBlockStride(d, cache);
  const size_t rowBytes = size_t(d.headDim) * size_t(actDTypeBytes(d.dtype));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t token = cuQLens[b]; token < cuQLens[b + 1]; ++token) {
      if (token >= d.tokens)
        break;
      const int64_t slot = int64_t(kvLens[b]) + (token - cuQLens[b]);
      const int64_t logical = slot / cache.blockSize;
      if (slot < 0 || logical >= cache.maxBlocksPerSeq)
        continue;
      const int32_t block = cache.blockTables[b * cache.maxBlocksPerSeq +
                                              logical];
      if (block < 0 || block >= cache.numBlocks)
        continue;
      for (int64_t h = 0; h < d.numKvHeads; ++h) {
        const int64_t at = block * stride +
                           (h * cache.blockSize + slot % cache.blockSize) *
                               d.headDim;
        const int64_t from = (token * d.numKvHeads + h) * d.headDim;
        std::memcpy(actAt(d.dtype, cache.k, at), actAt(d.dtype, k, from),
                    rowBytes);
        std::memcpy(actAt(d.dtype, cache.v, at), actAt(d.dtype, v, from),
                    rowBytes);
      }
    }
  return Status::success();
}

} // namespace strata::kernels

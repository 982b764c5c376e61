#include "kernels/common/RopeApartTypes.h"

#include <string>

namespace strata::kernels {

namespace {

bool halfType(ActDType t) { return t == ActDType::BF16 || t == ActDType::F16; }

} // namespace

Status validateRopeRotate(const RopeRotateDims &d, const void *x,
                          const void *out, const int32_t *positions,
                          const CosSinCache &cosSin) {
  if (!halfType(d.dtype))
    return Status::error("rope: the dtype must be fp16 or bf16");
  if (d.tokens < 0 || d.numHeads <= 0 || d.headDim <= 0 || d.headDim > 256 ||
      d.headDim % 2 != 0)
    return Status::error("rope: expected tokens >= 0, heads > 0 and an even "
                         "headDim of at most 256, got tokens " +
                         std::to_string(d.tokens) + ", heads " +
                         std::to_string(d.numHeads) + ", headDim " +
                         std::to_string(d.headDim));
  if (d.rotaryDim <= 0 || d.rotaryDim % 2 != 0 || d.rotaryDim > d.headDim)
    return Status::error("rope: rotaryDim " + std::to_string(d.rotaryDim) +
                         " must be even, positive and at most headDim " +
                         std::to_string(d.headDim));
  if (d.tokens == 0)
    return Status::success();
  if (!x || !out || !positions || !cosSin.data || cosSin.maxPos <= 0)
    return Status::error("rope: a null operand or an empty rotary table");
  if (cosSin.cacheBatch != 1)
    return Status::error(
        "rope: the rotary table must be shared (cacheBatch 1)");
  return Status::success();
}

int64_t kvAppendBlockStride(const KvAppendDims &d, const KvCacheView &cache) {
  return cache.blockStride
             ? cache.blockStride
             : int64_t(d.numKvHeads) * cache.blockSize * d.headDim;
}

Status validateKvAppend(const KvAppendDims &d, const void *k, const void *v,
                        const int32_t *cuQLens, const int32_t *kvLens,
                        const KvCacheView &cache) {
  if (!halfType(d.dtype))
    return Status::error("kv_append: the dtype must be fp16 or bf16");
  if (d.batch < 0 || d.tokens < 0 || d.numKvHeads <= 0 || d.headDim <= 0 ||
      d.headDim > 256 || d.headDim % 8 != 0)
    return Status::error("kv_append: expected batch and tokens >= 0, kv "
                         "heads > 0 and a headDim that is a multiple of 8 "
                         "and at most 256, got batch " +
                         std::to_string(d.batch) + ", tokens " +
                         std::to_string(d.tokens) + ", kv heads " +
                         std::to_string(d.numKvHeads) + ", headDim " +
                         std::to_string(d.headDim));
  if (cache.layout != KvCacheLayout::Paged)
    return Status::error("kv_append: the cache must be paged");
  if (d.batch == 0 || d.tokens == 0)
    return Status::success();
  if (!k || !v || !cuQLens || !kvLens || !cache.k || !cache.v ||
      !cache.blockTables || cache.blockSize <= 0 || cache.numBlocks <= 0 ||
      cache.maxBlocksPerSeq <= 0)
    return Status::error("kv_append: a null operand or an empty cache");
  if (kvAppendBlockStride(d, cache) % 8 != 0)
    return Status::error(
        "kv_append: the block stride must be a multiple of 8 elements");
  return Status::success();
}

} // namespace strata::kernels

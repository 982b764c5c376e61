#include "kernels/common/RopeKvTypes.h"

#include <cstdint>
#include <sstream>

namespace strata::kernels {

const char *ropeKvVariantName(RopeKvVariant variant) {
  switch (variant) {
  case RopeKvVariant::Packed:
    return "packed";
  case RopeKvVariant::Continuous:
    return "continuous";
  case RopeKvVariant::Tree:
    return "tree";
  }
  return "unknown";
}

namespace {

bool aligned16(const void *p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

/// Builds "rope_kv_write(<variant>): <what>" failures.
class Checker {
public:
  explicit Checker(RopeKvVariant variant) : variant_(variant) {}

  template <typename... Parts> Status fail(const Parts &...parts) const {
    std::ostringstream os;
    os << "rope_kv_write(" << ropeKvVariantName(variant_) << "): ";
    (os << ... << parts);
    return Status::error(os.str());
  }

private:
  RopeKvVariant variant_;
};

} // namespace

Status validateRopeKv(const RopeKvArgs &a) {
  Checker c(a.variant);
  const RopeKvDims &d = a.dims;
  if (d.batch < 0 || d.seq < 0)
    return c.fail("batch ", d.batch, " and seq ", d.seq,
                  " must not be negative");
  if (d.numQHeads < 1 || d.numKvHeads < 1)
    return c.fail("numQHeads ", d.numQHeads, " and numKvHeads ", d.numKvHeads,
                  " must be positive");
  if (d.headDim < 8 || d.headDim > 256 || d.headDim % 8 != 0)
    return c.fail("headDim ", d.headDim,
                  " must be a multiple of 8 in [8, 256]");
  if (d.rotaryDim < 16 || d.rotaryDim > d.headDim || d.rotaryDim % 16 != 0)
    return c.fail("rotaryDim ", d.rotaryDim,
                  " must be a multiple of 16 in [16, headDim ", d.headDim, "]");
  // The kernel numbers (token, head) pairs with 32-bit unsigned integers.
  if (d.batch > 0 && d.seq > (int64_t(1) << 31) / d.batch / a.numHeads())
    return c.fail("batch ", d.batch, " x seq ", d.seq, " x heads ",
                  a.numHeads(), " exceeds 2^31 (token, head) pairs");

  bool packed = a.variant == RopeKvVariant::Packed;
  if (!a.qkv || !aligned16(a.qkv))
    return c.fail("qkv must be a non-null 16-byte aligned pointer");
  if (packed && a.qOut)
    return c.fail("qOut must be null: packed rotates q in place in qkv");
  if (!packed && (!a.qOut || !aligned16(a.qOut)))
    return c.fail("qOut must be a non-null 16-byte aligned pointer");
  if (!packed && !a.kvLens)
    return c.fail("kvLens [batch] must not be null");
  if (a.variant == RopeKvVariant::Tree && !a.posIds)
    return c.fail("posIds [batch, seq] must not be null");
  if (a.variant != RopeKvVariant::Tree && a.posIds)
    return c.fail("posIds must be null: only the tree variant takes "
                  "explicit positions");

  const CosSinCache &cs = a.cosSin;
  if (!cs.data || !aligned16(cs.data))
    return c.fail("cos/sin cache must be a non-null 16-byte aligned pointer");
  if (cs.cacheBatch != 1 && cs.cacheBatch != d.batch)
    return c.fail("cos/sin cacheBatch ", cs.cacheBatch, " must be 1 or batch ",
                  d.batch);
  if (cs.maxPos < 1)
    return c.fail("cos/sin maxPos ", cs.maxPos, " must be positive");
  if (packed && d.seq > cs.maxPos)
    return c.fail("seq ", d.seq, " exceeds cos/sin maxPos ", cs.maxPos);

  const QkNormParams &n = a.qkNorm;
  if (n.enabled()) {
    if (!n.qWeight || !n.kWeight)
      return c.fail("QK-norm needs both qWeight and kWeight (or neither)");
    if (!aligned16(n.qWeight) || !aligned16(n.kWeight))
      return c.fail("QK-norm weights must be 16-byte aligned");
    if (!(n.eps >= 0.0f) || n.eps > 1.0f)
      return c.fail("QK-norm eps ", n.eps, " must be in [0, 1]");
  }

  const KvCacheView &kv = a.cache;
  if (kv.layout == KvCacheLayout::Paged) {
    if (!kv.k || !kv.v || !aligned16(kv.k) || !aligned16(kv.v))
      return c.fail("paged K and V pools must be non-null 16-byte aligned "
                    "pointers");
    if (kv.blockSize < 1 || kv.numBlocks < 1 || kv.maxBlocksPerSeq < 1)
      return c.fail("paged cache: blockSize ", kv.blockSize, ", numBlocks ",
                    kv.numBlocks, " and maxBlocksPerSeq ", kv.maxBlocksPerSeq,
                    " must be positive");
    // Slots are divided by blockSize in 32-bit arithmetic on the device.
    if (kv.blockSize > (int64_t(1) << 20))
      return c.fail("paged cache: blockSize ", kv.blockSize,
                    " exceeds 2^20 tokens");
    if (!kv.blockTables)
      return c.fail("paged cache: blockTables [batch, maxBlocksPerSeq] must "
                    "not be null");
    int64_t minStride = int64_t(d.numKvHeads) * kv.blockSize * d.headDim;
    if (kv.blockStride != 0 &&
        (kv.blockStride < minStride || kv.blockStride % 8 != 0))
      return c.fail("paged cache: blockStride ", kv.blockStride,
                    " must be 0 or a multiple of 8 that is at least "
                    "numKvHeads x blockSize x headDim = ",
                    minStride);
    if (packed && d.seq > kv.maxBlocksPerSeq * kv.blockSize)
      return c.fail("seq ", d.seq, " exceeds the block table's ",
                    kv.maxBlocksPerSeq, " blocks of ", kv.blockSize, " tokens");
  } else {
    if (!kv.k || !aligned16(kv.k))
      return c.fail("contiguous cache must be a non-null 16-byte aligned "
                    "pointer");
    if (kv.v)
      return c.fail("contiguous cache holds K and V in one tensor: pass v as "
                    "null");
    if (kv.capacity < 1)
      return c.fail("contiguous cache capacity ", kv.capacity,
                    " must be positive");
    if (packed && d.seq > kv.capacity)
      return c.fail("seq ", d.seq, " exceeds the cache capacity ", kv.capacity);
  }
  return Status::success();
}

RopeKvArgs RopeKvArgs::packed(const RopeKvDims &dims, void *qkv,
                              const CosSinCache &cosSin,
                              const QkNormParams &qkNorm,
                              const KvCacheView &cache,
                              const int32_t *seqLens) {
  RopeKvArgs a;
  a.variant = RopeKvVariant::Packed;
  a.dims = dims;
  a.qkv = qkv;
  a.seqLens = seqLens;
  a.cosSin = cosSin;
  a.qkNorm = qkNorm;
  a.cache = cache;
  return a;
}

RopeKvArgs RopeKvArgs::continuous(const RopeKvDims &dims, const void *qkv,
                                  void *qOut, const int32_t *kvLens,
                                  const CosSinCache &cosSin,
                                  const QkNormParams &qkNorm,
                                  const KvCacheView &cache,
                                  const int32_t *seqLens) {
  // Read only: the continuous and tree variants never write qkv.
  RopeKvArgs a =
      packed(dims, const_cast<void *>(qkv), cosSin, qkNorm, cache, seqLens);
  a.variant = RopeKvVariant::Continuous;
  a.qOut = qOut;
  a.kvLens = kvLens;
  return a;
}

RopeKvArgs RopeKvArgs::tree(const RopeKvDims &dims, const void *qkv, void *qOut,
                            const int32_t *kvLens, const int32_t *posIds,
                            const CosSinCache &cosSin,
                            const QkNormParams &qkNorm,
                            const KvCacheView &cache, const int32_t *seqLens) {
  RopeKvArgs a =
      continuous(dims, qkv, qOut, kvLens, cosSin, qkNorm, cache, seqLens);
  a.variant = RopeKvVariant::Tree;
  a.posIds = posIds;
  return a;
}

} // namespace strata::kernels

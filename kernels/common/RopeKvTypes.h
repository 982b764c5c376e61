// Operand descriptions shared by the rope_kv_write CUDA launchers
// (kernels/rope_kv/RopeKvWrite.h) and their CPU references
// (kernels/cpu/RopeKvWriteRef.h), plus the one shape check both run on entry.
//
// Plain C++ without CUDA headers: the runtime builds these on either backend.
// Layouts of every tensor are spelled out in the launcher headers and in
// docs/kernels.md.
#ifndef STRATA_KERNELS_COMMON_ROPEKVTYPES_H
#define STRATA_KERNELS_COMMON_ROPEKVTYPES_H

#include "kernels/common/ActDType.h"
#include "kernels/common/Status.h"

#include <cstdint>

namespace strata::kernels {

/// Which elements of a head form a rotary pair (i < rotaryDim / 2):
/// Neox pairs element i with i + rotaryDim/2 (Llama, Qwen, Mistral);
/// GptJ pairs elements 2i and 2i+1 (GPT-J, ChatGLM).
/// Either way pair i rotates by frequency i of the cos/sin cache.
enum class RopePairingKind : uint8_t { Neox, GptJ };

enum class RopeKvVariant : uint8_t { Packed, Continuous, Tree };

enum class KvCacheLayout : uint8_t { Paged, Contiguous };

const char *ropeKvVariantName(RopeKvVariant variant);

/// Geometry of one launch.
struct RopeKvDims {
  /// Sequences in the batch.
  int64_t batch = 0;
  /// Tokens per sequence in qkv (the padded length when seqLens is given).
  int64_t seq = 0;
  int32_t numQHeads = 0;
  /// K heads and V heads (equal).
  int32_t numKvHeads = 0;
  /// Multiple of 8, at most 256.
  int32_t headDim = 0;
  /// Leading elements of each head that rotate; a multiple of 16 and at most
  /// headDim. Elements at and beyond rotaryDim are not rotated.
  int32_t rotaryDim = 0;
  RopePairingKind pairing = RopePairingKind::Neox;
  ActDType dtype = ActDType::BF16;
};

/// fp32 rotary table [cacheBatch, maxPos, rotaryDim]: row (c, p) holds
/// cos(p * invFreq[i]) at [i] and sin(p * invFreq[i]) at [rotaryDim/2 + i],
/// i < rotaryDim/2 (see kernels/common/RopeCosSin.h). Sequence b reads
/// table c = (cacheBatch == 1 ? 0 : b).
struct CosSinCache {
  const float *data = nullptr;
  int64_t cacheBatch = 1;
  int64_t maxPos = 0;
};

/// Optional per-head RMSNorm of q and k over headDim, applied before the
/// rotation: x * rsqrt(mean(x^2) + eps) * weight. Disabled when both weights
/// are null. Weights are [headDim] in the activation dtype.
struct QkNormParams {
  const void *qWeight = nullptr;
  const void *kWeight = nullptr;
  float eps = 1e-6f;
  bool enabled() const { return qWeight || kWeight; }
};

/// Where K and V go. Both layouts use the activation dtype.
///  Paged: K pool and V pool, each block holding [numKvHeads, blockSize,
///   headDim]; block n starts blockStride elements after block n-1
///   (0 means numKvHeads * blockSize * headDim: two separate pools). A
///   combined pool [numBlocks, 2, numKvHeads, blockSize, headDim] is
///   v = k + numKvHeads * blockSize * headDim with blockStride twice that.
///   Token slot s of sequence b lives in block blockTables[b *
///   maxBlocksPerSeq + s / blockSize] at row s % blockSize.
///  Contiguous: one tensor [batch, 2, numKvHeads, capacity, headDim]
///   (index 0 of dim 1 is K, 1 is V); slot s is row s.
struct KvCacheView {
  KvCacheLayout layout = KvCacheLayout::Paged;
  void *k = nullptr;
  void *v = nullptr;
  int64_t numBlocks = 0;
  int64_t blockSize = 0;
  int64_t blockStride = 0;
  const int32_t *blockTables = nullptr;
  int64_t maxBlocksPerSeq = 0;
  int64_t capacity = 0;

  static KvCacheView paged(void *k, void *v, int64_t numBlocks,
                           int64_t blockSize, const int32_t *blockTables,
                           int64_t maxBlocksPerSeq, int64_t blockStride = 0) {
    KvCacheView view;
    view.layout = KvCacheLayout::Paged;
    view.k = k;
    view.v = v;
    view.numBlocks = numBlocks;
    view.blockSize = blockSize;
    view.blockStride = blockStride;
    view.blockTables = blockTables;
    view.maxBlocksPerSeq = maxBlocksPerSeq;
    return view;
  }
  static KvCacheView contiguous(void *kv, int64_t capacity) {
    KvCacheView view;
    view.layout = KvCacheLayout::Contiguous;
    view.k = kv;
    view.capacity = capacity;
    return view;
  }
};

/// Everything one rope_kv_write call reads and writes; the named launchers
/// and references fill it, so all variants share one check and one kernel.
struct RopeKvArgs {
  RopeKvVariant variant = RopeKvVariant::Packed;
  RopeKvDims dims;
  /// [batch, seq, numQHeads + 2 * numKvHeads, headDim]; rotated in place
  /// (q and k heads) by the packed variant only.
  void *qkv = nullptr;
  /// Continuous and tree: rotated q [batch, seq, numQHeads, headDim].
  void *qOut = nullptr;
  /// Continuous and tree: [batch] tokens already cached per sequence.
  const int32_t *kvLens = nullptr;
  /// Tree: [batch, seq] rotary position of every token.
  const int32_t *posIds = nullptr;
  /// Optional [batch]: valid tokens per sequence; tokens t >= seqLens[b] are
  /// padding and nothing of them is written. Null: all seq tokens are valid.
  const int32_t *seqLens = nullptr;
  CosSinCache cosSin;
  QkNormParams qkNorm;
  KvCacheView cache;

  /// The operands of each variant, as its named launcher takes them.
  static RopeKvArgs packed(const RopeKvDims &dims, void *qkv,
                           const CosSinCache &cosSin,
                           const QkNormParams &qkNorm, const KvCacheView &cache,
                           const int32_t *seqLens);
  static RopeKvArgs continuous(const RopeKvDims &dims, const void *qkv,
                               void *qOut, const int32_t *kvLens,
                               const CosSinCache &cosSin,
                               const QkNormParams &qkNorm,
                               const KvCacheView &cache,
                               const int32_t *seqLens);
  static RopeKvArgs tree(const RopeKvDims &dims, const void *qkv, void *qOut,
                         const int32_t *kvLens, const int32_t *posIds,
                         const CosSinCache &cosSin, const QkNormParams &qkNorm,
                         const KvCacheView &cache, const int32_t *seqLens);

  int64_t numHeads() const {
    return int64_t(dims.numQHeads) + 2 * int64_t(dims.numKvHeads);
  }
  /// Elements between paged blocks after resolving the default.
  int64_t pagedBlockStride() const {
    return cache.blockStride
               ? cache.blockStride
               : int64_t(dims.numKvHeads) * cache.blockSize * dims.headDim;
  }
};

/// Checks shapes, pointers and alignment (16 bytes for every tensor, since
/// the GPU kernel moves 16-byte vectors). Values inside index tensors
/// (kvLens, posIds, block tables) live on the device and are not checked
/// here; see docs/kernels.md for what happens to out-of-range entries.
Status validateRopeKv(const RopeKvArgs &args);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_ROPEKVTYPES_H

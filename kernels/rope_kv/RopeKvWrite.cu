// The one rope_kv_write kernel behind the three launchers of RopeKvWrite.h.
//
// A group of kLanes threads handles up to kItems heads of one token; each
// thread owns 8 consecutive elements (one 16-byte vector) of a head, so a
// group covers headDim <= 8 * kLanes and every global access is a full
// 16-byte vector. The kernel is bound by memory traffic: issuing all head
// loads of a thread before any use keeps enough bytes in flight, and the
// per-token work (positions, cos/sin, block-table lookup) is done once per
// group. The variant, the pairing, QK-norm and the cache layout are run-time
// flags: they are uniform per launch, so the branches cost nothing next to
// the memory traffic, and the template is instantiated only per dtype, group
// width and heads per group (16 kernels).
#include "kernels/rope_kv/RopeKvWrite.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <string>

namespace strata::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8; // elements of a 16-byte vector
// Heads per thread group: 4 for large launches (more loads in flight per
// thread); 1 when the launch is small (decode), where the latency of one
// group's serial chain, not bandwidth, decides the time.
constexpr int kWideItems = 4;
constexpr int64_t kNarrowBelowHeadTokens = 16384;

struct Params {
  void *qkv;
  void *qOut;
  const int32_t *kvLens;
  const int32_t *posIds;
  const int32_t *seqLens;
  const float *cosSin;
  int64_t cosSinTableStride; // 0 when all sequences share one table
  int64_t maxPos;
  const void *qWeight;
  const void *kWeight;
  float eps;
  float invHeadDim;
  void *kCache;
  void *vCache;
  const int32_t *blockTables;
  int64_t blockStride;
  int64_t numBlocks;
  int64_t maxBlocksPerSeq;
  int64_t capacity;
  uint32_t blockSize;
  uint32_t seq;
  uint32_t numTokens;
  uint32_t groupsPerToken;
  uint32_t numGroups;
  int32_t numHeads;
  int32_t numQHeads;
  int32_t numKvHeads;
  int32_t headDim;
  int32_t rotaryDim;
  RopeKvVariant variant;
  bool paged;
  bool neox;
  bool norm;
};

template <typename T> struct Vec;

template <> struct Vec<__nv_bfloat16> {
  static __device__ __forceinline__ void unpack(const uint4 &raw,
                                                float (&x)[kVec]) {
    const auto *h = reinterpret_cast<const __nv_bfloat162 *>(&raw);
#pragma unroll
    for (int i = 0; i < kVec / 2; ++i) {
      float2 f = __bfloat1622float2(h[i]);
      x[2 * i] = f.x;
      x[2 * i + 1] = f.y;
    }
  }
  static __device__ __forceinline__ uint4 pack(const float (&x)[kVec]) {
    uint4 raw;
    auto *h = reinterpret_cast<__nv_bfloat162 *>(&raw);
#pragma unroll
    for (int i = 0; i < kVec / 2; ++i)
      h[i] = __floats2bfloat162_rn(x[2 * i], x[2 * i + 1]);
    return raw;
  }
};

template <> struct Vec<__half> {
  static __device__ __forceinline__ void unpack(const uint4 &raw,
                                                float (&x)[kVec]) {
    const auto *h = reinterpret_cast<const __half2 *>(&raw);
#pragma unroll
    for (int i = 0; i < kVec / 2; ++i) {
      float2 f = __half22float2(h[i]);
      x[2 * i] = f.x;
      x[2 * i + 1] = f.y;
    }
  }
  static __device__ __forceinline__ uint4 pack(const float (&x)[kVec]) {
    uint4 raw;
    auto *h = reinterpret_cast<__half2 *>(&raw);
#pragma unroll
    for (int i = 0; i < kVec / 2; ++i)
      h[i] = __floats2half2_rn(x[2 * i], x[2 * i + 1]);
    return raw;
  }
};

/// Where the K row of (sequence b, slot) starts for kv head 0, with the
/// element distance between kv heads and from K to V; kOffset < 0 when the
/// slot has no storage (the CPU reference skips the same slots). All kv heads
/// of one token share one block-table lookup.
struct CacheSlot {
  int64_t kOffset;
  int64_t headStride;
  int64_t vDelta; // contiguous only: V rows sit Hkv heads after K rows
};

__device__ __forceinline__ CacheSlot cacheSlot(const Params &p, uint32_t b,
                                               int64_t slot) {
  CacheSlot c{-1, 0, 0};
  if (slot < 0)
    return c;
  if (!p.paged) {
    if (slot >= p.capacity)
      return c;
    c.headStride = p.capacity * p.headDim;
    c.vDelta = p.numKvHeads * c.headStride;
    c.kOffset = int64_t(b) * 2 * c.vDelta + slot * p.headDim;
    return c;
  }
  // slot = kvLens[b] + t with both in [0, 2^31), so it fits 32 bits unsigned.
  const uint32_t logical = uint32_t(slot) / p.blockSize;
  if (logical >= p.maxBlocksPerSeq)
    return c;
  const int64_t block =
      __ldg(p.blockTables + int64_t(b) * p.maxBlocksPerSeq + logical);
  if (block < 0 || block >= p.numBlocks)
    return c;
  c.headStride = int64_t(p.blockSize) * p.headDim;
  c.kOffset = block * p.blockStride +
              int64_t(uint32_t(slot) - logical * p.blockSize) * p.headDim;
  return c;
}

// One 16-byte global store. Written as a plain uint4 assignment, the
// vectors built by Vec::pack were stored as four 4-byte stores (each
// touching a quarter of every sector, four times the store requests).
__device__ __forceinline__ void store16(void *dst, const uint4 &v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

/// Work: a group of kLanes threads handles up to kItems heads of one token
/// (heads g, g + G, g + 2G, ... for G = groupsPerToken), each thread owning
/// 8 consecutive elements of a head. All head loads are issued first, so
/// each thread keeps kItems 16-byte loads in flight, and the token's
/// positions, cos/sin values and cache slot are looked up once for its
/// heads. Neighbouring groups take neighbouring heads, so a warp still reads
/// contiguous memory.
template <typename T, int kLanes, int kItems>
__global__ void __launch_bounds__(kThreads, kItems == 1 ? 5 : 3)
    ropeKvWriteKernel(const __grid_constant__ Params p) {
  pdlWait();
  pdlLaunchDependents();
  constexpr int kGroupsPerBlock = kThreads / kLanes;
  const int lane = threadIdx.x % kLanes;
  const uint32_t gid = blockIdx.x * kGroupsPerBlock + threadIdx.x / kLanes;
  if (gid >= p.numGroups)
    return; // the whole group leaves together
  // Shuffles stay inside the group: groups of one warp may leave early.
  const unsigned groupMask = kLanes == 32
                                 ? 0xffffffffu
                                 : ((1u << kLanes) - 1u)
                                       << ((threadIdx.x % 32) & ~(kLanes - 1));

  const uint32_t token = gid / p.groupsPerToken;
  const int32_t g = int32_t(gid - token * p.groupsPerToken);
  const uint32_t b = token / p.seq;
  const int64_t t = token - b * p.seq;
  const bool active = lane * kVec < p.headDim;
  const bool packed = p.variant == RopeKvVariant::Packed;

  // Issue every independent load before anything depends on them.
  T *tokenRow = static_cast<T *>(p.qkv) +
                int64_t(token) * p.numHeads * p.headDim + lane * kVec;
  uint4 raw[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int32_t head = g + j * p.groupsPerToken;
    raw[j] = make_uint4(0, 0, 0, 0);
    if (active && head < p.numHeads)
      raw[j] = *reinterpret_cast<const uint4 *>(tokenRow +
                                                int64_t(head) * p.headDim);
  }
  const int32_t seqLen = p.seqLens ? __ldg(p.seqLens + b) : INT_MAX;
  const int32_t kvLen = packed ? 0 : __ldg(p.kvLens + b);
  const int32_t posId =
      p.variant == RopeKvVariant::Tree ? __ldg(p.posIds + token) : 0;

  if (t >= seqLen)
    return;
  const int64_t slot = packed ? t : int64_t(kvLen) + t;
  const int64_t pos = p.variant == RopeKvVariant::Tree ? posId : slot;
  if (pos < 0 || pos >= p.maxPos)
    return;
  const CacheSlot cache = cacheSlot(p, b, slot);

  // This lane's cos/sin: neox lanes [0, 2 * lanesPerHalf) rotate 8 pairs
  // (their own elements against the partner lane's); gptj lanes below
  // rotaryDim / 8 rotate the 4 adjacent pairs of their vector.
  const float *cs =
      p.cosSin + (p.cosSinTableStride ? int64_t(b) : 0) * p.cosSinTableStride +
      pos * p.rotaryDim;
  const int32_t half = p.rotaryDim / 2;
  const int lanesPerHalf = p.rotaryDim / (2 * kVec);
  const bool first = lane < lanesPerHalf;
  const bool rotating =
      p.neox ? lane < 2 * lanesPerHalf : lane * kVec < p.rotaryDim;
  const int partner = !p.neox || !rotating
                          ? lane
                          : (first ? lane + lanesPerHalf : lane - lanesPerHalf);
  float c[kVec], s[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i)
    c[i] = s[i] = 0.0f;
  if (rotating) {
    const int i0 = p.neox ? (first ? lane : partner) * kVec : lane * (kVec / 2);
    const int n = p.neox ? kVec : kVec / 2;
    // Neox: the first half of a pair subtracts the partner's sine term.
    const float sign = p.neox && first ? -1.0f : 1.0f;
#pragma unroll
    for (int h = 0; h < kVec; h += 4) {
      if (h < n) {
        const float4 c4 = __ldg(reinterpret_cast<const float4 *>(cs + i0 + h));
        const float4 s4 =
            __ldg(reinterpret_cast<const float4 *>(cs + half + i0 + h));
        c[h] = c4.x, c[h + 1] = c4.y, c[h + 2] = c4.z, c[h + 3] = c4.w;
        s[h] = sign * s4.x, s[h + 1] = sign * s4.y, s[h + 2] = sign * s4.z,
        s[h + 3] = sign * s4.w;
      }
    }
  }

#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int32_t head = g + j * p.groupsPerToken;
    if (head >= p.numHeads)
      break; // uniform across the group
    const bool isQ = head < p.numQHeads;
    const bool isV = head >= p.numQHeads + p.numKvHeads;
    const int32_t kvHead =
        isV ? head - p.numQHeads - p.numKvHeads : head - p.numQHeads;
    T *cacheDst = nullptr;
    if (!isQ && cache.kOffset >= 0)
      cacheDst = static_cast<T *>(isV && p.paged ? p.vCache : p.kCache) +
                 cache.kOffset + kvHead * cache.headStride +
                 (isV ? cache.vDelta : 0) + lane * kVec;
    if (isV) {
      if (cacheDst && active)
        store16(cacheDst, raw[j]);
      continue;
    }

    float x[kVec];
    Vec<T>::unpack(raw[j], x);
    if (p.norm) {
      const T *weight = static_cast<const T *>(isQ ? p.qWeight : p.kWeight);
      uint4 wRaw = make_uint4(0, 0, 0, 0);
      if (active)
        wRaw = __ldg(reinterpret_cast<const uint4 *>(weight + lane * kVec));
      float sumSq = 0.0f;
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        sumSq += x[i] * x[i];
#pragma unroll
      for (int offset = kLanes / 2; offset > 0; offset /= 2)
        sumSq += __shfl_xor_sync(groupMask, sumSq, offset, kLanes);
      const float scale = rsqrtf(sumSq * p.invHeadDim + p.eps);
      float w[kVec];
      Vec<T>::unpack(wRaw, w);
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        x[i] = x[i] * scale * w[i];
    }

    if (p.neox) {
      // Element i pairs with i + half, owned by the partner lane.
      float y[kVec];
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        y[i] = __shfl_sync(groupMask, x[i], partner, kLanes);
      if (rotating) {
#pragma unroll
        for (int i = 0; i < kVec; ++i)
          x[i] = x[i] * c[i] + y[i] * s[i];
      }
    } else if (rotating) {
      // GPT-J pairs (2i, 2i+1) lie inside one vector.
#pragma unroll
      for (int i = 0; i < kVec / 2; ++i) {
        const float x1 = x[2 * i];
        const float x2 = x[2 * i + 1];
        x[2 * i] = x1 * c[i] - x2 * s[i];
        x[2 * i + 1] = x2 * c[i] + x1 * s[i];
      }
    }
    if (!active)
      continue;

    const uint4 out = Vec<T>::pack(x);
    if (packed)
      store16(tokenRow + int64_t(head) * p.headDim, out);
    else if (isQ)
      store16(static_cast<T *>(p.qOut) +
                  (int64_t(token) * p.numQHeads + head) * p.headDim +
                  lane * kVec,
              out);
    if (cacheDst)
      store16(cacheDst, out);
  }
}

template <typename T, int kLanes, int kItems>
cudaError_t launchTyped(Params p, cudaStream_t stream) {
  constexpr int kGroupsPerBlock = kThreads / kLanes;
  p.groupsPerToken = (p.numHeads + kItems - 1) / kItems;
  const uint64_t groups = uint64_t(p.numTokens) * p.groupsPerToken;
  p.numGroups = uint32_t(groups);
  const unsigned blocks =
      unsigned((groups + kGroupsPerBlock - 1) / kGroupsPerBlock);
  return launchDependent(ropeKvWriteKernel<T, kLanes, kItems>, dim3(blocks),
                         dim3(kThreads), 0, stream, p);
}

template <typename T, int kLanes>
cudaError_t launchForItems(const Params &p, cudaStream_t stream) {
  if (int64_t(p.numTokens) * p.numHeads < kNarrowBelowHeadTokens)
    return launchTyped<T, kLanes, 1>(p, stream);
  return launchTyped<T, kLanes, kWideItems>(p, stream);
}

template <typename T>
cudaError_t launchForHeadDim(const Params &p, cudaStream_t stream) {
  int vectors = p.headDim / kVec;
  if (vectors <= 4)
    return launchForItems<T, 4>(p, stream);
  if (vectors <= 8)
    return launchForItems<T, 8>(p, stream);
  if (vectors <= 16)
    return launchForItems<T, 16>(p, stream);
  return launchForItems<T, 32>(p, stream);
}

} // namespace

Status launchRopeKvWrite(const RopeKvArgs &a, cudaStream_t stream) {
  if (Status s = validateRopeKv(a); !s)
    return s;
  const RopeKvDims &d = a.dims;
  const int64_t numTokens = d.batch * d.seq;
  if (numTokens == 0)
    return Status::success();

  Params p{};
  p.qkv = a.qkv;
  p.qOut = a.qOut;
  p.kvLens = a.kvLens;
  p.posIds = a.posIds;
  p.seqLens = a.seqLens;
  p.cosSin = a.cosSin.data;
  p.cosSinTableStride =
      a.cosSin.cacheBatch == 1 ? 0 : a.cosSin.maxPos * d.rotaryDim;
  p.maxPos = a.cosSin.maxPos;
  p.norm = a.qkNorm.enabled();
  p.qWeight = a.qkNorm.qWeight;
  p.kWeight = a.qkNorm.kWeight;
  p.eps = a.qkNorm.eps;
  p.invHeadDim = 1.0f / float(d.headDim);
  p.paged = a.cache.layout == KvCacheLayout::Paged;
  p.kCache = a.cache.k;
  p.vCache = a.cache.v;
  p.blockTables = a.cache.blockTables;
  p.blockStride = p.paged ? a.pagedBlockStride() : 0;
  p.numBlocks = a.cache.numBlocks;
  p.maxBlocksPerSeq = a.cache.maxBlocksPerSeq;
  p.capacity = a.cache.capacity;
  p.blockSize = uint32_t(p.paged ? a.cache.blockSize : 1);
  p.seq = uint32_t(d.seq);
  p.numTokens = uint32_t(numTokens);
  p.numHeads = int32_t(a.numHeads());
  p.numQHeads = d.numQHeads;
  p.numKvHeads = d.numKvHeads;
  p.headDim = d.headDim;
  p.rotaryDim = d.rotaryDim;
  p.variant = a.variant;
  p.neox = d.pairing == RopePairingKind::Neox;

  cudaError_t err = d.dtype == ActDType::BF16
                        ? launchForHeadDim<__nv_bfloat16>(p, stream)
                        : launchForHeadDim<__half>(p, stream);
  return cudaStatus(err, (std::string("rope_kv_write(") +
                          ropeKvVariantName(a.variant) + ") launch")
                             .c_str());
}

Status ropeKvWritePacked(const RopeKvDims &dims, void *qkv,
                         const CosSinCache &cosSin, const QkNormParams &qkNorm,
                         const KvCacheView &cache, const int32_t *seqLens,
                         cudaStream_t stream) {
  return launchRopeKvWrite(
      RopeKvArgs::packed(dims, qkv, cosSin, qkNorm, cache, seqLens), stream);
}

Status ropeKvWriteContinuous(const RopeKvDims &dims, const void *qkv,
                             void *qOut, const int32_t *kvLens,
                             const CosSinCache &cosSin,
                             const QkNormParams &qkNorm,
                             const KvCacheView &cache, const int32_t *seqLens,
                             cudaStream_t stream) {
  return launchRopeKvWrite(RopeKvArgs::continuous(dims, qkv, qOut, kvLens,
                                                  cosSin, qkNorm, cache,
                                                  seqLens),
                           stream);
}

Status ropeKvWriteTree(const RopeKvDims &dims, const void *qkv, void *qOut,
                       const int32_t *kvLens, const int32_t *posIds,
                       const CosSinCache &cosSin, const QkNormParams &qkNorm,
                       const KvCacheView &cache, const int32_t *seqLens,
                       cudaStream_t stream) {
  return launchRopeKvWrite(RopeKvArgs::tree(dims, qkv, qOut, kvLens, posIds,
                                            cosSin, qkNorm, cache, seqLens),
                           stream);
}

} // namespace strata::kernels

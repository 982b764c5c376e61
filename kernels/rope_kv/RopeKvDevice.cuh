// Device pieces shared by the two rope_kv_write kernels (RopeKvWrite.cu:
// one thread group per token's heads, registers only; RopeKvStreamed.cu:
// bulk copies through shared memory): the launch parameters, 16-byte
// vector packing, the cache slot of a token and the rotation of one vector.
#ifndef STRATA_KERNELS_ROPE_KV_ROPEKVDEVICE_CUH
#define STRATA_KERNELS_ROPE_KV_ROPEKVDEVICE_CUH

#include "kernels/common/DeviceLimits.h"
#include "kernels/common/RopeKvTypes.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace strata::kernels::rope_detail {

constexpr int kVec = 8; // elements of a 16-byte vector

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

/// What a head of a token row is, and for a K or V head with a cache slot
/// where its cache row starts (null for q heads and slots without storage).
/// kOffset, headStride and vDelta are those of CacheSlot.
template <typename T> struct HeadTarget {
  bool isQ, isV;
  T *cacheRow;

  __device__ __forceinline__ HeadTarget(const Params &p, int32_t head,
                                        int64_t kOffset, int64_t headStride,
                                        int64_t vDelta) {
    isQ = head < p.numQHeads;
    isV = head >= p.numQHeads + p.numKvHeads;
    const int32_t kvHead =
        isV ? head - p.numQHeads - p.numKvHeads : head - p.numQHeads;
    cacheRow = nullptr;
    if (!isQ && kOffset >= 0)
      cacheRow = static_cast<T *>(isV && p.paged ? p.vCache : p.kCache) +
                 kOffset + kvHead * headStride + (isV ? vDelta : 0);
  }
};

// One 16-byte global store. Written as a plain uint4 assignment, the
// vectors built by Vec::pack were stored as four 4-byte stores (each
// touching a quarter of every sector, four times the store requests).
__device__ __forceinline__ void store16(void *dst, const uint4 &v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

/// The lanes of thread `tid`'s group of kLanes (a power of two up to 32):
/// shuffles stay inside the group, since other groups of the warp may have
/// left or be on another head.
template <int kLanes>
__device__ __forceinline__ unsigned groupMask(unsigned tid) {
  if constexpr (kLanes == 32)
    return 0xffffffffu;
  else
    return ((1u << kLanes) - 1u) << ((tid % 32) & ~(kLanes - 1));
}

/// QK-norm: the RMSNorm factor of a head from this lane's sum of squares,
/// summed over the group.
template <int kLanes>
__device__ __forceinline__ float rmsScale(const Params &p, unsigned mask,
                                          float sumSq) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    sumSq += __shfl_xor_sync(mask, sumSq, offset, kLanes);
  return rsqrtf(sumSq * p.invHeadDim + p.eps);
}

/// This lane's cos/sin factors for the 8 elements it owns (zero when it
/// does not rotate). Neox lanes [0, 2 * lanesPerHalf) rotate their 8
/// elements against the partner lane's (the first half subtracts the
/// partner's sine term); gptj lanes below rotaryDim / 8 rotate the 4
/// adjacent pairs of their vector. `load4(i)` returns row elements
/// i..i+3 of the token's cos/sin row.
struct LaneRotation {
  bool rotating = false;
  int partner = 0; // neox: the lane owning the paired elements
  float c[kVec], s[kVec];

  static __device__ __forceinline__ bool rotates(const Params &p, int lane) {
    return p.neox ? lane < p.rotaryDim / kVec : lane * kVec < p.rotaryDim;
  }
  static __device__ __forceinline__ int partnerOf(const Params &p, int lane) {
    const int lanesPerHalf = p.rotaryDim / (2 * kVec);
    if (!p.neox || !rotates(p, lane))
      return lane;
    return lane < lanesPerHalf ? lane + lanesPerHalf : lane - lanesPerHalf;
  }

  template <typename Load4>
  __device__ __forceinline__ LaneRotation(const Params &p, int lane,
                                          Load4 load4) {
    const int32_t half = p.rotaryDim / 2;
    const int lanesPerHalf = p.rotaryDim / (2 * kVec);
    const bool first = lane < lanesPerHalf;
    rotating = rotates(p, lane);
    partner = partnerOf(p, lane);
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      c[i] = s[i] = 0.0f;
    if (!rotating)
      return;
    const int i0 = p.neox ? (first ? lane : partner) * kVec : lane * (kVec / 2);
    const int n = p.neox ? kVec : kVec / 2;
    const float sign = p.neox && first ? -1.0f : 1.0f;
#pragma unroll
    for (int h = 0; h < kVec; h += 4) {
      if (h < n) {
        const float4 c4 = load4(i0 + h);
        const float4 s4 = load4(half + i0 + h);
        c[h] = c4.x, c[h + 1] = c4.y, c[h + 2] = c4.z, c[h + 3] = c4.w;
        s[h] = sign * s4.x, s[h + 1] = sign * s4.y, s[h + 2] = sign * s4.z,
        s[h + 3] = sign * s4.w;
      }
    }
  }

  /// Rotates x in place; y holds the partner lane's (normalised) elements
  /// under neox and is unused under gptj.
  __device__ __forceinline__ void apply(const Params &p, float (&x)[kVec],
                                        const float (&y)[kVec]) const {
    if (!rotating)
      return;
    if (p.neox) {
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        x[i] = x[i] * c[i] + y[i] * s[i];
      return;
    }
    // GPT-J pairs (2i, 2i+1) lie inside one vector.
#pragma unroll
    for (int i = 0; i < kVec / 2; ++i) {
      const float x1 = x[2 * i];
      const float x2 = x[2 * i + 1];
      x[2 * i] = x1 * c[i] - x2 * s[i];
      x[2 * i + 1] = x2 * c[i] + x1 * s[i];
    }
  }
};

/// Launches the streamed kernel (RopeKvStreamed.cu) over all of p's tokens;
/// p.numTokens, p.numHeads and the operands must be set, the group fields
/// of the per-thread kernel are not used.
cudaError_t launchStreamed(const Params &p, bool bf16, const DeviceLimits &dev,
                           cudaStream_t stream);

} // namespace strata::kernels::rope_detail

#endif // STRATA_KERNELS_ROPE_KV_ROPEKVDEVICE_CUH

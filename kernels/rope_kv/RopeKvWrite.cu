// The per-thread rope_kv_write kernel, and the launchers of RopeKvWrite.h,
// which send large launches to the streamed kernel (RopeKvStreamed.cu).
//
// A group of kLanes threads handles up to kItems heads of one token; each
// thread owns 8 consecutive elements (one 16-byte vector) of a head, so a
// group covers headDim <= 8 * kLanes and every global access is a full
// 16-byte vector. A thread issues all its head loads before any use, and
// the per-token work (positions, cos/sin, block-table lookup) is done once
// per group: the shortest chain for a launch of a few tokens. The variant, the
// pairing, QK-norm and the cache layout are run-time flags: they are uniform
// per launch, so the branches cost nothing next to the memory traffic, and the
// template is instantiated only per dtype, group width and heads per group (16
// kernels).
#include "kernels/rope_kv/RopeKvWrite.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/rope_kv/RopeKvDevice.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <string>

namespace strata::kernels {

namespace {

using namespace rope_detail;

constexpr int kThreads = 256;
// Heads per thread group: 4 for large launches (more loads in flight per
// thread); 1 when the launch is small (decode), where the latency of one
// group's serial chain, not bandwidth, decides the time.
constexpr int kWideItems = 4;

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
  const unsigned mask = groupMask<kLanes>(threadIdx.x);

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

  const float *cs =
      p.cosSin + (p.cosSinTableStride ? int64_t(b) : 0) * p.cosSinTableStride +
      pos * p.rotaryDim;
  const LaneRotation rot(p, lane, [&](int i) {
    return __ldg(reinterpret_cast<const float4 *>(cs + i));
  });

#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int32_t head = g + j * p.groupsPerToken;
    if (head >= p.numHeads)
      break; // uniform across the group
    const HeadTarget<T> target(p, head, cache.kOffset, cache.headStride,
                               cache.vDelta);
    const bool isQ = target.isQ, isV = target.isV;
    T *const cacheDst =
        target.cacheRow ? target.cacheRow + lane * kVec : nullptr;
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
      const float scale = rmsScale<kLanes>(p, mask, sumSq);
      float w[kVec];
      Vec<T>::unpack(wRaw, w);
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        x[i] = x[i] * scale * w[i];
    }

    // Neox: element i pairs with i + rotaryDim / 2, owned by the partner
    // lane.
    float y[kVec];
    if (p.neox) {
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        y[i] = __shfl_sync(mask, x[i], rot.partner, kLanes);
    }
    rot.apply(p, x, y);
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
  if (int64_t(p.numTokens) * p.numHeads < kStreamedMinHeadTokens)
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

Status launchRopeKvWrite(const RopeKvArgs &a, cudaStream_t stream,
                         RopeKvKernel kernel) {
  if (Status s = validateRopeKv(a); !s)
    return s;
  if (Status s = requireDeviceActDType("rope_kv_write", a.dims.dtype); !s)
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

  const bool bf16 = d.dtype == ActDType::BF16;
  if (kernel == RopeKvKernel::Auto)
    kernel = numTokens * p.numHeads < kStreamedMinHeadTokens
                 ? RopeKvKernel::PerThread
                 : RopeKvKernel::Streamed;
  cudaError_t err;
  if (kernel == RopeKvKernel::Streamed) {
    DeviceLimits dev;
    if (Status s = currentDeviceLimits(dev); !s)
      return s;
    err = launchStreamed(p, bf16, dev, stream);
  } else {
    err = bf16 ? launchForHeadDim<__nv_bfloat16>(p, stream)
               : launchForHeadDim<__half>(p, stream);
  }
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

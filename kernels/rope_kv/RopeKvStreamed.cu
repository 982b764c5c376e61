// The streamed rope_kv_write kernel: the large-launch path (prefill,
// extend, long tree verifies) of the launchers in RopeKvWrite.h.
//
// Why it exists. The per-thread kernel (RopeKvWrite.cu) issues each
// thread's loads, waits for them, rotates and stores: an SM has loads in
// flight only in the first phase of each block, and every group starts
// with a chain of dependent index loads (lengths, block table, cos/sin).
// It reaches about two thirds of the copy bandwidth. Here the loads are
// decoupled from the arithmetic:
//  - A producer warp streams work items (one token's heads, or a chunk of
//    them when the row exceeds kMaxChunkBytes) into a ring of kStages
//    shared-memory stages with bulk copies (cp.async.bulk), each stage
//    completing on an mbarrier once its bytes have landed. One copy moves
//    a whole row (12 KB for 32 q / 8 kv heads of 128), so a few threads
//    keep tens of kilobytes in flight per SM without holding registers.
//  - The producer's 32 lanes resolve the index lookups of 32 items at once
//    (lengths, position, block-table entry) and then copy each item's
//    cos/sin row into its stage next to the activations.
//  - Four consumer warps rotate the stage in shared memory and store the
//    results with 16-byte stores, then release the stage (empty barrier).
// The grid is persistent: each block takes items blockIdx.x, blockIdx.x +
// gridDim.x, ... so neighbouring blocks read neighbouring rows.
//
// A stage's full barrier expects two arrivals: the producer's arrival with
// the byte count, made when it issues the activation copy (before the
// per-token lookups are known), and a second one after it has written the
// item's cache offset to shared memory and issued the cos/sin copy, which
// publishes that offset to the consumers.
#include "kernels/rope_kv/RopeKvDevice.cuh"

#include "kernels/common/Barriers.cuh"
#include "kernels/common/Pdl.cuh"
#include "kernels/common/SmemLimit.h"

#include <algorithm>
#include <climits>

namespace strata::kernels::rope_detail {

namespace {

constexpr int kConsumerWarps = 4;
constexpr int kConsumers = 32 * kConsumerWarps;
constexpr int kStreamThreads = kConsumers + 32; // + the producer warp
constexpr int kStages = 4;
constexpr int kMaxBlocksPerSm = 4;
constexpr int64_t kMaxChunkBytes = 16384;

struct StreamParams {
  Params p;
  uint32_t numItems;
  uint32_t chunksPerToken;
  int32_t chunkHeads;
  uint32_t stageBytes; // activations (128-byte aligned), then cos/sin
  uint32_t csOffset;
  uint32_t csBytes;
};

/// Per-token values the producer resolves and the consumers read.
struct StageMeta {
  int64_t kOffset; // cache offset of kv head 0's K row; < 0: no cache slot
  int32_t write;   // 0: the token is padding or its position is invalid
  int32_t pad;
};

struct ItemLookup {
  int64_t kOffset = -1;
  int32_t write = 0;
  const float *csRow = nullptr;
};

/// The same per-token decisions as the per-thread kernel: padding, rotary
/// position, and the cache slot.
__device__ __forceinline__ ItemLookup lookupItem(const StreamParams &sp,
                                                 uint32_t item) {
  const Params &p = sp.p;
  ItemLookup r;
  r.csRow = p.cosSin; // a valid row to copy for items that write nothing
  const bool packed = p.variant == RopeKvVariant::Packed;
  const bool tree = p.variant == RopeKvVariant::Tree;
  const uint32_t token = item / sp.chunksPerToken;
  const uint32_t b = token / p.seq;
  const int64_t t = token - b * p.seq;
  const int32_t seqLen = p.seqLens ? __ldg(p.seqLens + b) : INT_MAX;
  const int32_t kvLen = packed ? 0 : __ldg(p.kvLens + b);
  const int32_t posId = tree ? __ldg(p.posIds + token) : 0;
  if (t >= seqLen)
    return r;
  const int64_t slot = packed ? t : int64_t(kvLen) + t;
  const int64_t pos = tree ? posId : slot;
  if (pos < 0 || pos >= p.maxPos)
    return r;
  r.write = 1;
  r.kOffset = cacheSlot(p, b, slot).kOffset;
  r.csRow = p.cosSin +
            (p.cosSinTableStride ? int64_t(b) : 0) * p.cosSinTableStride +
            pos * p.rotaryDim;
  return r;
}

__device__ __forceinline__ uint4 loadShared16(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

struct Ring {
  uint32_t stages; // shared address of stage 0
  uint32_t full;   // shared address of full[0]; empty[0] follows full[]
  StageMeta *meta;
  uint32_t stageBytes;

  __device__ uint32_t stage(uint32_t s) const {
    return stages + s * stageBytes;
  }
  __device__ uint32_t fullBar(uint32_t s) const { return full + 8 * s; }
  __device__ uint32_t emptyBar(uint32_t s) const {
    return full + 8 * (kStages + s);
  }
};

template <typename T>
__device__ void produce(const StreamParams &sp, const Ring &ring, int lane) {
  const Params &p = sp.p;
  const uint32_t stride = gridDim.x;
  const uint32_t myItems = (sp.numItems - blockIdx.x + stride - 1) / stride;
  auto itemOf = [&](uint32_t i) { return blockIdx.x + i * stride; };
  // Claims stage i % kStages for local item i and starts its activation copy.
  auto start = [&](uint32_t i) {
    const uint32_t s = i % kStages;
    if (i >= kStages)
      mbarWait(ring.emptyBar(s), ((i / kStages) - 1) & 1);
    const uint32_t item = itemOf(i);
    const uint32_t token = item / sp.chunksPerToken;
    const int32_t h0 =
        int32_t(item - token * sp.chunksPerToken) * sp.chunkHeads;
    const int32_t heads = min(sp.chunkHeads, p.numHeads - h0);
    const uint32_t bytes = uint32_t(heads * p.headDim * int32_t(sizeof(T)));
    const T *src = static_cast<const T *>(p.qkv) +
                   (int64_t(token) * p.numHeads + h0) * p.headDim;
    mbarArriveExpectTx(ring.fullBar(s), bytes + sp.csBytes);
    bulkCopyToShared(ring.stage(s), src, bytes, ring.fullBar(s));
  };
  // The first stages' activation copies need no per-token value.
  const uint32_t early = min(myItems, uint32_t(kStages));
  if (lane == 0)
    for (uint32_t i = 0; i < early; ++i)
      start(i);
  for (uint32_t base = 0; base < myItems; base += 32) {
    ItemLookup mine;
    if (base + lane < myItems)
      mine = lookupItem(sp, itemOf(base + lane));
    const uint32_t n = min(32u, myItems - base);
    for (uint32_t j = 0; j < n; ++j) {
      const int64_t kOffset = __shfl_sync(~0u, mine.kOffset, j);
      const int32_t write = __shfl_sync(~0u, mine.write, j);
      const auto csRow = reinterpret_cast<const float *>(__shfl_sync(
          ~0u, reinterpret_cast<unsigned long long>(mine.csRow), j));
      if (lane != 0)
        continue;
      const uint32_t i = base + j, s = i % kStages;
      if (i >= early)
        start(i);
      ring.meta[s] = StageMeta{kOffset, write, 0};
      bulkCopyToShared(ring.stage(s) + sp.csOffset, csRow, sp.csBytes,
                       ring.fullBar(s));
      mbarArrive(ring.fullBar(s));
    }
  }
}

/// A consumer lane's unit of a head: under neox the pair of vectors u and
/// u + P (P = rotaryDim / 16) for u < P, which rotate into each other, then
/// the vectors from rotaryDim / 8 on, one per unit; under gptj every vector
/// is a unit (its pairs lie inside it). Holding both halves of a pair, a
/// lane loads, normalises and rotates each element once and shares the
/// cos/sin values between them.
struct Unit {
  int v0 = 0;          // the unit's (first) vector
  int v1 = -1;         // neox: the paired vector; -1 for a single vector
  bool active = false; // lanes past the head's units idle
  bool rotating = false;

  __device__ Unit(const Params &p, int lane) {
    const int pairs = p.neox ? p.rotaryDim / (2 * kVec) : 0;
    active = lane < p.headDim / kVec - pairs;
    if (lane < pairs) {
      v0 = lane;
      v1 = lane + pairs;
      rotating = true;
    } else {
      v0 = lane + pairs;
      rotating = !p.neox && v0 * kVec < p.rotaryDim;
    }
  }
};

/// Units per head: the lane group width the kernel is instantiated for.
int unitsPerHead(const Params &p) {
  return p.headDim / kVec - (p.neox ? p.rotaryDim / (2 * kVec) : 0);
}

/// QK-norm weights of a lane's one or two vectors, the same for every head
/// and item: loaded once.
struct NormWeights {
  uint4 q0{}, k0{}, q1{}, k1{};
};

// Selected word by word: a conditional over the structs themselves would
// take their addresses and put them in local memory.
__device__ __forceinline__ uint4 select(bool first, const uint4 &a,
                                        const uint4 &b) {
  return make_uint4(first ? a.x : b.x, first ? a.y : b.y, first ? a.z : b.z,
                    first ? a.w : b.w);
}

template <typename T>
__device__ NormWeights loadNormWeights(const Params &p, const Unit &u) {
  NormWeights w;
  if (!p.norm || !u.active)
    return w;
  auto at = [](const void *weights, int v) {
    return __ldg(reinterpret_cast<const uint4 *>(
        static_cast<const T *>(weights) + v * kVec));
  };
  w.q0 = at(p.qWeight, u.v0);
  w.k0 = at(p.kWeight, u.v0);
  if (u.v1 >= 0) {
    w.q1 = at(p.qWeight, u.v1);
    w.k1 = at(p.kWeight, u.v1);
  }
  return w;
}

/// Rotates and stores one stage: consumer thread `ctid` owns unit
/// ctid % kLanes of heads h0 + ctid / kLanes, then of every kConsumers /
/// kLanes heads after it.
template <typename T, int kLanes>
__device__ __forceinline__ void
consumeStage(const StreamParams &sp, const Ring &ring, uint32_t s,
             uint32_t item, const StageMeta &m, const Unit &u,
             const NormWeights &nw, int ctid) {
  const Params &p = sp.p;
  constexpr int kGroups = kConsumers / kLanes;
  const unsigned mask = groupMask<kLanes>(ctid);
  const bool packed = p.variant == RopeKvVariant::Packed;
  const bool paired = u.v1 >= 0;
  const uint32_t token = item / sp.chunksPerToken;
  const int32_t h0 = int32_t(item - token * sp.chunksPerToken) * sp.chunkHeads;
  const int32_t h1 = min(h0 + sp.chunkHeads, p.numHeads);
  const uint32_t stage = ring.stage(s);

  // cos/sin of the unit: frequencies 8 v0 .. 8 v0 + 7 for a neox pair,
  // 4 v0 .. 4 v0 + 3 for a gptj vector.
  float c[kVec], sn[kVec];
  if (u.rotating) {
    const int half = p.rotaryDim / 2;
    const int f0 = paired ? u.v0 * kVec : u.v0 * (kVec / 2);
#pragma unroll
    for (int h = 0; h < kVec; h += 4) {
      if (paired || h == 0) {
        const uint4 cv = loadShared16(stage + sp.csOffset + 4 * (f0 + h));
        const uint4 sv =
            loadShared16(stage + sp.csOffset + 4 * (half + f0 + h));
        c[h] = __uint_as_float(cv.x), c[h + 1] = __uint_as_float(cv.y);
        c[h + 2] = __uint_as_float(cv.z), c[h + 3] = __uint_as_float(cv.w);
        sn[h] = __uint_as_float(sv.x), sn[h + 1] = __uint_as_float(sv.y);
        sn[h + 2] = __uint_as_float(sv.z), sn[h + 3] = __uint_as_float(sv.w);
      }
    }
  }
  const int64_t headStride =
      p.paged ? int64_t(p.blockSize) * p.headDim : p.capacity * p.headDim;
  const int64_t vDelta = p.paged ? 0 : p.numKvHeads * headStride;

  for (int32_t head = h0 + ctid / kLanes; head < h1; head += kGroups) {
    const uint32_t row = stage + uint32_t((head - h0) * p.headDim) * sizeof(T);
    uint4 raw0{}, raw1{};
    if (u.active) {
      raw0 = loadShared16(row + u.v0 * 16);
      if (paired)
        raw1 = loadShared16(row + u.v1 * 16);
    }
    const HeadTarget<T> target(p, head, m.kOffset, headStride, vDelta);
    const bool isQ = target.isQ, isV = target.isV;
    T *const cacheRow = target.cacheRow;
    if (isV) {
      if (cacheRow && u.active) {
        store16(cacheRow + u.v0 * kVec, raw0);
        if (paired)
          store16(cacheRow + u.v1 * kVec, raw1);
      }
      continue;
    }

    float x[kVec], y[kVec];
    Vec<T>::unpack(raw0, x);
    Vec<T>::unpack(raw1, y);
    if (p.norm) {
      float sumSq = 0.0f;
#pragma unroll
      for (int i = 0; i < kVec; ++i)
        sumSq += x[i] * x[i] + y[i] * y[i]; // y is zero unless paired
      const float scale = rmsScale<kLanes>(p, mask, sumSq);
      float w0[kVec], w1[kVec];
      Vec<T>::unpack(select(isQ, nw.q0, nw.k0), w0);
      Vec<T>::unpack(select(isQ, nw.q1, nw.k1), w1);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        x[i] = x[i] * scale * w0[i];
        y[i] = y[i] * scale * w1[i];
      }
    }
    if (u.rotating && paired) {
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const float xi = x[i], yi = y[i];
        x[i] = xi * c[i] - yi * sn[i];
        y[i] = yi * c[i] + xi * sn[i];
      }
    } else if (u.rotating) {
#pragma unroll
      for (int i = 0; i < kVec / 2; ++i) {
        const float x1 = x[2 * i], x2 = x[2 * i + 1];
        x[2 * i] = x1 * c[i] - x2 * sn[i];
        x[2 * i + 1] = x2 * c[i] + x1 * sn[i];
      }
    }
    if (!u.active)
      continue;

    T *out = nullptr;
    if (packed)
      out = static_cast<T *>(p.qkv) +
            (int64_t(token) * p.numHeads + head) * p.headDim;
    else if (isQ)
      out = static_cast<T *>(p.qOut) +
            (int64_t(token) * p.numQHeads + head) * p.headDim;
    const uint4 out0 = Vec<T>::pack(x);
    const uint4 out1 = Vec<T>::pack(y);
    if (out) {
      store16(out + u.v0 * kVec, out0);
      if (paired)
        store16(out + u.v1 * kVec, out1);
    }
    if (cacheRow) {
      store16(cacheRow + u.v0 * kVec, out0);
      if (paired)
        store16(cacheRow + u.v1 * kVec, out1);
    }
  }
}

template <typename T, int kLanes>
__global__ void __launch_bounds__(kStreamThreads)
    ropeKvStreamedKernel(const __grid_constant__ StreamParams sp) {
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t base = uint32_t(__cvta_generic_to_shared(smem));
  Ring ring;
  ring.stages = base;
  ring.stageBytes = sp.stageBytes;
  ring.meta = reinterpret_cast<StageMeta *>(smem + kStages * sp.stageBytes);
  ring.full = base + kStages * sp.stageBytes + kStages * sizeof(StageMeta);
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s) {
      mbarInit(ring.fullBar(s), 2);
      mbarInit(ring.emptyBar(s), kConsumerWarps);
    }
    mbarInitFence();
  }
  __syncthreads();
  pdlWait();
  pdlLaunchDependents();

  const int warp = threadIdx.x / 32;
  if (warp == kConsumerWarps) {
    produce<T>(sp, ring, threadIdx.x % 32);
    return;
  }
  const Unit unit(sp.p, threadIdx.x % kLanes);
  const NormWeights nw = loadNormWeights<T>(sp.p, unit);
  uint32_t i = 0;
  for (uint32_t item = blockIdx.x; item < sp.numItems; item += gridDim.x, ++i) {
    const uint32_t s = i % kStages;
    mbarWait(ring.fullBar(s), (i / kStages) & 1);
    const StageMeta m = ring.meta[s];
    if (m.write)
      consumeStage<T, kLanes>(sp, ring, s, item, m, unit, nw, threadIdx.x);
    __syncwarp();
    if (threadIdx.x % 32 == 0)
      mbarArrive(ring.emptyBar(s));
  }
}

template <typename T, int kLanes>
cudaError_t launchLanes(const StreamParams &sp, unsigned blocks, size_t smem,
                        cudaStream_t stream) {
  auto kernel = ropeKvStreamedKernel<T, kLanes>;
  // A per-function setting, legal under stream capture.
  if (cudaError_t e = ensureDynamicSmem(kernel, int(smem)); e != cudaSuccess)
    return e;
  return launchDependent(kernel, dim3(blocks), dim3(kStreamThreads), smem,
                         stream, sp);
}

template <typename T>
cudaError_t launchTyped(const StreamParams &sp, unsigned blocks, size_t smem,
                        cudaStream_t stream) {
  const int vectors = unitsPerHead(sp.p);
  if (vectors <= 4)
    return launchLanes<T, 4>(sp, blocks, smem, stream);
  if (vectors <= 8)
    return launchLanes<T, 8>(sp, blocks, smem, stream);
  if (vectors <= 16)
    return launchLanes<T, 16>(sp, blocks, smem, stream);
  return launchLanes<T, 32>(sp, blocks, smem, stream);
}

uint32_t alignUp(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

} // namespace

cudaError_t launchStreamed(const Params &p, bool bf16, const DeviceLimits &dev,
                           cudaStream_t stream) {
  StreamParams sp{};
  sp.p = p;
  const int64_t headBytes = int64_t(p.headDim) * 2; // fp16 and bf16 alike
  const int32_t maxChunkHeads =
      int32_t(std::max<int64_t>(1, kMaxChunkBytes / headBytes));
  sp.chunksPerToken =
      uint32_t((p.numHeads + maxChunkHeads - 1) / maxChunkHeads);
  sp.chunkHeads =
      int32_t((p.numHeads + sp.chunksPerToken - 1) / sp.chunksPerToken);
  sp.numItems = p.numTokens * sp.chunksPerToken;
  sp.csOffset = alignUp(uint32_t(sp.chunkHeads * headBytes), 128);
  sp.csBytes = uint32_t(p.rotaryDim) * 4;
  sp.stageBytes = alignUp(sp.csOffset + sp.csBytes, 128);
  const size_t smem =
      size_t(kStages) * (sp.stageBytes + sizeof(StageMeta) + 16);
  // Each resident block also reserves 1 KB of the SM's shared memory.
  const int perSm =
      std::clamp(int(dev.smemPerSm / (smem + 1024)), 1, kMaxBlocksPerSm);
  const unsigned blocks =
      unsigned(std::min<uint64_t>(sp.numItems, uint64_t(dev.sms) * perSm));
  return bf16 ? launchTyped<__nv_bfloat16>(sp, blocks, smem, stream)
              : launchTyped<__half>(sp, blocks, smem, stream);
}

} // namespace strata::kernels::rope_detail

// Decode-shape linear layers (m <= 16 tokens) on tensor cores, streaming the
// weights once through a cp.async ring in shared memory.
//
// Access pattern. A stage holds kRows rows of w and the m rows of x over
// 256 values of k (512 bytes per row). Warp w copies rows w, w + 4, ...:
// one copy instruction moves 512 contiguous bytes of one row. That matters
// more than anything else here: a plain read of the same weights is
// markedly slower when each instruction reads 64 bytes from each of 8 rows
// (a layout in which every thread reads back exactly what it copied), at
// the same occupancy (strata-bench-dense, "linear read-only" rows). Each
// block also starts its walk along k at a different chunk (blockIdx * 7
// modulo the chunk count), so that the blocks in flight do not all read
// the same columns of their rows at once.
//
// MMA mapping. Rows of w are the M side of mma.sync m16n8k16, tokens its N
// side (one n-tile of 8 tokens, two for 9..16). Fragments come from the
// stage through ldmatrix; a row's 16-byte vector v is stored at v ^ (row %
// 8) within its group of 8, so that the 8 rows of one ldmatrix matrix hit 8
// different bank groups. Warp w takes the 16-wide k steps w, w + 4, w + 8
// and w + 12 of each stage (split-K inside the block) and the 4 partial
// sums are added through shared memory at the end, where the bias and
// residual epilogue runs.
//
// Streaming. The bytes in flight decide the speed of a decode GEMV: an SM
// must keep tens of kilobytes of loads outstanding to cover DRAM latency.
// cp.async fills a ring of kStages stages without holding registers, so the
// depth is set by shared memory. The launcher picks the deepest ring (3 to
// 10 stages) that still lets every block of the grid be resident at once
// (one wave for the 4096- and 6144-row projections), since such a grid is
// too small to hide a second wave's ramp. One __syncthreads per stage hands
// the copies of all warps to all warps and frees the oldest slot. (Bulk
// copies of whole 512-byte row segments per stage (cp.async.bulk) were
// slower: at that size the copy engine's issue rate, not DRAM, bounds
// them.)
//
// Dependent launch: the weights are read-only for the whole program, so
// the first kStages-1 stages of w are requested before pdlWait(); under a
// programmatic dependent launch they stream in while the previous kernel
// (the one producing x) finishes.
#include "kernels/gemm/Gemm.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/DeviceLimits.h"
#include "kernels/common/MmaSync.cuh"
#include "kernels/common/Pdl.cuh"
#include "kernels/common/SmemLimit.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

namespace strata::kernels {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kVecBytes = 16;
constexpr int kChunkVecs = 32; // 16-byte vectors of k per row and stage
constexpr int kRowBytes = kChunkVecs * kVecBytes;
constexpr uint32_t kBlockStagger = 7;

template <typename T> __device__ __forceinline__ float toF(T v) {
  return static_cast<float>(v);
}
template <typename T> __device__ __forceinline__ T fromF(float f);
template <> __device__ __forceinline__ __nv_bfloat16 fromF(float f) {
  return __float2bfloat16_rn(f);
}
template <> __device__ __forceinline__ __half fromF(float f) {
  return __float2half_rn(f);
}

struct GemvParams {
  const uint4 *x; // [m, k/8]
  const uint4 *w; // [n, k/8]
  const void *bias;
  const void *residual;
  void *y;
  int m, n, kv; // kv = k / 8
  bool f32Out;
};

/// Bytes of one stage of a block with `rowTiles` 16-row tiles and m
/// tokens: 512 bytes of k per w row and per token.
__host__ __device__ constexpr int stageBytes(int rowTiles, int m) {
  return (16 * rowTiles + m) * kRowBytes;
}

// kRowTiles 16-row tiles of w per block, a ring of kStages stages.
template <typename T, int kRowTiles, int kStages>
__global__ void __launch_bounds__(kThreads) gemvKernel(GemvParams p) {
  static_assert(kStages >= 3, "the wait below keeps kStages - 2 in flight");
  constexpr int kRows = 16 * kRowTiles;
  extern __shared__ __align__(128) uint8_t ring[];
  __shared__ float partial[kWarps][kRows][17];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t row0 = int64_t(blockIdx.x) * kRows;
  const int rows = kRows + p.m; // rows of a stage: w rows, then tokens
  const uint32_t base = uint32_t(__cvta_generic_to_shared(ring));
  const int chunks = (p.kv + kChunkVecs - 1) / kChunkVecs;
  const int rot = int(uint32_t(blockIdx.x) * kBlockStagger % uint32_t(chunks));

  // Where vector v (of kChunkVecs) of stage row r lives in slot s.
  auto at = [&](int s, int r, int v) {
    return base +
           uint32_t(((s * rows + r) * kChunkVecs + (v ^ (r & 7))) * kVecBytes);
  };
  // Stage `it` holds chunk (it + rot) mod chunks; this lane's vector of it.
  auto vecOf = [&](int it) {
    const int c = it + rot;
    return (c >= chunks ? c - chunks : c) * kChunkVecs + lane;
  };
  // Rows past n read row n-1 (their results are dropped).
  auto issueW = [&](int it) {
    if (it >= chunks)
      return;
    const int v = vecOf(it);
    const bool ok = v < p.kv;
#pragma unroll
    for (int i = 0; i < kRows / kWarps; ++i) {
      const int r = warp + i * kWarps;
      const int64_t row = min(row0 + r, int64_t(p.n) - 1);
      cpAsync16(at(it % kStages, r, lane), p.w + row * p.kv + (ok ? v : 0), ok);
    }
  };
  auto issueX = [&](int it) {
    if (it >= chunks)
      return;
    const int v = vecOf(it);
    const bool ok = v < p.kv;
    for (int tok = warp; tok < p.m; tok += kWarps)
      cpAsync16(at(it % kStages, kRows + tok, lane),
                p.x + int64_t(tok) * p.kv + (ok ? v : 0), ok);
  };

  // Weights first: they do not depend on the previous kernel. One group
  // per stage of w, then one per stage of x, then one per iteration: stage
  // it is complete once all but the newest kStages - 2 groups are.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    issueW(s);
    cpAsyncCommit();
  }
  pdlWait();
  pdlLaunchDependents();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    issueX(s);
    cpAsyncCommit();
  }

  // ldmatrix roles: A rows lane % 16 of a tile at k vector 2 ks + lane / 16;
  // B tokens lane % 8 (+ 8) at k vector 2 ks + (lane / 8) % 2. Tokens past
  // m read token m-1 (their columns are dropped).
  const int aRow = lane % 16, aHalf = lane / 16;
  const int bHalf = (lane / 8) % 2;
  const int bTok0 = min(lane % 8, p.m - 1), bTok1 = min(8 + lane % 8, p.m - 1);
  const bool twoTokTiles = p.m > 8;
  float acc[kRowTiles][2][4] = {};
  for (int it = 0; it < chunks; ++it) {
    cpAsyncWait<kStages - 2>();
    // Every warp's copies of stage it are visible, and every warp is done
    // with stage it - 1, whose slot the next copies overwrite.
    __syncthreads();
    issueW(it + kStages - 1);
    issueX(it + kStages - 1);
    cpAsyncCommit();
    const int s = it % kStages;
#pragma unroll
    for (int q = 0; q < kChunkVecs / 2 / kWarps; ++q) {
      const int ks = warp + q * kWarps; // 16-wide k step of the chunk
      uint32_t b0[2], b1[2] = {0, 0};
      ldmatrixX2(b0, at(s, kRows + bTok0, 2 * ks + bHalf));
      if (twoTokTiles)
        ldmatrixX2(b1, at(s, kRows + bTok1, 2 * ks + bHalf));
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r) {
        uint32_t a[4];
        ldmatrixX4(a, at(s, 16 * r + aRow, 2 * ks + aHalf));
        mma16816<T>(acc[r][0], a, b0[0], b0[1]);
        if (twoTokTiles)
          mma16816<T>(acc[r][1], a, b1[0], b1[1]);
      }
    }
  }
  cpAsyncWait<0>();

  // Accumulator element (row g + 8*(e/2), token 8*j + 2t + (e%2)) of each
  // tile.
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        partial[warp][16 * r + g + 8 * (e / 2)][8 * j + 2 * t + (e % 2)] =
            acc[r][j][e];
  __syncthreads();

  // Consecutive threads take consecutive rows of one token: the stores of a
  // token's outputs are contiguous.
  for (int i = threadIdx.x; i < kRows * p.m; i += kThreads) {
    int r = i % kRows, tok = i / kRows;
    int64_t row = row0 + r;
    if (row >= p.n)
      continue;
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      s += partial[w][r][tok];
    int64_t o = int64_t(tok) * p.n + row;
    if (p.f32Out) {
      static_cast<float *>(p.y)[o] = s;
      continue;
    }
    if (p.bias)
      s += toF(static_cast<const T *>(p.bias)[row]);
    if (p.residual)
      s += toF(static_cast<const T *>(p.residual)[o]);
    static_cast<T *>(p.y)[o] = fromF<T>(s);
  }
}

template <typename T, int kRowTiles, int kStages>
Status launchRing(const GemvParams &p, unsigned blocks, size_t smem,
                  cudaStream_t stream) {
  auto kernel = gemvKernel<T, kRowTiles, kStages>;
  // A per-function setting, not a stream operation: legal under capture.
  STRATA_CUDA_RETURN_IF_ERROR(ensureDynamicSmem(kernel, int(smem)),
                              "gemm(gemv): shared memory limit");
  return cudaStatus(
      launchDependent(kernel, dim3(blocks), dim3(kThreads), smem, stream, p),
      "gemm(gemv) launch");
}

template <typename T, int kRowTiles>
Status launchRows(const GemvParams &p, const DeviceLimits &dev,
                  cudaStream_t stream) {
  constexpr int kRows = 16 * kRowTiles;
  const unsigned blocks = unsigned((p.n + kRows - 1) / kRows);
  const size_t perStage = size_t(stageBytes(kRowTiles, p.m));
  const size_t staticBytes = size_t(kWarps) * kRows * 17 * 4 + 1024;
  // Blocks each SM must hold for the grid to be resident at once; grids too
  // large for that run in waves with a moderate ring. A resident grid takes
  // its whole share of shared memory: the deeper ring keeps more bytes in
  // flight, and it leaves no room for an early block of the next kernel
  // beside it. Such a block could only prefetch before its dependency wait,
  // taking bandwidth from the grid that is still streaming.
  const unsigned perSm = (blocks + dev.sms - 1) / dev.sms;
  int stages = 4;
  if (perSm <= 4) {
    size_t budget = size_t(dev.smemPerSm) / perSm - staticBytes;
    budget = std::min(budget, size_t(dev.smemPerBlockOptin) - staticBytes);
    stages = budget >= 10 * perStage  ? 10
             : budget >= 8 * perStage ? 8
             : budget >= 6 * perStage ? 6
             : budget >= 4 * perStage ? 4
                                      : 3;
  }
  const size_t smem = size_t(stages) * perStage;
  switch (stages) {
  case 10:
    return launchRing<T, kRowTiles, 10>(p, blocks, smem, stream);
  case 8:
    return launchRing<T, kRowTiles, 8>(p, blocks, smem, stream);
  case 6:
    return launchRing<T, kRowTiles, 6>(p, blocks, smem, stream);
  case 4:
    return launchRing<T, kRowTiles, 4>(p, blocks, smem, stream);
  default:
    return launchRing<T, kRowTiles, 3>(p, blocks, smem, stream);
  }
}

/// The share of the last wave's block slots a grid of n / (16 rowTiles)
/// blocks fills, one block per SM per wave.
double lastWaveFill(int n, int rowTiles, int sms) {
  const int64_t blocks = (int64_t(n) + 16 * rowTiles - 1) / (16 * rowTiles);
  const int64_t waves = (blocks + sms - 1) / sms;
  return double(blocks) / double(waves * sms);
}

template <typename T>
Status launchTyped(const GemvParams &p, cudaStream_t stream) {
  DeviceLimits dev;
  if (Status s = currentDeviceLimits(dev); !s)
    return s;
  // Two row tiles per warp halve how often x is fetched per weight byte;
  // worth it once x is more than a quarter of the ring. A third tile is
  // taken when it balances the SMs clearly better: 6144 rows in 32-row
  // blocks leave 72 of 132 SMs with one block and 60 with two, in 48-row
  // blocks every SM but four holds one.
  int rowTiles = p.m > 4 ? 2 : 1;
  double fill = lastWaveFill(p.n, rowTiles, dev.sms);
  for (int rt = rowTiles + 1; rt <= 3; ++rt) {
    const double f = lastWaveFill(p.n, rt, dev.sms);
    if (f > fill + 0.05) {
      rowTiles = rt;
      fill = f;
    }
  }
  switch (rowTiles) {
  case 1:
    return launchRows<T, 1>(p, dev, stream);
  case 2:
    return launchRows<T, 2>(p, dev, stream);
  default:
    return launchRows<T, 3>(p, dev, stream);
  }
}

} // namespace

namespace {

/// Why gemvLinear cannot take `a` (which checkGemmArgs accepted); empty
/// when it can.
std::string gemvRefusal(const GemmArgs &a) {
  if (a.m < 1 || a.m > 16)
    return "m must be in [1, 16], got " + std::to_string(a.m);
  if (a.k % 8 != 0)
    return "k must be a multiple of 8, got " + std::to_string(a.k);
  if (a.k / 8 > INT32_MAX / 4 || a.n > INT32_MAX)
    return "n or k too large for 32-bit indexing";
  for (const void *ptr :
       {a.x, a.w, a.bias, a.residual, static_cast<const void *>(a.y)})
    if (reinterpret_cast<uintptr_t>(ptr) & 15u)
      return "operands must be 16-byte aligned";
  return {};
}

} // namespace

bool gemvSupports(const GemmArgs &a) { return gemvRefusal(a).empty(); }

Status gemvLinear(const GemmArgs &a, cudaStream_t stream) {
  if (Status s = checkGemmArgs(a); !s)
    return s;
  if (std::string why = gemvRefusal(a); !why.empty())
    return Status::error("gemm(gemv): " + why);
  GemvParams p{static_cast<const uint4 *>(a.x),
               static_cast<const uint4 *>(a.w),
               a.bias,
               a.residual,
               a.y,
               int(a.m),
               int(a.n),
               int(a.k / 8),
               a.f32Out};
  return a.dtype == ActDType::BF16 ? launchTyped<__nv_bfloat16>(p, stream)
                                   : launchTyped<__half>(p, stream);
}

} // namespace strata::kernels

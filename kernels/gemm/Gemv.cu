// Decode-shape linear layers (m <= 16 tokens) on tensor cores, streaming the
// weights once through a cp.async ring in shared memory.
//
// MMA mapping. A warp computes 16-row slices of w (kRowTiles of them)
// against all tokens with mma.sync m16n8k16: w rows are the MMA's M side,
// tokens its N side (one n-tile of 8 tokens, two for 9..16). A dot product
// does not care in which order k is summed, so thread (g = lane/4,
// t = lane%4) takes k = 8t..8t+7 of each 32-wide chunk for w rows g and g+8
// and for token g; the first four values play the fragment's
// k = {2t, 2t+1, 2t+8, 2t+9} of one MMA and the last four those of a second.
// Every thread therefore reads back exactly the 16-byte vectors it copied
// itself: no shuffles, no barriers inside the loop, and a warp's 32 vectors
// of one row group are 512 contiguous bytes of shared memory (no bank
// conflicts).
//
// Streaming. The bytes in flight decide the speed of a decode GEMV: an SM
// must keep tens of kilobytes of loads outstanding to cover DRAM latency.
// Each warp owns a ring of kStages stages of kChunks chunks; cp.async fills
// the ring without holding registers, so the depth is set by shared
// memory. The launcher picks the deepest ring that still lets every block
// of the grid be resident at once (one wave for the 4096- and 6144-row
// projections), since such a grid is too small to hide a second wave's
// ramp. (Bulk copies of whole 512-byte row segments per stage
// (cp.async.bulk) were tried instead and measured 20-70% slower: at that
// size the copy engine's issue rate, not DRAM, bounds them. Leaving half
// of each SM to the next kernel's early blocks helped some shapes and hurt
// others.)
//
// Split-K inside the block: the 4 warps take interleaved 32-wide chunks of
// k for the same rows and add their partial sums through shared memory at
// the end, where the bias and residual epilogue runs.
//
// Dependent launch: the weights are read-only for the whole program, so
// the first kStages-1 stages of w are requested before pdlWait(); under a
// programmatic dependent launch they stream in while the previous kernel
// (the one producing x) finishes.
#include "kernels/gemm/Gemm.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/DeviceLimits.h"
#include "kernels/common/Pdl.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

namespace strata::kernels {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kChunks = 2; // 32-wide k chunks per warp per stage
constexpr int kVecBytes = 16;

template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0,
                                         uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// 16 bytes from global to shared; with valid == false the destination is
// zero-filled and nothing is read.
__device__ __forceinline__ void cpAsync16(uint32_t dst, const void *src,
                                          bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ uint4 ldShared16(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

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
/// tokens: per warp and chunk, one 64-byte row per w row and per token.
__host__ __device__ constexpr int stageBytes(int rowTiles, int m) {
  return kWarps * kChunks * (16 * rowTiles + m) * 64;
}

// kRowTiles 16-row tiles of w per block, a ring of kStages stages per warp.
template <typename T, int kRowTiles, int kStages>
__global__ void __launch_bounds__(kThreads) gemvKernel(GemvParams p) {
  constexpr int kRows = 16 * kRowTiles;
  extern __shared__ __align__(16) uint8_t ring[];
  __shared__ float partial[kWarps][kRows][17];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t row0 = int64_t(blockIdx.x) * kRows;
  const int rows = kRows + p.m; // 64-byte rows per chunk in the ring
  const uint32_t warpBase = uint32_t(__cvta_generic_to_shared(ring)) +
                            uint32_t(warp * kStages * kChunks * rows * 64);

  // Rows past n read row n-1 (results dropped).
  const uint4 *wRow[kRowTiles][2];
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int64_t row = row0 + 16 * r + g + 8 * h;
      wRow[r][h] = p.w + (row < p.n ? row : p.n - 1) * int64_t(p.kv);
    }
  const bool tok0 = g < p.m, tok1 = g + 8 < p.m;
  const uint4 *xRow0 = p.x + int64_t(tok0 ? g : 0) * p.kv;
  const uint4 *xRow1 = p.x + int64_t(tok1 ? g + 8 : 0) * p.kv;

  const int chunks = (p.kv + 3) / 4;
  const int perIter = kWarps * kChunks;
  const int iters = (chunks + perIter - 1) / perIter;

  auto slot = [&](int it, int j, int r) {
    return warpBase +
           uint32_t((((it % kStages) * kChunks + j) * rows + r) * 4 + t) *
               kVecBytes;
  };
  // This thread's 16-byte vector of k in chunk j of iteration it.
  auto vecOf = [&](int it, int j) {
    return ((it * kChunks + j) * kWarps + warp) * 4 + t;
  };
  auto issueW = [&](int it) {
    if (it >= iters)
      return;
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      int v = vecOf(it, j);
      bool ok = v < p.kv;
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          cpAsync16(slot(it, j, 16 * r + g + 8 * h), wRow[r][h] + (ok ? v : 0),
                    ok);
    }
  };
  auto issueX = [&](int it) {
    if (it >= iters)
      return;
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      int v = vecOf(it, j);
      bool ok = v < p.kv;
      if (tok0)
        cpAsync16(slot(it, j, kRows + g), xRow0 + (ok ? v : 0), ok);
      if (tok1)
        cpAsync16(slot(it, j, kRows + 8 + g), xRow1 + (ok ? v : 0), ok);
    }
  };

  // Weights first: they do not depend on the previous kernel.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    issueW(s);
    cpAsyncCommit();
  }
  pdlWait();
  pdlLaunchDependents();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s)
    issueX(s);
  cpAsyncCommit();

  const bool twoTokTiles = p.m > 8;
  float acc[kRowTiles][2][4] = {};
  for (int it = 0; it < iters; ++it) {
    issueW(it + kStages - 1);
    issueX(it + kStages - 1);
    cpAsyncCommit();
    // Groups so far: w of stages 0..S-2, x of those stages, then one group
    // per iteration. Iteration 0 needs the first two kinds (all but the
    // newest group); later ones need their own group, S-1 groups back.
    if (it == 0)
      cpAsyncWait<1>();
    else
      cpAsyncWait<kStages - 1>();
#pragma unroll
    for (int j = 0; j < kChunks; ++j) {
      uint4 x0 = tok0 ? ldShared16(slot(it, j, kRows + g)) : uint4{};
      uint4 x1 = tok1 ? ldShared16(slot(it, j, kRows + 8 + g)) : uint4{};
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r) {
        uint4 a = ldShared16(slot(it, j, 16 * r + g));
        uint4 b = ldShared16(slot(it, j, 16 * r + g + 8));
        mma16816<T>(acc[r][0], a.x, b.x, a.y, b.y, x0.x, x0.y);
        mma16816<T>(acc[r][0], a.z, b.z, a.w, b.w, x0.z, x0.w);
        if (twoTokTiles) {
          mma16816<T>(acc[r][1], a.x, b.x, a.y, b.y, x1.x, x1.y);
          mma16816<T>(acc[r][1], a.z, b.z, a.w, b.w, x1.z, x1.w);
        }
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
  // Raising the dynamic shared memory limit is a per-function setting, not
  // a stream operation; done on every call it stays legal under capture.
  STRATA_CUDA_RETURN_IF_ERROR(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           int(smem)),
      "gemm(gemv): shared memory limit");
  return cudaStatus(launchDependent(kernel, dim3(blocks), dim3(kThreads), smem,
                                    stream, p),
                    "gemm(gemv) launch");
}

template <typename T, int kRowTiles>
Status launchRows(const GemvParams &p, cudaStream_t stream) {
  DeviceLimits dev;
  if (Status s = currentDeviceLimits(dev); !s)
    return s;
  constexpr int kRows = 16 * kRowTiles;
  const unsigned blocks = unsigned((p.n + kRows - 1) / kRows);
  const size_t perStage = size_t(stageBytes(kRowTiles, p.m));
  const size_t staticBytes = size_t(kWarps) * kRows * 17 * 4 + 1024;
  // Blocks each SM must hold for the grid to be resident at once; grids too
  // large for that run in waves with a moderate ring.
  const unsigned perSm = (blocks + dev.sms - 1) / dev.sms;
  int stages = 4;
  if (perSm <= 4) {
    size_t budget = size_t(dev.smemPerSm) / perSm - staticBytes;
    budget = std::min(budget, size_t(dev.smemPerBlockOptin) - staticBytes);
    stages = budget >= 8 * perStage   ? 8
             : budget >= 6 * perStage ? 6
             : budget >= 4 * perStage ? 4
                                      : 3;
  }
  const size_t smem = size_t(stages) * perStage;
  switch (stages) {
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

template <typename T>
Status launchTyped(const GemvParams &p, cudaStream_t stream) {
  // Two row tiles per warp halve how often x is fetched per weight byte;
  // worth it once x is more than a quarter of the ring.
  return p.m > 4 ? launchRows<T, 2>(p, stream) : launchRows<T, 1>(p, stream);
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

// Lightning prefill: chunked linear attention with per-head decay.
//
// A block owns one (sequence, head, slice of DV value columns) and walks the
// sequence in chunks of kChunk tokens, carrying its [headDim, DV] slice of
// the state in fp32 MMA accumulators. Value columns are independent in every
// product (o[:, j] and S[:, j] need only v[:, j] and S[:, j]), so slicing
// them multiplies the blocks of a long single sequence at the cost of
// recomputing Q K^T once per slice. Within a chunk of L tokens starting from
// state S0, with lambda = exp(-s_h) and r, u chunk-local token indices:
//   o_r = lambda^(r+1) q_r S0 + sum_{u<=r} lambda^(r-u) (q_r . k_u) v_u
//   S   = lambda^L S0 + sum_{u<L} lambda^(L-1-u) k_u^T v_u
// Every power is exp(-s_h * n) for 0 <= n <= kChunk, read from a table: no
// factor is ever divided out, so large rates underflow to 0 instead of
// overflowing. The next chunk's q, k, v are fetched with cp.async while the
// current one is computed.
//
// Warp w of 4 computes output rows 16w..16w+15 of the chunk and state rows
// w*HD/4 .. (w+1)*HD/4-1; the causal mask lets warp w skip score tiles past
// its rows.
#include "kernels/common/CudaCheck.h"
#include "kernels/common/SmemLimit.h"
#include "kernels/linear_attention/LightningAttention.h"
#include "kernels/linear_attention/LightningDevice.cuh"

namespace strata::kernels {
namespace {

using namespace lightning;

constexpr int kChunk = 64;
constexpr int kPrefillThreads = 128;

struct PrefillParams {
  const void *q, *k, *v;
  void *out;
  float *state;
  const int32_t *slots;
  const float *decay;
  const int32_t *cuSeqLens;
  int32_t numHeads;
  int64_t qStride, kStride, vStride, outStride;
};

/// Shared memory of one block; rows are padded by 16 bytes so that the 8
/// row addresses of one ldmatrix fall into distinct banks.
template <int HD, int DV> struct PrefillSmem {
  static constexpr int kQKStride = HD + 8;
  static constexpr int kVStride = DV + 8;
  static constexpr int kSStride = DV + 8;
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + 2 * kChunk * kQKStride;
  static constexpr int kV = kK + 2 * kChunk * kQKStride;
  static constexpr int kS = kV + 2 * kChunk * kVStride;
  static constexpr int kHalves = kS + HD * kSStride;
  static constexpr size_t kBytes = kHalves * 2 + (kChunk + 4) * sizeof(float);
};

template <typename T, int HD, int DV>
__global__ void __launch_bounds__(kPrefillThreads, 2)
    lightningPrefillKernel(PrefillParams p) {
  using Smem = PrefillSmem<HD, DV>;
  constexpr int kSlices = HD / DV;
  constexpr int MT = HD / 64; // 16-row state tiles per warp
  constexpr int NT = DV / 8;  // 8-column tiles of the value slice
  constexpr int KQ = HD / 16; // 16-wide steps over the key dim
  constexpr int QKS = Smem::kQKStride, VS = Smem::kVStride, SS = Smem::kSStride;

  const int64_t bid = blockIdx.x;
  const int slice = static_cast<int>(bid % kSlices);
  const int h = static_cast<int>((bid / kSlices) % p.numHeads);
  const int64_t b = bid / kSlices / p.numHeads;
  const int32_t slot = p.slots[b];
  if (slot < 0)
    return;
  const int64_t begin = p.cuSeqLens[b];
  const int64_t len = p.cuSeqLens[b + 1] - begin;
  if (len <= 0)
    return;

  extern __shared__ __align__(16) unsigned char smemRaw[];
  T *sQ = reinterpret_cast<T *>(smemRaw) + Smem::kQ;
  T *sK = reinterpret_cast<T *>(smemRaw) + Smem::kK;
  T *sV = reinterpret_cast<T *>(smemRaw) + Smem::kV;
  T *sS = reinterpret_cast<T *>(smemRaw) + Smem::kS;
  float *pw =
      reinterpret_cast<float *>(reinterpret_cast<T *>(smemRaw) + Smem::kHalves);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t4 = lane % 4;

  const float rate = p.decay[h];
  for (int i = tid; i <= kChunk; i += kPrefillThreads)
    pw[i] = expf(-rate * static_cast<float>(i));

  const T *gQ = static_cast<const T *>(p.q) + begin * p.qStride +
                static_cast<int64_t>(h) * HD;
  const T *gK = static_cast<const T *>(p.k) + begin * p.kStride +
                static_cast<int64_t>(h) * HD;
  const T *gV = static_cast<const T *>(p.v) + begin * p.vStride +
                static_cast<int64_t>(h) * HD + slice * DV;
  T *gO = static_cast<T *>(p.out) + begin * p.outStride +
          static_cast<int64_t>(h) * HD + slice * DV;
  float *gS = p.state +
              (static_cast<int64_t>(slot) * p.numHeads + h) * HD * HD +
              slice * DV;

  auto loadChunk = [&](int64_t c, int stage) {
    const int64_t t0 = c * kChunk;
    const int rows = len - t0 < kChunk ? static_cast<int>(len - t0) : kChunk;
    constexpr int kSegQK = HD / 8, kSegV = DV / 8;
    T *dq = sQ + stage * kChunk * QKS;
    T *dk = sK + stage * kChunk * QKS;
    T *dv = sV + stage * kChunk * VS;
#pragma unroll
    for (int i = tid; i < kChunk * kSegQK; i += kPrefillThreads) {
      int r = i / kSegQK, sg = i % kSegQK;
      bool ok = r < rows;
      int64_t tok = t0 + (ok ? r : 0);
      cpAsync16(dq + r * QKS + sg * 8, gQ + tok * p.qStride + sg * 8, ok);
      cpAsync16(dk + r * QKS + sg * 8, gK + tok * p.kStride + sg * 8, ok);
    }
#pragma unroll
    for (int i = tid; i < kChunk * kSegV; i += kPrefillThreads) {
      int r = i / kSegV, sg = i % kSegV;
      bool ok = r < rows;
      int64_t tok = t0 + (ok ? r : 0);
      cpAsync16(dv + r * VS + sg * 8, gV + tok * p.vStride + sg * 8, ok);
    }
  };

  // The state slice in C-fragment layout: tile (mt, j) covers state rows
  // mBase + 16 mt .. +15 and slice columns 8 j .. 8 j + 7.
  const int mBase = warp * (HD / 4);
  float sacc[MT][NT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      int row = mBase + mt * 16 + g, col = j * 8 + 2 * t4;
      float2 lo = *reinterpret_cast<const float2 *>(gS + row * HD + col);
      float2 hi = *reinterpret_cast<const float2 *>(gS + (row + 8) * HD + col);
      sacc[mt][j][0] = lo.x;
      sacc[mt][j][1] = lo.y;
      sacc[mt][j][2] = hi.x;
      sacc[mt][j][3] = hi.y;
    }

  // The state as a T operand [HD][DV] for the next chunk's q S0.
  auto storeStateSmem = [&]() {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        int row = mBase + mt * 16 + g, col = j * 8 + 2 * t4;
        *reinterpret_cast<uint32_t *>(sS + row * SS + col) =
            packFloat2<T>(sacc[mt][j][0], sacc[mt][j][1]);
        *reinterpret_cast<uint32_t *>(sS + (row + 8) * SS + col) =
            packFloat2<T>(sacc[mt][j][2], sacc[mt][j][3]);
      }
  };

  const int64_t nChunks = (len + kChunk - 1) / kChunk;
  loadChunk(0, 0);
  cpAsyncCommit();
  storeStateSmem();

  for (int64_t c = 0; c < nChunks; ++c) {
    const int stage = static_cast<int>(c & 1);
    if (c + 1 < nChunks) {
      loadChunk(c + 1, stage ^ 1);
      cpAsyncCommit();
      cpAsyncWait<1>();
    } else {
      cpAsyncWait<0>();
    }
    __syncthreads();

    const int L =
        len - c * kChunk < kChunk ? static_cast<int>(len - c * kChunk) : kChunk;
    const T *cQ = sQ + stage * kChunk * QKS;
    const T *cK = sK + stage * kChunk * QKS;
    const T *cV = sV + stage * kChunk * VS;
    const int r0 = warp * 16;

    uint32_t qa[KQ][4];
#pragma unroll
    for (int kk = 0; kk < KQ; ++kk)
      ldmatrixX4(qa[kk],
                 cQ + (r0 + lane % 16) * QKS + kk * 16 + (lane / 16) * 8);

    // Scores of this warp's rows against the chunk's keys (causal tiles).
    float pacc[kChunk / 8][4];
#pragma unroll
    for (int j = 0; j < kChunk / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        pacc[j][e] = 0.f;
#pragma unroll
    for (int jj = 0; jj < kChunk / 16; ++jj) {
      if (jj > warp)
        continue;
#pragma unroll
      for (int kk = 0; kk < KQ; ++kk) {
        uint32_t kb[4];
        ldmatrixX4(kb, cK + (jj * 16 + lane % 8 + (lane / 16) * 8) * QKS +
                           kk * 16 + ((lane / 8) % 2) * 8);
        mma16816<T>(pacc[2 * jj], qa[kk], kb[0], kb[1]);
        mma16816<T>(pacc[2 * jj + 1], qa[kk], kb[2], kb[3]);
      }
    }
    // Decay mask lambda^(r-u) for u <= r, 0 above the diagonal.
#pragma unroll
    for (int j = 0; j < kChunk / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int r = r0 + g + (e >= 2 ? 8 : 0);
        int u = j * 8 + 2 * t4 + (e & 1);
        pacc[j][e] = u <= r ? pacc[j][e] * pw[r - u] : 0.f;
      }

    // Inter-chunk part: q S0, then scaled by lambda^(r+1) per row.
    float oacc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        oacc[j][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KQ; ++kk)
#pragma unroll
      for (int jp = 0; jp < NT / 2; ++jp) {
        uint32_t sb[4];
        ldmatrixX4Trans(sb,
                        sS + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * SS +
                            jp * 16 + (lane / 16) * 8);
        mma16816<T>(oacc[2 * jp], qa[kk], sb[0], sb[1]);
        mma16816<T>(oacc[2 * jp + 1], qa[kk], sb[2], sb[3]);
      }
    {
      float f0 = pw[r0 + g + 1], f1 = pw[r0 + g + 9];
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        oacc[j][0] *= f0;
        oacc[j][1] *= f0;
        oacc[j][2] *= f1;
        oacc[j][3] *= f1;
      }
    }
    // Intra-chunk part: masked scores (C fragments reused as A fragments)
    // times V.
#pragma unroll
    for (int kk = 0; kk < kChunk / 16; ++kk) {
      if (kk > warp)
        continue;
      uint32_t pa[4] = {
          packFloat2<T>(pacc[2 * kk][0], pacc[2 * kk][1]),
          packFloat2<T>(pacc[2 * kk][2], pacc[2 * kk][3]),
          packFloat2<T>(pacc[2 * kk + 1][0], pacc[2 * kk + 1][1]),
          packFloat2<T>(pacc[2 * kk + 1][2], pacc[2 * kk + 1][3])};
#pragma unroll
      for (int jp = 0; jp < NT / 2; ++jp) {
        uint32_t vb[4];
        ldmatrixX4Trans(vb,
                        cV + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * VS +
                            jp * 16 + (lane / 16) * 8);
        mma16816<T>(oacc[2 * jp], pa, vb[0], vb[1]);
        mma16816<T>(oacc[2 * jp + 1], pa, vb[2], vb[3]);
      }
    }
    {
      const int64_t tok = c * kChunk + r0 + g;
      T *o0 = gO + tok * p.outStride + 2 * t4;
      T *o1 = o0 + 8 * p.outStride;
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        if (r0 + g < L)
          *reinterpret_cast<uint32_t *>(o0 + j * 8) =
              packFloat2<T>(oacc[j][0], oacc[j][1]);
        if (r0 + g + 8 < L)
          *reinterpret_cast<uint32_t *>(o1 + j * 8) =
              packFloat2<T>(oacc[j][2], oacc[j][3]);
      }
    }

    // State: S = lambda^L S0 + (lambda^(L-1-u) k_u)^T v_u, the key scale
    // applied to the A fragments in fp32 before rounding to T.
    {
      const float fL = pw[L];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            sacc[mt][j][e] *= fL;
    }
#pragma unroll
    for (int kk = 0; kk < kChunk / 16; ++kk) {
      if (kk * 16 >= L)
        break;
      const int u0 = kk * 16 + 2 * t4;
      auto w = [&](int u) { return u < L ? pw[L - 1 - u] : 0.f; };
      const float w00 = w(u0), w01 = w(u0 + 1), w10 = w(u0 + 8),
                  w11 = w(u0 + 9);
      uint32_t ka[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ldmatrixX4Trans(ka[mt],
                        cK + (kk * 16 + lane % 8 + (lane / 16) * 8) * QKS +
                            mBase + mt * 16 + ((lane / 8) % 2) * 8);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float2 f = unpackFloat2<T>(ka[mt][e]);
          float wa = e < 2 ? w00 : w10, wb = e < 2 ? w01 : w11;
          ka[mt][e] = packFloat2<T>(f.x * wa, f.y * wb);
        }
      }
#pragma unroll
      for (int jp = 0; jp < NT / 2; ++jp) {
        uint32_t vb[4];
        ldmatrixX4Trans(vb,
                        cV + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * VS +
                            jp * 16 + (lane / 16) * 8);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(sacc[mt][2 * jp], ka[mt], vb[0], vb[1]);
          mma16816<T>(sacc[mt][2 * jp + 1], ka[mt], vb[2], vb[3]);
        }
      }
    }
    __syncthreads(); // every warp is done with sS and this stage
    if (c + 1 < nChunks)
      storeStateSmem();
  }

#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      int row = mBase + mt * 16 + g, col = j * 8 + 2 * t4;
      *reinterpret_cast<float2 *>(gS + row * HD + col) =
          make_float2(sacc[mt][j][0], sacc[mt][j][1]);
      *reinterpret_cast<float2 *>(gS + (row + 8) * HD + col) =
          make_float2(sacc[mt][j][2], sacc[mt][j][3]);
    }
}

template <typename T, int HD, int DV>
Status launchPrefill(const LightningDims &d, const LightningTensors &t,
                     cudaStream_t stream) {
  using Smem = PrefillSmem<HD, DV>;
  auto kernel = lightningPrefillKernel<T, HD, DV>;
  STRATA_CUDA_RETURN_IF_ERROR(
      ensureDynamicSmem(kernel, static_cast<int>(Smem::kBytes)),
      "lightning_prefill: raising the shared memory limit");
  int64_t blocks = d.batch * d.numHeads * (HD / DV);
  if (blocks > 0x7fffffffLL)
    return Status::error("lightning_prefill: batch * numHeads too large");
  PrefillParams p{t.q,
                  t.k,
                  t.v,
                  t.out,
                  t.state,
                  t.slots,
                  t.decay,
                  t.cuSeqLens,
                  d.numHeads,
                  d.qTokenStride,
                  d.kTokenStride,
                  d.vTokenStride,
                  d.outTokenStride};
  kernel<<<static_cast<unsigned>(blocks), kPrefillThreads, Smem::kBytes,
           stream>>>(p);
  STRATA_CUDA_RETURN_IF_ERROR(cudaGetLastError(), "lightning_prefill launch");
  return Status::success();
}

template <typename T>
Status dispatchPrefill(const LightningDims &d, const LightningTensors &t,
                       int dvTile, cudaStream_t stream) {
  if (d.headDim == 128)
    return dvTile == 32 ? launchPrefill<T, 128, 32>(d, t, stream)
                        : launchPrefill<T, 128, 64>(d, t, stream);
  return dvTile == 64 ? launchPrefill<T, 64, 64>(d, t, stream)
                      : launchPrefill<T, 64, 32>(d, t, stream);
}

} // namespace

Status lightningPrefillTiled(const LightningDims &dims,
                             const LightningTensors &t, int dvTile,
                             cudaStream_t stream) {
  if (Status s = checkLightningArgs("lightning_prefill", dims, t, true); !s)
    return s;
  if (Status s = requireDeviceActDType("lightning_prefill", dims.dtype); !s)
    return s;
  if (dvTile != 0 && dvTile != 32 && dvTile != 64)
    return Status::error("lightning_prefill: value tile " +
                         std::to_string(dvTile) + " is not 0, 32 or 64");
  if (dims.batch == 0)
    return Status::success();
  LightningDims d = lightningResolvedDims(dims);
  if (dvTile == 0)
    dvTile = d.headDim == 128 ? 64 : 32;
  return d.dtype == ActDType::BF16
             ? dispatchPrefill<__nv_bfloat16>(d, t, dvTile, stream)
             : dispatchPrefill<__half>(d, t, dvTile, stream);
}

Status lightningPrefill(const LightningDims &dims, const LightningTensors &t,
                        cudaStream_t stream) {
  return lightningPrefillTiled(dims, t, 0, stream);
}

} // namespace strata::kernels

// Lightning decode: one token per sequence against its slot's fp32 state.
//
// The step reads and writes the whole state once (2 * headDim^2 * 4 bytes
// per head) and does 4 flops per state element, so it is bound by memory
// bandwidth. A block owns COLS value columns of one (sequence, head): output
// column j needs only column j of the state, and more blocks than (sequence,
// head) pairs keep all SMs streaming at small batch. Each thread issues all
// its 16-byte state loads before the first use so that enough bytes are in
// flight to cover DRAM latency.
#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/linear_attention/LightningAttention.h"
#include "kernels/linear_attention/LightningDevice.cuh"

namespace strata::kernels {
namespace {

using lightning::Half2Traits;

/// A 16-byte streaming (evict-first) load; with kPrefetch256 the L2 also
/// fetches the rest of the aligned 256-byte block, which the neighbouring
/// threads of the row (or the next slice's block) read next.
template <bool kPrefetch256>
__device__ __forceinline__ float4 loadState(const float *p) {
  if constexpr (kPrefetch256) {
    float4 r;
    asm volatile("ld.global.cs.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                 : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
                 : "l"(p));
    return r;
  } else {
    return __ldcs(reinterpret_cast<const float4 *>(p));
  }
}

template <typename T, int HD, int COLS, int THREADS, bool kPrefetch256>
__global__ void __launch_bounds__(THREADS)
    lightningDecodeKernel(const T *__restrict__ q, const T *__restrict__ k,
                          const T *__restrict__ v, T *__restrict__ out,
                          float *__restrict__ state,
                          const int32_t *__restrict__ slots,
                          const float *__restrict__ decay, int32_t numHeads,
                          int64_t qStride, int64_t kStride, int64_t vStride,
                          int64_t outStride) {
  pdlWait();
  pdlLaunchDependents();
  constexpr int kSlices = HD / COLS;
  constexpr int kThreadsPerRow = COLS / 4;
  constexpr int kRowsPerPass = THREADS / kThreadsPerRow;
  constexpr int kPasses = HD / kRowsPerPass;
  constexpr int kWarps = THREADS / 32;
  static_assert(COLS <= HD && HD % kRowsPerPass == 0, "bad decode tile");
  using Tr = Half2Traits<T>;

  const int64_t block = blockIdx.x;
  const int slice = static_cast<int>(block % kSlices);
  const int64_t seqHead = block / kSlices;
  const int h = static_cast<int>(seqHead % numHeads);
  const int64_t b = seqHead / numHeads;
  const int32_t slot = slots[b];
  if (slot < 0)
    return;

  const int tid = threadIdx.x;
  const int colGroup = tid % kThreadsPerRow;
  const int rowInPass = tid / kThreadsPerRow;
  const int col0 = slice * COLS + colGroup * 4;

  float *s = state + (static_cast<int64_t>(slot) * numHeads + h) * HD * HD;
  float4 st[kPasses];
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    int row = p * kRowsPerPass + rowInPass;
    st[p] = loadState<kPrefetch256>(s + row * HD + col0);
  }

  // float4 reads of sv and writes of red need 16-byte alignment.
  __shared__ float sq[HD], sk[HD];
  __shared__ __align__(16) float sv[COLS];
  __shared__ __align__(16) float red[kWarps][COLS];
  const T *qRow = q + b * qStride + static_cast<int64_t>(h) * HD;
  const T *kRow = k + b * kStride + static_cast<int64_t>(h) * HD;
  const T *vRow = v + b * vStride + static_cast<int64_t>(h) * HD;
  for (int i = tid; i < HD; i += THREADS) {
    sq[i] = Tr::toFloat(qRow[i]);
    sk[i] = Tr::toFloat(kRow[i]);
  }
  if (tid < COLS)
    sv[tid] = Tr::toFloat(vRow[slice * COLS + tid]);
  __syncthreads();

  const float lambda = expf(-decay[h]);
  const float4 vv = *reinterpret_cast<const float4 *>(&sv[colGroup * 4]);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    int row = p * kRowsPerPass + rowInPass;
    float ki = sk[row], qi = sq[row];
    float4 n;
    n.x = fmaf(lambda, st[p].x, ki * vv.x);
    n.y = fmaf(lambda, st[p].y, ki * vv.y);
    n.z = fmaf(lambda, st[p].z, ki * vv.z);
    n.w = fmaf(lambda, st[p].w, ki * vv.w);
    __stcs(reinterpret_cast<float4 *>(s + row * HD + col0), n);
    acc.x = fmaf(qi, n.x, acc.x);
    acc.y = fmaf(qi, n.y, acc.y);
    acc.z = fmaf(qi, n.z, acc.z);
    acc.w = fmaf(qi, n.w, acc.w);
  }

  // Lanes kThreadsPerRow apart hold the same columns.
#pragma unroll
  for (int off = kThreadsPerRow; off < 32; off *= 2) {
    acc.x += __shfl_xor_sync(0xffffffffu, acc.x, off);
    acc.y += __shfl_xor_sync(0xffffffffu, acc.y, off);
    acc.z += __shfl_xor_sync(0xffffffffu, acc.z, off);
    acc.w += __shfl_xor_sync(0xffffffffu, acc.w, off);
  }
  const int lane = tid % 32, warp = tid / 32;
  if (lane < kThreadsPerRow)
    *reinterpret_cast<float4 *>(&red[warp][lane * 4]) = acc;
  __syncthreads();
  if (tid < COLS) {
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      sum += red[w][tid];
    out[b * outStride + static_cast<int64_t>(h) * HD + slice * COLS + tid] =
        Tr::fromFloat(sum);
  }
}

template <typename T, int HD, int COLS, int THREADS, bool kPrefetch256>
Status launchDecode(const LightningDims &d, const LightningTensors &t,
                    cudaStream_t stream) {
  int64_t blocks = d.batch * d.numHeads * (HD / COLS);
  if (blocks > 0x7fffffffLL)
    return Status::error("lightning_decode: batch * numHeads too large");
  STRATA_CUDA_RETURN_IF_ERROR(
      launchDependent(lightningDecodeKernel<T, HD, COLS, THREADS, kPrefetch256>,
                      dim3(static_cast<unsigned>(blocks)), dim3(THREADS), 0,
                      stream, static_cast<const T *>(t.q),
                      static_cast<const T *>(t.k), static_cast<const T *>(t.v),
                      static_cast<T *>(t.out), t.state, t.slots, t.decay,
                      d.numHeads, d.qTokenStride, d.kTokenStride,
                      d.vTokenStride, d.outTokenStride),
      "lightning_decode launch");
  return Status::success();
}

template <typename T, int HD, bool kPrefetch256>
Status dispatchCols(const LightningDims &d, const LightningTensors &t, int cols,
                    cudaStream_t stream) {
  if constexpr (HD == 128)
    if (cols == 128)
      return launchDecode<T, HD, 128, 256, kPrefetch256>(d, t, stream);
  if (cols == 64)
    return launchDecode<T, HD, 64, 256, kPrefetch256>(d, t, stream);
  if (cols == 16)
    return launchDecode<T, HD, 16, 64, kPrefetch256>(d, t, stream);
  return launchDecode<T, HD, 32, 128, kPrefetch256>(d, t, stream);
}

template <typename T>
Status dispatchDecode(const LightningDims &d, const LightningTensors &t,
                      int cols, bool prefetch, cudaStream_t stream) {
  if (d.headDim == 128)
    return prefetch ? dispatchCols<T, 128, true>(d, t, cols, stream)
                    : dispatchCols<T, 128, false>(d, t, cols, stream);
  return prefetch ? dispatchCols<T, 64, true>(d, t, cols, stream)
                  : dispatchCols<T, 64, false>(d, t, cols, stream);
}

} // namespace

Status lightningDecodeTiled(const LightningDims &dims,
                            const LightningTensors &t, int cols,
                            bool prefetch256, cudaStream_t stream) {
  if (Status s = checkLightningArgs("lightning_decode", dims, t, false); !s)
    return s;
  if (Status s = requireDeviceActDType("lightning_decode", dims.dtype); !s)
    return s;
  if (cols != 0 && cols != 16 && cols != 32 && cols != 64 &&
      !(cols == 128 && dims.headDim == 128))
    return Status::error("lightning_decode: column tile " +
                         std::to_string(cols) +
                         " is not 0, 16, 32, 64 or 128 "
                         "(at most headDim)");
  if (dims.batch == 0)
    return Status::success();
  LightningDims d = lightningResolvedDims(dims);
  // 64 columns per block with 256 threads streams best once there are
  // enough blocks to fill the GPU; below that, 16 columns with 64 threads
  // give four times the blocks, and with few sequences the number of blocks
  // in flight, not their width, sets the latency (docs/benchmarks.md).
  if (cols == 0)
    cols = d.batch * d.numHeads >= 256 ? 64 : 16;
  return d.dtype == ActDType::BF16
             ? dispatchDecode<__nv_bfloat16>(d, t, cols, prefetch256, stream)
             : dispatchDecode<__half>(d, t, cols, prefetch256, stream);
}

Status lightningDecode(const LightningDims &dims, const LightningTensors &t,
                       cudaStream_t stream) {
  return lightningDecodeTiled(dims, t, 0, false, stream);
}

} // namespace strata::kernels

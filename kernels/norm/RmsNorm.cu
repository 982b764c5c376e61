// One kernel behind rmsNorm and addRmsNorm.
//
// A group of G threads (a power of two) owns one row and keeps it in
// registers: each thread holds up to kVecs 16-byte vectors, issued together
// before any use, so a row is read from memory once. G is the smallest
// power of two with G * kVecs * 8 >= cols: 4 threads for a 128-wide head
// (QK-norm; 64 rows per 256-thread block, reduced with shuffles), 128 for
// hidden 4096 (one row per block, reduced through shared memory).
#include "kernels/norm/RmsNorm.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/elementwise/Vec16.cuh"

#include <cmath>
#include <string>

namespace strata::kernels {

namespace {

constexpr int kVecs = 4;
constexpr int kSmallBlock = 256;
constexpr int64_t kMaxCols = 1024 * kVecs * 8;

template <typename T, bool kAdd, bool kSmall>
__global__ void __launch_bounds__(1024)
    rmsNormKernel(int64_t rows, int cols, int groupSize, const uint4 *x,
                  const uint4 *residual, const uint4 *w, float eps,
                  float xScale, float residualScale, uint4 *out, uint4 *sum) {
  pdlWait();
  pdlLaunchDependents();
  const int nvec = cols / 8;
  int64_t row;
  int lane;
  if constexpr (kSmall) {
    row = int64_t(blockIdx.x) * (kSmallBlock / groupSize) +
          threadIdx.x / groupSize;
    lane = threadIdx.x % groupSize;
  } else {
    row = blockIdx.x;
    lane = threadIdx.x;
  }
  const bool rowOk = row < rows;
  const int64_t base = (rowOk ? row : 0) * int64_t(nvec);

  uint4 raw[kVecs], rawRes[kVecs];
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    int v = lane + i * groupSize;
    if (rowOk && v < nvec) {
      raw[i] = __ldcs(x + base + v);
      if constexpr (kAdd)
        rawRes[i] = __ldcs(residual + base + v);
    }
  }

  float vals[kVecs][8];
  float sumSq = 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    int v = lane + i * groupSize;
    if (rowOk && v < nvec) {
      vec16::unpack<T>(raw[i], vals[i]);
      if constexpr (kAdd) {
        float r[8];
        vec16::unpack<T>(rawRes[i], r);
#pragma unroll
        for (int j = 0; j < 8; ++j)
          // Rounded products, no fused multiply-add: the same bits as
          // the CPU reference.
          vals[i][j] = __fadd_rn(__fmul_rn(xScale, vals[i][j]),
                                 __fmul_rn(residualScale, r[j]));
        // The stored sum is what the next layer adds to; normalise exactly
        // that rounded value.
        uint4 s = vec16::pack<T>(vals[i]);
        __stcs(sum + base + v, s);
        vec16::unpack<T>(s, vals[i]);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j)
        sumSq += vals[i][j] * vals[i][j];
    }
  }

  if constexpr (kSmall) {
    for (int offset = groupSize / 2; offset > 0; offset /= 2)
      sumSq += __shfl_xor_sync(0xffffffffu, sumSq, offset);
  } else {
    __shared__ float partial[32];
    for (int offset = 16; offset > 0; offset /= 2)
      sumSq += __shfl_xor_sync(0xffffffffu, sumSq, offset);
    if (threadIdx.x % 32 == 0)
      partial[threadIdx.x / 32] = sumSq;
    __syncthreads();
    sumSq = 0.f;
    for (int i = 0; i < groupSize / 32; ++i)
      sumSq += partial[i];
  }
  const float inv = rsqrtf(sumSq / float(cols) + eps);

#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    int v = lane + i * groupSize;
    if (rowOk && v < nvec) {
      float wv[8];
      vec16::unpack<T>(__ldg(w + v), wv);
#pragma unroll
      for (int j = 0; j < 8; ++j)
        vals[i][j] = vals[i][j] * inv * wv[j];
      __stcs(out + base + v, vec16::pack<T>(vals[i]));
    }
  }
}

bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <typename T, bool kAdd>
Status launchTyped(const char *op, int64_t rows, int64_t cols, const void *x,
                   const void *residual, const void *w, float eps,
                   float xScale, float residualScale, void *out, void *sum,
                   cudaStream_t stream) {
  int nvec = int(cols / 8);
  int groupSize = 1;
  while (groupSize * kVecs < nvec)
    groupSize *= 2;
  auto *xv = static_cast<const uint4 *>(x);
  auto *rv = static_cast<const uint4 *>(residual);
  auto *wv = static_cast<const uint4 *>(w);
  auto *ov = static_cast<uint4 *>(out);
  auto *sv = static_cast<uint4 *>(sum);
  cudaError_t err;
  if (groupSize <= 32) {
    int64_t rowsPerBlock = kSmallBlock / groupSize;
    int64_t blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
    err = launchDependent(rmsNormKernel<T, kAdd, true>, dim3(unsigned(blocks)),
                          dim3(kSmallBlock), 0, stream, rows, int(cols),
                          groupSize, xv, rv, wv, eps, xScale, residualScale,
                          ov, sv);
  } else {
    err = launchDependent(rmsNormKernel<T, kAdd, false>, dim3(unsigned(rows)),
                          dim3(groupSize), 0, stream, rows, int(cols),
                          groupSize, xv, rv, wv, eps, xScale, residualScale,
                          ov, sv);
  }
  return cudaStatus(err, (std::string(op) + " launch").c_str());
}

Status launch(const char *op, ActDType dtype, int64_t rows, int64_t cols,
              const void *x, const void *residual, const void *w, float eps,
              float xScale, float residualScale, void *out, void *sum,
              cudaStream_t stream) {
  std::string name = op;
  if (Status s = requireDeviceActDType(op, dtype); !s)
    return s;
  if (rows < 0 || cols < 8 || cols % 8 != 0 || cols > kMaxCols)
    return Status::error(name +
                         ": rows must be >= 0 and cols a multiple of "
                         "8 in [8, " +
                         std::to_string(kMaxCols) + "], got " +
                         std::to_string(rows) + " x " + std::to_string(cols));
  if (rows > int64_t(0x7fffffff))
    return Status::error(name + ": more than 2^31 rows");
  bool add = residual != nullptr;
  if (!x || !w || !out || (add && !sum))
    return Status::error(name + ": null operand");
  for (const void *p : {x, residual, w, static_cast<const void *>(out),
                        static_cast<const void *>(sum)})
    if (p && !aligned16(p))
      return Status::error(name + ": operands must be 16-byte aligned");
  if (!(eps >= 0.f))
    return Status::error(name + ": eps must be >= 0");
  if (!std::isfinite(xScale) || !std::isfinite(residualScale))
    return Status::error(name + ": the sum's scales must be finite");
  if (rows == 0)
    return Status::success();
  auto typed = dtype == ActDType::BF16
                   ? (add ? launchTyped<__nv_bfloat16, true>
                          : launchTyped<__nv_bfloat16, false>)
                   : (add ? launchTyped<__half, true>
                          : launchTyped<__half, false>);
  return typed(op, rows, cols, x, residual, w, eps, xScale, residualScale, out,
               sum, stream);
}

} // namespace

Status rmsNorm(ActDType dtype, int64_t rows, int64_t cols, const void *x,
               const void *w, float eps, void *out, cudaStream_t stream) {
  return launch("rms_norm", dtype, rows, cols, x, nullptr, w, eps, 1.f, 1.f,
                out, nullptr, stream);
}

Status addRmsNorm(ActDType dtype, int64_t rows, int64_t cols, const void *x,
                  const void *residual, const void *w, float eps,
                  float xScale, float residualScale, void *out, void *sum,
                  cudaStream_t stream) {
  if (!residual)
    return Status::error("add_rms_norm: null operand");
  return launch("add_rms_norm", dtype, rows, cols, x, residual, w, eps, xScale,
                residualScale, out, sum, stream);
}

} // namespace strata::kernels

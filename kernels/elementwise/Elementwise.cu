// One kernel behind the elementwise launchers: an op applied to a 2-D
// strided view [rows, cols] (row strides in elements), so the fused gate_up
// layout needs no separate pass. Each thread moves two 16-byte vectors per
// operand when every size and address allows, else single elements.
#include "kernels/elementwise/Elementwise.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/elementwise/Vec16.cuh"

#include <string>

namespace strata::kernels {

namespace {

enum class Op { SiluMul, Silu, SigmoidMul, Add };

constexpr int kThreads = 256;
constexpr int kPerThread = 2;

struct View {
  int64_t rows, cols; // cols in elements, or in vectors when vectorised
  int64_t aStride, bStride, outStride;
  float aScale = 1.f, bScale = 1.f; // Add only
};

template <Op kOp>
__device__ __forceinline__ float apply(float a, float b, const View &v) {
  if constexpr (kOp == Op::SiluMul)
    return a / (1.0f + expf(-a)) * b;
  else if constexpr (kOp == Op::Silu)
    return a / (1.0f + expf(-a));
  else if constexpr (kOp == Op::SigmoidMul)
    return b / (1.0f + expf(-a));
  else
    // No fused multiply-add: the same bits as the CPU reference.
    return __fadd_rn(__fmul_rn(v.aScale, a), __fmul_rn(v.bScale, b));
}

template <typename T, Op kOp>
__global__ void __launch_bounds__(kThreads)
    vectorKernel(View v, const uint4 *a, const uint4 *b, uint4 *out) {
  pdlWait();
  pdlLaunchDependents();
  int64_t total = v.rows * v.cols;
  int64_t first = (int64_t(blockIdx.x) * kThreads * kPerThread) + threadIdx.x;
  uint4 ra[kPerThread], rb[kPerThread];
  int64_t offA[kPerThread], offB[kPerThread], offO[kPerThread];
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    int64_t i = first + u * kThreads;
    int64_t r = i / v.cols, c = i % v.cols;
    offA[u] = r * v.aStride + c;
    offB[u] = r * v.bStride + c;
    offO[u] = r * v.outStride + c;
    if (i < total) {
      ra[u] = __ldcs(a + offA[u]);
      if constexpr (kOp != Op::Silu)
        rb[u] = __ldcs(b + offB[u]);
    }
  }
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    if (first + u * kThreads >= total)
      continue;
    float x[8], y[8] = {};
    vec16::unpack<T>(ra[u], x);
    if constexpr (kOp != Op::Silu)
      vec16::unpack<T>(rb[u], y);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      x[j] = apply<kOp>(x[j], y[j], v);
    __stcs(out + offO[u], vec16::pack<T>(x));
  }
}

template <typename T, Op kOp>
__global__ void __launch_bounds__(kThreads)
    scalarKernel(View v, const T *a, const T *b, T *out) {
  pdlWait();
  pdlLaunchDependents();
  int64_t total = v.rows * v.cols;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * kThreads) {
    int64_t r = i / v.cols, c = i % v.cols;
    float x = vec16::toFloat(a[r * v.aStride + c]);
    float y = kOp == Op::Silu ? 0.f : vec16::toFloat(b[r * v.bStride + c]);
    out[r * v.outStride + c] = vec16::fromFloat<T>(apply<kOp>(x, y, v));
  }
}

bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <typename T, Op kOp>
Status launchTyped(const std::string &op, View v, const void *a, const void *b,
                   void *out, cudaStream_t stream) {
  bool vec = v.cols % 8 == 0 && v.aStride % 8 == 0 && v.bStride % 8 == 0 &&
             v.outStride % 8 == 0 && aligned16(a) && aligned16(out) &&
             (!b || aligned16(b));
  cudaError_t err;
  if (vec) {
    View vv{v.rows,        v.cols / 8, v.aStride / 8, v.bStride / 8,
            v.outStride / 8, v.aScale,   v.bScale};
    int64_t perBlock = int64_t(kThreads) * kPerThread;
    int64_t blocks = (vv.rows * vv.cols + perBlock - 1) / perBlock;
    if (blocks > 0x7fffffff)
      return Status::error(op + ": tensor too large");
    err = launchDependent(vectorKernel<T, kOp>, dim3(unsigned(blocks)),
                          dim3(kThreads), 0, stream, vv,
                          static_cast<const uint4 *>(a),
                          static_cast<const uint4 *>(b),
                          static_cast<uint4 *>(out));
  } else {
    int64_t blocks = (v.rows * v.cols + kThreads - 1) / kThreads;
    blocks = blocks < 65536 ? blocks : 65536;
    err = launchDependent(scalarKernel<T, kOp>, dim3(unsigned(blocks)),
                          dim3(kThreads), 0, stream, v,
                          static_cast<const T *>(a), static_cast<const T *>(b),
                          static_cast<T *>(out));
  }
  return cudaStatus(err, (op + " launch").c_str());
}

template <Op kOp>
Status launch(const char *op, ActDType dtype, View v, const void *a,
              const void *b, void *out, cudaStream_t stream) {
  std::string name = op;
  if (Status s = requireDeviceActDType(op, dtype); !s)
    return s;
  if (v.rows < 0 || v.cols < 0)
    return Status::error(name + ": negative size");
  if (!a || !out || (kOp != Op::Silu && !b))
    return Status::error(name + ": null operand");
  if (v.rows == 0 || v.cols == 0)
    return Status::success();
  return dtype == ActDType::BF16
             ? launchTyped<__nv_bfloat16, kOp>(name, v, a, b, out, stream)
             : launchTyped<__half, kOp>(name, v, a, b, out, stream);
}

View flat(int64_t n) { return View{1, n, n, n, n}; }

} // namespace

Status siluMul(ActDType dtype, int64_t n, const void *gate, const void *up,
               void *out, cudaStream_t stream) {
  return launch<Op::SiluMul>("silu_mul", dtype, flat(n), gate, up, out, stream);
}

Status siluMulFused(ActDType dtype, int64_t rows, int64_t cols,
                    const void *gateUp, void *out, cudaStream_t stream) {
  if (!gateUp)
    return Status::error("silu_mul(fused): null operand");
  const void *up = static_cast<const uint16_t *>(gateUp) + cols;
  return launch<Op::SiluMul>("silu_mul(fused)", dtype,
                             View{rows, cols, 2 * cols, 2 * cols, cols}, gateUp,
                             up, out, stream);
}

Status silu(ActDType dtype, int64_t n, const void *x, void *out,
            cudaStream_t stream) {
  return launch<Op::Silu>("silu", dtype, flat(n), x, nullptr, out, stream);
}

Status sigmoidMul(ActDType dtype, int64_t n, const void *gate, const void *x,
                  void *out, cudaStream_t stream) {
  return launch<Op::SigmoidMul>("sigmoid_mul", dtype, flat(n), gate, x, out,
                                stream);
}

Status add(ActDType dtype, int64_t n, const void *a, const void *b,
           float aScale, float bScale, void *out, cudaStream_t stream) {
  View v = flat(n);
  v.aScale = aScale;
  v.bScale = bScale;
  return launch<Op::Add>("add", dtype, v, a, b, out, stream);
}

} // namespace strata::kernels

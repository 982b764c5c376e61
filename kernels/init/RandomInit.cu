#include "kernels/init/RandomInit.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/sampling/SamplingDevice.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace strata::kernels {

namespace {

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) {
  return v;
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T>
__global__ void randomNormalKernel(T *out, int64_t count, uint64_t seed,
                                   uint64_t hash, double std) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    double u1 = 1.0 - sampling::counterUniform(seed, hash, 2 * i);
    double u2 = sampling::counterUniform(seed, hash, 2 * i + 1);
    // The host computes the same expression in double; only the final
    // float rounding matters, so fused multiply-adds must not change it.
    double r = __dmul_rn(std, sqrt(-2.0 * log(u1)));
    float value = float(__dmul_rn(r, cos(__dmul_rn(6.283185307179586, u2))));
    out[i] = fromFloat<T>(value);
  }
}

template <typename T>
__global__ void constantKernel(T *out, int64_t count, float value) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = fromFloat<T>(value);
}

unsigned gridFor(int64_t count) {
  int64_t blocks = (count + 255) / 256;
  return unsigned(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

} // namespace

Status randomNormalFill(InitDType dtype, int64_t count, uint64_t seed,
                        uint64_t nameHash, double std, void *out,
                        cudaStream_t stream) {
  if (count < 0 || (count > 0 && !out))
    return Status::error("random_normal_fill: bad count or null output");
  if (count == 0)
    return Status::success();
  const unsigned grid = gridFor(count);
  switch (dtype) {
  case InitDType::F32:
    randomNormalKernel<<<grid, 256, 0, stream>>>(static_cast<float *>(out),
                                                 count, seed, nameHash, std);
    break;
  case InitDType::F16:
    randomNormalKernel<<<grid, 256, 0, stream>>>(static_cast<__half *>(out),
                                                 count, seed, nameHash, std);
    break;
  case InitDType::BF16:
    randomNormalKernel<<<grid, 256, 0, stream>>>(
        static_cast<__nv_bfloat16 *>(out), count, seed, nameHash, std);
    break;
  default:
    return Status::error("random_normal_fill: unsupported dtype");
  }
  return cudaStatus(cudaGetLastError(), "random_normal_fill");
}

Status constantFill(InitDType dtype, int64_t count, float value, void *out,
                    cudaStream_t stream) {
  if (count < 0 || (count > 0 && !out))
    return Status::error("constant_fill: bad count or null output");
  if (count == 0)
    return Status::success();
  const unsigned grid = gridFor(count);
  switch (dtype) {
  case InitDType::F32:
    constantKernel<<<grid, 256, 0, stream>>>(static_cast<float *>(out), count,
                                             value);
    break;
  case InitDType::F16:
    constantKernel<<<grid, 256, 0, stream>>>(static_cast<__half *>(out), count,
                                             value);
    break;
  case InitDType::BF16:
    constantKernel<<<grid, 256, 0, stream>>>(
        static_cast<__nv_bfloat16 *>(out), count, value);
    break;
  default:
    return Status::error("constant_fill: unsupported dtype");
  }
  return cudaStatus(cudaGetLastError(), "constant_fill");
}

} // namespace strata::kernels

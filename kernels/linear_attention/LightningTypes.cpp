#include "kernels/linear_attention/LightningTypes.h"

#include <string>

namespace strata::kernels {

LightningDims lightningResolvedDims(const LightningDims &dims) {
  LightningDims r = dims;
  int64_t dense = static_cast<int64_t>(dims.numHeads) * dims.headDim;
  for (int64_t *s :
       {&r.qTokenStride, &r.kTokenStride, &r.vTokenStride, &r.outTokenStride})
    if (*s == 0)
      *s = dense;
  return r;
}

static bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

Status checkLightningArgs(const char *op, const LightningDims &dims,
                          const LightningTensors &t, bool prefill) {
  auto fail = [&](const std::string &what) {
    return Status::error(std::string(op) + ": " + what);
  };
  if (dims.batch < 0)
    return fail("batch " + std::to_string(dims.batch) + " is negative");
  if (dims.numHeads <= 0)
    return fail("numHeads " + std::to_string(dims.numHeads) +
                " must be positive");
  if (dims.headDim != 64 && dims.headDim != 128)
    return fail("headDim " + std::to_string(dims.headDim) +
                " is not supported (64 or 128)");
  if (dims.numSlots <= 0)
    return fail("numSlots " + std::to_string(dims.numSlots) +
                " must be positive");
  // The CUDA launchers narrow this to the 16-bit types
  // (requireDeviceActDType); the CPU reference also runs f32.
  if (dims.dtype != ActDType::BF16 && dims.dtype != ActDType::F16 &&
      dims.dtype != ActDType::F32)
    return fail("dtype must be BF16, FP16 or F32");
  LightningDims r = lightningResolvedDims(dims);
  int64_t dense = static_cast<int64_t>(dims.numHeads) * dims.headDim;
  const char *names[] = {"q", "k", "v", "out"};
  int64_t strides[] = {r.qTokenStride, r.kTokenStride, r.vTokenStride,
                       r.outTokenStride};
  for (int i = 0; i < 4; ++i) {
    if (strides[i] < dense)
      return fail(std::string(names[i]) + " token stride " +
                  std::to_string(strides[i]) + " < numHeads * headDim " +
                  std::to_string(dense));
    if (strides[i] % 8 != 0)
      return fail(std::string(names[i]) + " token stride " +
                  std::to_string(strides[i]) + " is not a multiple of 8");
  }
  if (dims.batch == 0)
    return Status::success();
  const void *ptrs[] = {t.q, t.k, t.v, t.out, t.state};
  const char *ptrNames[] = {"q", "k", "v", "out", "state"};
  for (int i = 0; i < 5; ++i) {
    if (!ptrs[i])
      return fail(std::string(ptrNames[i]) + " is null");
    if (!aligned16(ptrs[i]))
      return fail(std::string(ptrNames[i]) + " is not 16-byte aligned");
  }
  if (!t.slots)
    return fail("slots is null");
  if (!t.decay)
    return fail("decay is null");
  if (prefill && !t.cuSeqLens)
    return fail("cuSeqLens is null");
  return Status::success();
}

} // namespace strata::kernels

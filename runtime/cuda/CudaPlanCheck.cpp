#include "runtime/cuda/CudaPlanCheck.h"

#include "runtime/LaunchFacts.h"

namespace strata {

namespace {

/// What of `plan` is stored in fp32 where a 16-bit model stores bf16 or
/// f16: its activations, weights or KV cache (an f32 model: all three).
/// Empty when nothing is.
std::string firstF32Storage(const plan::Plan &plan) {
  for (const plan::Program &p : plan.programs)
    for (const plan::Launch &l : p.launches)
      if (activationType(p, l) == kernels::ActDType::F32)
        return "activations";
  for (const plan::Weight &w : plan.weights)
    if (w.dtype == plan::DType::F32)
      return "weights";
  if (plan.kvCache.layers > 0 && plan.kvCache.dtype == plan::DType::F32)
    return "KV cache";
  return {};
}

} // namespace

std::string cudaDTypeRefusal(const plan::Plan &plan) {
  std::string what = firstF32Storage(plan);
  if (what.empty())
    return {};
  return "model '" + plan.modelName + "' stores its " + what +
         " in f32; the CUDA backend runs bf16 and f16 models: run it on the "
         "CPU backend (--device cpu), or set 'dtype: bf16' in its model file "
         "and compile it again";
}

} // namespace strata

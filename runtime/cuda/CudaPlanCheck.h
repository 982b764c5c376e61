// What the CUDA backend refuses from the plan alone, before it touches a
// device: plain C++, built with or without CUDA, so that the refusal reads
// the same on every machine and is tested without a GPU.
#ifndef STRATA_RUNTIME_CUDA_CUDAPLANCHECK_H
#define STRATA_RUNTIME_CUDA_CUDAPLANCHECK_H

#include "runtime/plan/Plan.h"

#include <string>

namespace strata {

/// Why the CUDA backend cannot run `plan`'s storage type, or empty. Its
/// kernels are built for bf16 and f16 storage; a model with `dtype: f32`
/// (weights, activations and KV cache in fp32) runs on the CPU backend only.
/// The message names the model and says what to do instead.
std::string cudaDTypeRefusal(const plan::Plan &plan);

} // namespace strata

#endif // STRATA_RUNTIME_CUDA_CUDAPLANCHECK_H

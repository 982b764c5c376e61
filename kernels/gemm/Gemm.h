// Linear layers: y = x w^T (+ bias) (+ residual), weights [out, in] as
// checkpoints store them.
//
//   x         T [m, k]   row-major activations (tokens of all sequences)
//   w         T [n, k]   weights, row-major [out features, in features]
//   bias      T [n]      optional
//   residual  T [m, n]   optional, added after the bias; may alias y (the
//                        residual stream updated in place by o_proj/down)
//   y         T [m, n], or fp32 [m, n] with f32Out (logits)
//
// T is FP16 or BF16; products accumulate in fp32 and each stored value is
// rounded once (the GEMV; cuBLASLt's bias epilogue may round the product
// before adding the bias). Two paths:
//  - cuBLASLt, with one plan per (m, n, k, dtype, output dtype, epilogue,
//    operand alignment): the matmul descriptor, the matrix layouts and the
//    heuristic's algorithm, chosen once and cached. The bias is the BIAS
//    epilogue and the residual is C with beta = 1, so neither costs a pass
//    over y.
//  - gemvLinear / GemmPath::Gemv, m <= 16: a split-K tensor-core GEMV that
//    streams w once through a shared-memory ring and starts streaming
//    under the previous kernel's tail (programmatic dependent launch).
//    Needs k a multiple of 8 and 16-byte aligned operands.
// GemmPath::Auto (what the runtime uses) is the GEMV for m <= 16 where its
// preconditions hold, cuBLASLt otherwise: at m <= 16 a linear layer only
// streams its weights, and the GEMV's copies of contiguous row segments
// keep that stream at the read rate on shapes where cuBLASLt's access
// pattern does not (docs/benchmarks.md has both). setSmallMGemv(false)
// keeps Auto on cuBLASLt for every shape, for comparison.
// In column-major terms y^T [n, m] = w [k, n]^T x^T [k, m]: A = w with
// op T, B = x with op N, both with leading dimension k.
//
// Not supported (a failed Status says so): bias or residual with f32Out.
#ifndef STRATA_KERNELS_GEMM_GEMM_H
#define STRATA_KERNELS_GEMM_GEMM_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace strata::kernels {

struct GemmArgs {
  ActDType dtype = ActDType::BF16;
  int64_t m = 0, n = 0, k = 0;
  const void *x = nullptr;
  const void *w = nullptr;
  const void *bias = nullptr;
  const void *residual = nullptr;
  void *y = nullptr;
  bool f32Out = false;
};

/// Which implementation runs a call; Auto is what the runtime uses, the
/// others exist for tests and benchmarks.
enum class GemmPath : uint8_t { Auto, CublasLt, Gemv };

/// The entry check both paths run: sizes, null operands, unsupported
/// combinations.
Status checkGemmArgs(const GemmArgs &args);

/// The GEMV path alone (m in [1, 16], k % 8 == 0, 16-byte aligned
/// operands); asynchronous on `stream`, no workspace, no handle.
Status gemvLinear(const GemmArgs &args, cudaStream_t stream);

/// Whether gemvLinear accepts `args` (which checkGemmArgs accepted).
bool gemvSupports(const GemmArgs &args);

/// Owns a cuBLASLt handle, one device workspace and the plan cache. Calls
/// enqueue on the given stream and never synchronise, so they can be
/// captured into CUDA graphs once each shape has been planned (planning
/// runs the heuristic and allocates nothing). The workspace is shared by
/// all calls: use one GemmRunner per stream. Calls from several host
/// threads are serialised.
class GemmRunner {
public:
  static constexpr size_t kDefaultWorkspaceBytes = size_t(32) << 20;

  GemmRunner();
  ~GemmRunner();
  GemmRunner(const GemmRunner &) = delete;
  GemmRunner &operator=(const GemmRunner &) = delete;

  /// Creates the handle and allocates the workspace; call once first.
  Status init(size_t workspaceBytes = kDefaultWorkspaceBytes);

  /// y = x w^T (+ bias) (+ residual), see the file comment.
  Status linear(const GemmArgs &args, cudaStream_t stream,
                GemmPath path = GemmPath::Auto);

  /// Plans in the cache (one per distinct cuBLASLt shape seen).
  size_t cachedPlans() const;

  /// Whether Auto sends calls of at most 16 tokens to the GEMV (default
  /// on; off makes Auto cuBLASLt for every shape).
  void setSmallMGemv(bool enabled) { smallMGemv_ = enabled; }

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
  bool smallMGemv_ = true;
};

} // namespace strata::kernels

#endif // STRATA_KERNELS_GEMM_GEMM_H

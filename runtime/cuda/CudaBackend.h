// The CUDA backend: runs a plan's programs on one GPU.
//
//  - Weights are streamed from the checkpoint once, one tensor at a time
//    (or, for random weights, drawn on the device with the host's
//    counter-based formula, so they equal WeightStore::random bit for bit),
//    and shared by every program.
//  - One device arena serves all programs (they never run concurrently),
//    sized for the largest; outputs (logits) and step inputs (token ids,
//    positions, sequence lengths, block tables, state slots, sampling
//    parameters) have their own device buffers, sized for the plan's
//    limits and rewritten by one host-to-device copy per step.
//  - The KV block pool (per softmax layer, K and V pools [numBlocks,
//    kvHeads, blockSize, headDim]) and the linear-state slots (per linear
//    layer, fp32 [numSlots, heads, keyDim, valueDim]) live on the device.
//  - Launches go to the plan's streams with its events; every CUDA status
//    is checked and a failure names the launch ("decode #12
//    paged_decode_attention: ...").
//  - Decode steps with graphs on: each batch-size bucket (1, 2, 4, 8, ...,
//    the plan's maxBatch) is captured once and replayed for every step.
//    Everything that changes per step is read by the kernels from device
//    buffers at fixed addresses, block tables have a fixed row stride (the
//    most blocks a sequence can need) and the split-KV count is chosen for
//    the longest context, so a growing sequence never forces a recapture.
//  - Verify steps (speculative decoding) likewise, by batch bucket and
//    tokens per sequence (1, 2, 4, 8, then multiples of 8): shorter trees
//    are padded with tokens that hang from the cached prefix, write past
//    the sequence's tokens and are nobody's ancestor. Prefill and extend
//    steps run eagerly.
//  - Tokens are picked on the device (argmax, or seeded top-k/top-p with
//    the host sampler's counter-based draw), and only the ids (and, when
//    asked, the logits) are copied back.
#ifndef STRATA_RUNTIME_CUDA_CUDABACKEND_H
#define STRATA_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/Backend.h"

#include <memory>
#include <string>

namespace strata {

struct CudaBackendOptions {
  int device = 0;
  /// Replay captured graphs for decode and verify steps; false launches
  /// eagerly.
  bool graphs = true;
  /// Programmatic dependent launch of the engine's own kernels
  /// (kernels/common/DependentLaunch.h). Process-wide: the last backend
  /// created decides.
  bool dependentLaunch = true;
  /// Linear layers of at most 16 tokens on the streaming GEMV (default)
  /// rather than cuBLASLt (kernels/gemm/Gemm.h).
  bool decodeGemv = true;
  /// A `.safetensors` file or index to stream the weights from, one tensor
  /// at a time (converted on the host, uploaded, dropped); empty draws the
  /// plan's random weights on the device.
  std::string weightsPath;
};

/// Weights come from options.weightsPath or are drawn on the device.
/// `plan` must outlive the backend. Null with `error` set when the plan is
/// an f32 model (checked first, without touching a device:
/// cudaDTypeRefusal), the device is missing, the plan holds a launch this
/// backend cannot run (the CUDA backend runs fused plans: `strata compile
/// --emit=fused`) or memory runs out.
std::unique_ptr<Backend> createCudaBackend(const plan::Plan &plan,
                                           const CudaBackendOptions &options,
                                           std::string &error);

} // namespace strata

#endif // STRATA_RUNTIME_CUDA_CUDABACKEND_H

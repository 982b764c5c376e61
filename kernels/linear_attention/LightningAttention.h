// Lightning attention: linear attention with per-head exponential decay (the
// linear layers of MiniMax-Text-01-style hybrids). Two operations, each one
// templated kernel (dtype x headDim) behind a named launcher:
//   lightningPrefill  any number of tokens per sequence, computed by chunks
//                     of 64 tokens: the intra-chunk product with its decay
//                     mask and the inter-chunk product through the running
//                     state, both on tensor cores;
//   lightningDecode   one token per sequence, state read and written in
//                     place (memory bound).
//
// Contract (kernels/linear_attention/LightningTypes.h): for head h with rate
// s_h > 0 and token t,  S_t = exp(-s_h) S_{t-1} + k_t^T v_t,  o_t = q_t S_t.
//
// Common to both launchers:
//  - T = dims.dtype, BF16 or FP16, for q, k, v and out; the state is fp32
//    [numSlots, numHeads, headDim (key), headDim (value)], row-major.
//  - slots int32 [batch] device: the state slot of each sequence; -1 is a
//    padding entry: its output rows are not written and no state is read or
//    written. Non-padding slots of one batch must be distinct and in
//    [0, numSlots) (not checked on the device).
//  - decay fp32 [numHeads] device: the rates s_h (> 0; not checked).
//  - All pointers are device memory, 16-byte aligned; token strides are
//    multiples of 8 elements. Math is fp32; each output is rounded once.
//  - Returns a failed Status (nothing launched) when dims or pointers are
//    inconsistent, and a failed Status naming the CUDA error when the launch
//    fails. The launch is asynchronous on `stream`.
#ifndef STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGATTENTION_H
#define STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGATTENTION_H

#include "kernels/linear_attention/LightningTypes.h"

#include <cuda_runtime_api.h>

namespace strata::kernels {

/// Prefill (varlen packed tokens).
///  q, k, v   T [totalTokens, numHeads, headDim] (row stride
///            dims.{q,k,v}TokenStride); tokens of sequence b are rows
///            cuSeqLens[b] .. cuSeqLens[b+1]-1, in order.
///  out       T [totalTokens, numHeads, headDim] (row stride
///            dims.outTokenStride): o_t of every token of a non-padding
///            sequence.
///  cuSeqLens int32 [batch + 1] device, cuSeqLens[0] = 0, non-decreasing.
///  state     sequence b starts from state[slots[b]] and leaves its final
///            state there (a sequence of length 0 leaves it unchanged).
/// Tensor cores take q, k, v, the decayed scores and the running state as T
/// operands with fp32 accumulation; the state itself is carried in fp32.
Status lightningPrefill(const LightningDims &dims, const LightningTensors &t,
                        cudaStream_t stream);

/// lightningPrefill with the value-column tile of one block chosen by the
/// caller (32 or 64; 0 = the launcher's choice), for tuning and benchmarks.
Status lightningPrefillTiled(const LightningDims &dims,
                             const LightningTensors &t, int dvTile,
                             cudaStream_t stream);

/// Decode (one token per sequence).
///  q, k, v   T [batch, numHeads, headDim] (row stride dims.*TokenStride).
///  out       T [batch, numHeads, headDim].
///  state     state[slots[b]] is advanced by one token in place.
/// t.cuSeqLens is ignored. All arithmetic is fp32 (no tensor cores).
Status lightningDecode(const LightningDims &dims, const LightningTensors &t,
                       cudaStream_t stream);

/// lightningDecode with the value columns per block (16, 32, 64 or 128; 0 = the
/// launcher's choice) and the L2 256-byte prefetch hint on state loads
/// chosen by the caller, for tuning and benchmarks.
Status lightningDecodeTiled(const LightningDims &dims,
                            const LightningTensors &t, int cols,
                            bool prefetch256, cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGATTENTION_H

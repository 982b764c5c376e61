// Operand descriptions shared by the lightning (linear, per-head decay)
// attention launchers (kernels/linear_attention/LightningAttention.h) and
// their CPU reference (kernels/cpu/LightningRef.h), plus the shape checks
// both run on entry. Plain C++ without CUDA headers.
//
// The contract, for head h with decay rate s_h > 0, state S (fp32,
// [headDim, headDim]) and token t of a sequence:
//   S_t = exp(-s_h) * S_{t-1} + k_t^T v_t,    o_t = q_t S_t
// for every token, the first one after a saved state included. A sequence
// starts from the state stored in its slot and leaves its final state there.
#ifndef STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGTYPES_H
#define STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGTYPES_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cstdint>

namespace strata::kernels {

/// Geometry of one lightning launch. Key and value head dims are equal.
struct LightningDims {
  /// Sequences in the batch (rows of `slots`).
  int64_t batch = 0;
  int32_t numHeads = 0;
  /// 64 or 128.
  int32_t headDim = 0;
  /// Slots in the state tensor [numSlots, numHeads, headDim, headDim].
  int64_t numSlots = 0;
  /// Storage type of q, k, v and the output (FP16 or BF16; the CPU
  /// reference also takes F32).
  ActDType dtype = ActDType::BF16;
  /// Elements from one token's row to the next in q, k, v and out. 0 means
  /// dense rows (numHeads * headDim); a larger stride lets q, k and v point
  /// into one fused projection [tokens, 3, numHeads, headDim]. Must be a
  /// multiple of 8 (16-byte rows).
  int64_t qTokenStride = 0;
  int64_t kTokenStride = 0;
  int64_t vTokenStride = 0;
  int64_t outTokenStride = 0;
};

/// Device (or, for the CPU reference, host) pointers of one launch. The
/// layouts are documented on the launchers.
struct LightningTensors {
  const void *q = nullptr;
  const void *k = nullptr;
  const void *v = nullptr;
  void *out = nullptr;
  /// fp32 [numSlots, numHeads, headDim, headDim], read and written in place.
  float *state = nullptr;
  /// int32 [batch]: state slot of each sequence; -1 marks a padding entry.
  /// Non-padding slots of one batch must be distinct.
  const int32_t *slots = nullptr;
  /// fp32 [numHeads]: decay rate s_h > 0 (the per-step factor is exp(-s_h)).
  const float *decay = nullptr;
  /// Prefill only: int32 [batch + 1], non-decreasing, cuSeqLens[0] == 0;
  /// tokens of sequence b are rows cuSeqLens[b] .. cuSeqLens[b+1]-1.
  const int32_t *cuSeqLens = nullptr;
};

/// Token strides with 0 replaced by the dense value.
LightningDims lightningResolvedDims(const LightningDims &dims);

/// Checks what can be checked without reading device memory: dims, dtype,
/// strides, non-null pointers and 16-byte alignment. `op` names the
/// operation in the message ("lightning_prefill").
Status checkLightningArgs(const char *op, const LightningDims &dims,
                          const LightningTensors &t, bool prefill);

} // namespace strata::kernels

#endif // STRATA_KERNELS_LINEAR_ATTENTION_LIGHTNINGTYPES_H

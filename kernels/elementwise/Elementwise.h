// Elementwise activations and the embedding gather.
//
// T is `dtype` (FP16 or BF16) for every activation tensor. Math is fp32 and
// each stored value is rounded once, as in kernels/cpu/DenseRef.h. All
// pointers are device memory; launches are asynchronous on `stream` and a
// failed Status (nothing launched) names a bad shape or pointer, or the CUDA
// error of the launch. Tensors whose sizes and addresses allow it move as
// 16-byte vectors; any size works.
#ifndef STRATA_KERNELS_ELEMENTWISE_ELEMENTWISE_H
#define STRATA_KERNELS_ELEMENTWISE_ELEMENTWISE_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace strata::kernels {

/// out = silu(gate) * up; gate, up, out T [n].
Status siluMul(ActDType dtype, int64_t n, const void *gate, const void *up,
               void *out, cudaStream_t stream);

/// The SwiGLU of a fused gate_up projection: gateUp T [rows, 2 * cols] holds
/// the gate in columns [0, cols) and up in [cols, 2 * cols) (the fused
/// gate_up_proj layout); out T [rows, cols] = silu(gate) * up.
Status siluMulFused(ActDType dtype, int64_t rows, int64_t cols,
                    const void *gateUp, void *out, cudaStream_t stream);

/// out = silu(x); x, out T [n] (MiniMax applies it to q, k and v).
Status silu(ActDType dtype, int64_t n, const void *x, void *out,
            cudaStream_t stream);

/// out = sigmoid(gate) * x; all T [n] (MiniMax's output gate).
Status sigmoidMul(ActDType dtype, int64_t n, const void *gate, const void *x,
                  void *out, cudaStream_t stream);

/// out = aScale * a + bScale * b; all T [n] (the residual connection; the
/// scales are MiniMax's alpha and beta, 1 elsewhere).
Status add(ActDType dtype, int64_t n, const void *a, const void *b,
           float aScale, float bScale, void *out, cudaStream_t stream);

/// out[t] = table[ids[t]]: table T [vocab, cols], ids int32 [tokens], out T
/// [tokens, cols]. cols is a multiple of 8 and table/out are 16-byte aligned
/// (checked). An id outside [0, vocab) cannot be checked without a
/// synchronisation: its row of out is left unwritten (the CPU reference
/// reports it as an error).
Status embedding(ActDType dtype, int64_t tokens, int64_t vocab, int64_t cols,
                 const int32_t *ids, const void *table, void *out,
                 cudaStream_t stream);

} // namespace strata::kernels

#endif // STRATA_KERNELS_ELEMENTWISE_ELEMENTWISE_H

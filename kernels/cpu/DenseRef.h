// CPU references of the dense (token-parallel) operations of a decoder:
// norms, elementwise activations, embedding gather and GEMMs.
//
// Activations and weights are stored in `dtype` (bf16, f16 or f32; the
// logits of linearRef may be fp32 whatever the dtype); rows are contiguous
// ([rows, cols] row-major). Arithmetic is fp32 and every stored element is
// rounded once to the dtype (not at all for f32), so the CUDA kernels
// computing the same fp32 expression in a 16-bit dtype store the same bits
// up to fp32 summation order.
#ifndef STRATA_KERNELS_CPU_DENSEREF_H
#define STRATA_KERNELS_CPU_DENSEREF_H

#include "kernels/common/RopeKvTypes.h"
#include "kernels/common/Status.h"

#include <cstdint>

namespace strata::kernels {

/// out[r] = x[r] * rsqrt(mean(x[r]^2) + eps) * w, x and out [rows, cols], w
/// [cols]. Also the per-head QK-norm (rows = tokens * heads, cols = headDim).
/// out may alias x.
Status rmsNormRef(ActDType dtype, int64_t rows, int64_t cols, const void *x,
                  const void *w, float eps, void *out);

/// sum = xScale * x + residualScale * residual (rounded, stored), then
/// out = rmsNorm(sum) from the stored sum: the next layer's residual and its
/// normalised input.
Status addRmsNormRef(ActDType dtype, int64_t rows, int64_t cols, const void *x,
                     const void *residual, const void *w, float eps,
                     float xScale, float residualScale, void *out, void *sum);

/// out = silu(gate) * up, all [n].
Status siluMulRef(ActDType dtype, int64_t n, const void *gate, const void *up,
                  void *out);
/// out = silu(x) (MiniMax applies it to q, k and v).
Status siluRef(ActDType dtype, int64_t n, const void *x, void *out);
/// out = sigmoid(gate) * x (MiniMax's output gate).
Status sigmoidMulRef(ActDType dtype, int64_t n, const void *gate, const void *x,
                     void *out);
/// out = aScale * a + bScale * b (the residual connection; MiniMax's alpha
/// and beta, 1 elsewhere).
Status addRef(ActDType dtype, int64_t n, const void *a, const void *b,
              float aScale, float bScale, void *out);

/// out[t] = table[ids[t]], table [vocab, cols]; an id outside [0, vocab) is
/// an error naming the token.
Status embeddingRef(ActDType dtype, int64_t tokens, int64_t vocab, int64_t cols,
                    const int32_t *ids, const void *table, void *out);

/// y[m, n] = sum_k x[m, k] * w[n, k] (+ bias[n]): a linear layer with
/// weights [out, in] as checkpoints store them. bias may be null. With
/// `f32Out` the result is stored as fp32 (logits), else in dtype.
Status linearRef(ActDType dtype, int64_t m, int64_t n, int64_t k, const void *x,
                 const void *w, const void *bias, void *y, bool f32Out = false);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_DENSEREF_H

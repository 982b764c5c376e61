// CPU reference of lightning attention (linear attention with per-head
// exponential decay): the recurrence of kernels/linear_attention/
// LightningTypes.h computed literally, one token at a time, in fp32.
//
// Same operands and layouts as the CUDA launchers in
// kernels/linear_attention/LightningAttention.h, with every pointer in host
// memory: q, k, v and out hold BFloat16, Float16 (kernels/cpu/HalfTypes.h)
// or fp32 according to dims.dtype (the CUDA launchers take the 16-bit types
// only), state is fp32. Each output element is the fp32 sum over i of
// q_i * S_t[i][j] (i ascending) rounded once to the dtype.
// Because the pointers are host memory, these also check what the launchers
// cannot: slots in range and distinct, cuSeqLens non-decreasing from 0,
// decay rates positive and finite.
#ifndef STRATA_KERNELS_CPU_LIGHTNINGREF_H
#define STRATA_KERNELS_CPU_LIGHTNINGREF_H

#include "kernels/linear_attention/LightningTypes.h"

namespace strata::kernels {

/// Prefill: sequence b is tokens cuSeqLens[b] .. cuSeqLens[b+1]-1 of q, k, v
/// (T [totalTokens, numHeads, headDim] rows, token stride from dims); its
/// outputs go to the same rows of out, and its final state to its slot.
/// Padding entries (slot -1) leave out and state untouched.
Status lightningPrefillRef(const LightningDims &dims,
                           const LightningTensors &t);

/// Decode: one token per sequence; q, k, v, out are T [batch, numHeads,
/// headDim] (token stride from dims). Equal to prefill with length 1 each.
Status lightningDecodeRef(const LightningDims &dims, const LightningTensors &t);

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_LIGHTNINGREF_H

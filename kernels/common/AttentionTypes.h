// Operands of softmax attention over the KV cache, shared by the CPU
// reference (kernels/cpu/AttentionRef.h) and the CUDA launchers of
// kernels/attention/.
//
// One description covers the four phases. Tokens of all sequences are
// flattened: sequence b's queries are rows cuQLens[b] .. cuQLens[b+1]-1 of
// q and out, [totalQ, numQHeads, headDim] in the activation dtype. Its keys
// and values are cache slots 0 .. kvLens[b]-1, the last qLen of which belong
// to its queries (written by rope_kv_write before attention runs):
//  - prefill: kvLens[b] == qLen (empty cache before the step);
//  - extend: kvLens[b] > qLen, queries causal among themselves;
//  - decode: qLen == 1;
//  - tree (speculative verify): the queries form a token tree given by
//    parent ids; query i sees the cached prefix and its own ancestors.
#ifndef STRATA_KERNELS_COMMON_ATTENTIONTYPES_H
#define STRATA_KERNELS_COMMON_ATTENTIONTYPES_H

#include "kernels/common/RopeKvTypes.h"

#include <cstdint>

namespace strata::kernels {

struct AttentionDims {
  int64_t batch = 0;
  int32_t numQHeads = 0;
  /// numQHeads is a multiple of numKvHeads (grouped-query attention: q
  /// head h reads kv head h / (numQHeads / numKvHeads)).
  int32_t numKvHeads = 0;
  int32_t headDim = 0;
  ActDType dtype = ActDType::BF16;
  /// Multiplies q.k before the softmax.
  float scale = 1.0f;
  /// 0: none. Otherwise a query at position p sees keys at positions
  /// p - slidingWindow + 1 .. p.
  int64_t slidingWindow = 0;
};

struct AttentionTensors {
  /// [totalQ, numQHeads, headDim]
  const void *q = nullptr;
  /// [totalQ, numQHeads, headDim]
  void *out = nullptr;
  /// [batch + 1], cuQLens[0] == 0, non-decreasing.
  const int32_t *cuQLens = nullptr;
  /// [batch]: cached tokens including this step's, >= the sequence's qLen.
  const int32_t *kvLens = nullptr;
  /// Tree only, else null: [totalQ] index of each query's parent among its
  /// sequence's queries (-1 for a root, which attaches to the cached
  /// prefix). Parents precede their children.
  const int32_t *parentIds = nullptr;
  /// Tree only, else null: [totalQ] position of each query (for the sliding
  /// window); without it query i's position is its slot.
  const int32_t *positions = nullptr;
  KvCacheView cache;
};

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_ATTENTIONTYPES_H

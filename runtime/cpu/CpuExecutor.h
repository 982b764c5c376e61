// The CPU backend: runs one program of a plan, launch after launch, with
// the reference kernels of kernels/cpu (fp32 math; storage in the plan's
// dtype: 16-bit storage rounded exactly as the GPU stores it, or fp32).
// Streams and events are irrelevant on one thread; launches run in the
// plan's issue order, which is a topological order of their hazards.
#ifndef STRATA_RUNTIME_CPU_CPUEXECUTOR_H
#define STRATA_RUNTIME_CPU_CPUEXECUTOR_H

#include "kernels/common/AttentionTypes.h"
#include "kernels/common/Status.h"
#include "runtime/StepInputs.h"
#include "runtime/Weights.h"
#include "runtime/plan/Plan.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace strata {

/// Device-independent state a program reads and writes across steps.
struct CpuCaches {
  /// Per softmax layer: the bytes of the K and V pools [numBlocks, kvHeads,
  /// blockSize, headDim] of the plan's `kvCache.dtype`.
  std::vector<std::vector<uint8_t>> k, v;
  int64_t numBlocks = 0;
  /// Per linear layer: fp32 [numSlots, heads, keyDim, valueDim].
  std::vector<std::vector<float>> state;
  int64_t numSlots = 0;

  /// Zeroed caches for `plan`.
  static CpuCaches create(const plan::Plan &plan, int64_t numBlocks,
                          int64_t numSlots);
};

class CpuExecutor {
public:
  CpuExecutor(const plan::Plan &plan, const plan::Program &program,
              const WeightStore &weights);

  /// Runs the program on `in`; `logits` receives the program's fp32 output
  /// [rows, vocab] (one row per sequence unless the program returns every
  /// token's logits).
  kernels::Status run(const StepInputs &in, CpuCaches &caches,
                      std::vector<float> &logits);

private:
  kernels::Status launch(const plan::Launch &l, const StepInputs &in,
                         CpuCaches &caches);
  /// An error unless the KV cache holds `act` elements (the reference
  /// kernels read q, K and V in one dtype).
  kernels::Status checkCacheType(const plan::Launch &l,
                                 kernels::ActDType act) const;
  void *data(int32_t buffer);
  /// The rotary table of a launch's rope parameters covering positions
  /// below maxPos; `rows` receives the positions it holds.
  const float *ropeTable(const plan::RotaryParams &rotary, int64_t maxPos,
                         kernels::Status &status, int64_t *rows = nullptr);
  /// Softmax attention of queries over the paged cache (extend, decode,
  /// tree with parent ids, and the generic op).
  kernels::Status cachedAttention(const plan::Launch &l, int64_t layer,
                                  double scale, int64_t slidingWindow,
                                  kernels::ActDType act, const void *q,
                                  void *out, const void *parentIds,
                                  const StepInputs &in, CpuCaches &caches);
  /// Prefill attention over the fresh tokens of a packed QKV buffer.
  kernels::Status packedAttention(const plan::PrefillAttentionParams &p,
                                  kernels::ActDType act, const void *qkv,
                                  void *out, const StepInputs &in);
  kernels::Status ropeKvWrite(const plan::Launch &l,
                              const plan::RopeKvWriteParams &p,
                              kernels::ActDType act, const void *qkv,
                              void *out, const StepInputs &in,
                              CpuCaches &caches);
  kernels::Status lightning(const plan::Launch &l, int64_t layer,
                            const std::vector<double> &decaySlopes,
                            kernels::ActDType act,
                            std::array<const void *, 3> qkv, void *out,
                            const StepInputs &in, CpuCaches &caches,
                            bool prefill);

  const plan::Plan &plan_;
  const plan::Program &program_;
  const WeightStore &weights_;
  std::vector<uint8_t> arena_;
  /// Output buffers live outside the arena.
  std::map<int32_t, std::vector<uint8_t>> outputs_;
  const StepInputs *in_ = nullptr;
  int64_t tokens_ = 0, batch_ = 0;
  std::map<std::string, std::vector<float>> ropeTables_;
};

} // namespace strata

#endif // STRATA_RUNTIME_CPU_CPUEXECUTOR_H

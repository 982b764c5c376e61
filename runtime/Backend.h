// A backend executes a plan's programs on one kind of device and picks the
// next token of each sequence. The Engine owns the scheduling state (block
// tables, state slots, positions) and hands a backend one step at a time.
//
// Two implementations: the CPU backend (runtime/cpu/CpuBackend.h; reference
// kernels, one thread) and the CUDA backend (runtime/cuda/CudaBackend.h;
// device arena, streams, events and CUDA graphs).
#ifndef STRATA_RUNTIME_BACKEND_H
#define STRATA_RUNTIME_BACKEND_H

#include "kernels/common/KvMoveTypes.h"
#include "runtime/Sampler.h"
#include "runtime/StepInputs.h"
#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// How one sequence of a step picks its next token: its request's sampling
/// parameters and the (sequence id, draw index) pair of the counter-based
/// draw (runtime/Sampler.h).
struct StepSample {
  SamplingParams params;
  uint64_t seqId = 0;
  uint64_t step = 0;
};

/// How a backend ran its decode steps, since it was created.
struct BackendCounters {
  int64_t decodeSteps = 0;   ///< decode steps that could replay a graph
  int64_t graphReplays = 0;  ///< of those, run by replaying a captured graph
  int64_t graphCaptures = 0; ///< graphs captured (program, batch bucket)
  /// Verify steps (speculative decoding) that could replay a graph, those
  /// that did, and the graphs captured (program, batch bucket, tokens per
  /// sequence).
  int64_t verifySteps = 0, verifyGraphReplays = 0, verifyGraphCaptures = 0;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// "cpu" or "cuda".
  virtual const char *name() const = 0;

  /// Storage for the next generation: `numBlocks` KV-cache blocks of the
  /// plan's block size, `numSlots` linear-state slots (zeroed) and
  /// sequences of at most `maxContext` tokens. Called before every
  /// generation; a backend keeps what it already has when it is big enough.
  virtual bool reserve(int64_t numBlocks, int64_t numSlots, int64_t maxContext,
                       std::string &error) = 0;

  /// Zeroes the linear-attention state of `slot` in every linear layer, so
  /// that a slot freed by one sequence starts the next from nothing (the
  /// serving loop reuses slots between reserve() calls). Ordered after the
  /// steps already issued and before the next one.
  virtual bool resetState(int32_t slot, std::string &error) = 0;

  /// Moves KV-cache rows: for each (source, destination) pair of flat
  /// slots in `moves` ([2 * n], applied in order, so a move may read a row
  /// an earlier one wrote), the keys and values of every softmax layer at
  /// the source slot are copied to the destination: the compaction of a
  /// verified token tree's accepted path. Ordered after the steps already
  /// issued and before the next one.
  virtual bool moveKvSlots(const std::vector<int64_t> &moves,
                           std::string &error) = 0;

  /// Free bytes of the memory the KV cache and the states live in: device
  /// memory on CUDA, the host memory this process can still take on the
  /// CPU (UINT64_MAX when no limit can be read); 0 when it cannot be
  /// asked. What `--kv-memory` shares out.
  virtual uint64_t freeCacheMemory() const = 0;

  /// Runs `program` on the step `in`. When `samples` is non-empty it holds
  /// one entry per sequence of the step: `tokens` receives each sequence's
  /// next token and, when `logits` is non-null, the logits rows they were
  /// drawn from ([batch, vocab] fp32). An empty `samples` runs the program
  /// for its cache and state updates only (a prompt chunk before the last).
  virtual bool step(const plan::Program &program, const StepInputs &in,
                    const std::vector<StepSample> &samples,
                    std::vector<int32_t> &tokens, std::vector<float> *logits,
                    std::string &error) = 0;

  /// Runs `program` on the step `in` like step() without samples, and
  /// copies the program's whole logits output to `logits`: [rows, vocab]
  /// fp32, where rows is the step's token count for a program whose logits
  /// are all-token, else its sequence count. For scoring (Engine::score).
  virtual bool stepLogits(const plan::Program &program, const StepInputs &in,
                          std::vector<float> &logits, std::string &error) = 0;

  /// Runs `program`, whose logits are all-token (a verify program), on
  /// the step `in` like stepLogits, and returns each token's argmax (ties
  /// to the lowest id) instead of its row: [tokens]. Greedy verification
  /// needs only these.
  virtual bool stepArgmax(const plan::Program &program, const StepInputs &in,
                          std::vector<int32_t> &ids, std::string &error) = 0;

  /// How decode steps ran; a backend without graphs (the CPU) counts none.
  virtual BackendCounters counters() const { return {}; }
};

/// The dimensions of Backend::moveKvSlots's copy for `plan`'s KV cache of
/// `numBlocks` blocks and `moves` (source, destination) pairs: K and V of
/// every softmax layer.
inline kernels::KvMoveDims kvMoveDimsOf(const plan::Plan &plan,
                                        int64_t numBlocks, int64_t moves) {
  const plan::KvCacheDesc &kv = plan.kvCache;
  kernels::KvMoveDims d;
  d.pools = 2 * kv.layers;
  d.numBlocks = numBlocks;
  d.numKvHeads = kv.kvHeads;
  d.blockSize = kv.blockSize;
  d.headDim = kv.headDim;
  d.elementBytes = plan::byteWidth(kv.dtype);
  d.moves = moves;
  return d;
}

} // namespace strata

#endif // STRATA_RUNTIME_BACKEND_H

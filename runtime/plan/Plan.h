// The executable plan: what codegen produces from the fused IR and what the
// runtime executes. Plain C++ data, no MLIR: this struct and its file
// (docs/plan-format.md) are the boundary between compiler and runtime.
//
// A plan holds one program per phase (prefill, extend, decode, verify).
// Each program lists its buffers, its launches in host issue order with the
// stream of each, and the cross-stream events. Sizes that change at run
// time (the number of tokens or sequences of a step) are symbolic
// dimensions; the arena is planned for the plan's limits.
#ifndef STRATA_RUNTIME_PLAN_PLAN_H
#define STRATA_RUNTIME_PLAN_PLAN_H

#include "runtime/plan/KernelParams.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::plan {

/// Bumped whenever the file layout or the meaning of a field changes; a
/// reader accepts exactly its own version.
constexpr uint32_t kPlanFormatVersion = 6;

enum class DType : uint8_t { F32 = 0, F16 = 1, BF16 = 2, I32 = 3 };
const char *toString(DType t);
uint64_t byteWidth(DType t);

/// A dimension: a constant, or a run-time size of the step.
enum class Symbol : uint8_t {
  None = 0,   ///< the constant `value`
  Tokens = 1, ///< tokens of the step, all sequences together
  Batch = 2,  ///< sequences of the step
};

struct Dim {
  Symbol symbol = Symbol::None;
  int64_t value = 0;
  static Dim constant(int64_t v) { return {Symbol::None, v}; }
  static Dim tokens() { return {Symbol::Tokens, 0}; }
  static Dim batch() { return {Symbol::Batch, 0}; }
  bool operator==(const Dim &o) const {
    return symbol == o.symbol && value == o.value;
  }
  bool operator!=(const Dim &o) const { return !(*this == o); }
};

/// Run-time sizes a plan is compiled for; buffers are planned at these.
struct Limits {
  int64_t maxTokens = 0;
  int64_t maxBatch = 0;
  bool operator==(const Limits &o) const {
    return maxTokens == o.maxTokens && maxBatch == o.maxBatch;
  }
};

enum class BufferKind : uint8_t {
  Arena = 0,       ///< transient, at `arenaOffset` in the program's arena
  Weight = 1,      ///< `weight` indexes Plan::weights
  Input = 2,       ///< filled by the runtime before the step (token ids, ...)
  Output = 3,      ///< read by the runtime after the step (logits, ...)
  KvCache = 4,     ///< the paged KV cache
  LinearState = 5, ///< the linear-attention state slots
};
const char *toString(BufferKind k);

/// What an Input buffer carries; the runtime binds step data by it.
enum class InputRole : uint8_t {
  None = 0,      ///< not an input
  TokenIds = 1,  ///< [tokens] i32, the step's token ids
  Positions = 2, ///< [tokens] i32, each token's position in its sequence
  ParentIds = 3, ///< [tokens] i32, the verify program's draft-tree parents
  Sequences = 4, ///< the step's sequence table (lengths, block tables,
                 ///< state slots), a shapeless i32 handle
};
const char *toString(InputRole r);

struct Buffer {
  std::string name;
  BufferKind kind = BufferKind::Arena;
  DType dtype = DType::F32;
  std::vector<Dim> shape;
  uint64_t arenaOffset = 0; ///< Arena only
  int32_t weight = -1;      ///< Weight only
  /// Arena only: the index of an earlier arena buffer whose bytes this one
  /// is, read with another shape (split or merged heads). Same dtype, same
  /// element count, same offset; -1 for a buffer of its own.
  int32_t viewOf = -1;
  /// Input only: what the runtime fills it with; None for other kinds.
  InputRole role = InputRole::None;
  bool operator==(const Buffer &o) const;
};

struct Launch {
  /// The kernel and its parameters: the kernel is the index of the
  /// parameters' alternative (KernelParams.h), so the two always agree.
  KernelParams params;
  /// Indices into the program's buffers.
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  int32_t stream = 0;
  Kernel kernel() const { return static_cast<Kernel>(params.index()); }
  /// The parameters of kernel P::kKernel; the caller has switched on
  /// kernel() first.
  template <typename P> const P &as() const { return std::get<P>(params); }
  bool operator==(const Launch &o) const;
};

/// "rope_kv_write<packed>", "linear": the kernel with its variant, as
/// messages, traces and the plan text name a launch.
std::string launchName(const Launch &l);

/// The cache or state layer a launch reads or writes; none for kernels
/// that address no layer (prefill attention reads the packed QKV).
std::optional<int64_t> launchLayer(const Launch &l);

/// Record after launch `from`, wait before launch `to` (indices into the
/// program's launches; `from` < `to`, on different streams).
struct Event {
  int32_t from = 0;
  int32_t to = 0;
  bool operator==(const Event &o) const { return from == o.from && to == o.to; }
};

struct Program {
  /// "prefill", "extend", "decode" or "verify".
  std::string phase;
  int32_t numStreams = 1;
  uint64_t arenaBytes = 0;
  std::vector<Buffer> buffers;
  /// In host issue order.
  std::vector<Launch> launches;
  std::vector<Event> events;
  bool operator==(const Program &o) const;
};

/// A weight as stored on the device. Packed weights (fused QKV, gate/up)
/// list the checkpoint tensors concatenated along dimension 0, in order,
/// with the rows each contributes.
struct Weight {
  std::string name;
  DType dtype = DType::BF16;
  std::vector<int64_t> shape;
  std::vector<std::string> packedFrom;
  std::vector<int64_t> packedRows;
  bool operator==(const Weight &o) const {
    return name == o.name && dtype == o.dtype && shape == o.shape &&
           packedFrom == o.packedFrom && packedRows == o.packedRows;
  }
};

struct KvCacheDesc {
  int64_t layers = 0; ///< 0: the model has no softmax layer
  int64_t kvHeads = 0;
  int64_t headDim = 0;
  int64_t blockSize = 0;
  DType dtype = DType::BF16;
  bool operator==(const KvCacheDesc &o) const {
    return layers == o.layers && kvHeads == o.kvHeads && headDim == o.headDim &&
           blockSize == o.blockSize && dtype == o.dtype;
  }
};

struct LinearStateDesc {
  int64_t layers = 0; ///< 0: the model has no linear-attention layer
  int64_t heads = 0;
  int64_t keyDim = 0;
  int64_t valueDim = 0; ///< always fp32
  bool operator==(const LinearStateDesc &o) const {
    return layers == o.layers && heads == o.heads && keyDim == o.keyDim &&
           valueDim == o.valueDim;
  }
};

/// The tokenizer a plan carries, so that a plan file is self-contained:
/// the text of the model's tokenizer.json and of the optional files beside
/// it, and the BOS and EOS ids the model file gives. All empty (and -1)
/// for a model without a tokenizer.
struct TokenizerFiles {
  std::string tokenizerJson;
  std::string tokenizerConfig;  ///< tokenizer_config.json, or empty
  std::string generationConfig; ///< generation_config.json, or empty
  /// From the model file; -1 and empty: the tokenizer's own.
  int32_t bosId = -1;
  std::vector<int32_t> eosIds;
  bool empty() const { return tokenizerJson.empty(); }
  bool operator==(const TokenizerFiles &o) const {
    return tokenizerJson == o.tokenizerJson &&
           tokenizerConfig == o.tokenizerConfig &&
           generationConfig == o.generationConfig && bosId == o.bosId &&
           eosIds == o.eosIds;
  }
};

/// A fusion pass of the compiler's pipeline (docs/passes.md) and whether
/// the programs were compiled with it.
struct FusionPass {
  std::string name; ///< its flag, "strata-fuse-qkv"
  bool enabled = true;
  bool operator==(const FusionPass &o) const {
    return name == o.name && enabled == o.enabled;
  }
};

struct Plan {
  std::string modelName;
  /// Random weights: the model's seed and the standard deviation of its
  /// projection and embedding matrices.
  uint64_t weightSeed = 0;
  double weightInitStd = 0.02;
  /// The safetensors checkpoint (a `.safetensors` file or a
  /// `model.safetensors.index.json`) the model's weights come from; empty
  /// for random weights. In memory a path usable as it is; in a plan file
  /// relative to the file's folder unless absolute (writePlanFile and
  /// readPlanFile convert).
  std::string checkpoint;
  int64_t vocabSize = 0;
  /// The model's max_position_embeddings: positions a sequence may reach.
  int64_t maxPositions = 0;
  Limits limits;
  KvCacheDesc kvCache;
  LinearStateDesc linearState;
  std::vector<Weight> weights;
  std::vector<Program> programs;
  TokenizerFiles tokenizer;
  /// Every fusion pass of the pipeline that compiled the phase programs, in
  /// pipeline order, each with whether it ran (`--disable-pass` leaves
  /// some out). Empty when the fusion pipeline did not run: the generic
  /// forward (`--emit=ir`) or the phase programs before it
  /// (`--emit=phases`). The plan's runtime-only readers (`strata-bench`,
  /// `strata inspect`) learn from it what a plan was built with and
  /// without.
  std::vector<FusionPass> fusions;
  bool operator==(const Plan &o) const;
};

/// The fusions `plan` was built with, and those left out, in pipeline
/// order.
std::vector<std::string> fusionsOn(const Plan &plan);
std::vector<std::string> fusionsOff(const Plan &plan);

/// One line on the fusions, for reports: "strata-fuse-qkv, ... (all 5)",
/// "strata-fuse-qkv, ...; left out: strata-fuse-swiglu", "none; left out:
/// ..." or "none (the generic forward, unfused)".
std::string describeFusions(const Plan &plan);

/// Number of elements of `shape` at the given step sizes.
int64_t numElements(const std::vector<Dim> &shape, int64_t tokens,
                    int64_t batch);
/// Number of elements of a constant shape (a weight's).
int64_t numElements(const std::vector<int64_t> &shape);

/// Which of the plan's weights some launch of some program reads. A fused
/// plan also lists the unpacked sources of its packed QKV and gate/up
/// weights, which no launch reads.
std::vector<bool> weightsRead(const Plan &plan);

/// Elements of a shape (at the given step sizes), or -1 when a dimension is
/// negative or the count exceeds plan::kMaxElements. For sizes read from a
/// file before validatePlan has bounded them.
int64_t boundedElements(const std::vector<Dim> &shape, int64_t tokens,
                        int64_t batch);
int64_t boundedElements(const std::vector<int64_t> &shape);

/// Everything a backend relies on, checked before any memory is sized from
/// the plan: sizes and counts within plan/PlanLimits.h, indices in range,
/// weight buffers equal to their weights, cache and state buffers described
/// by the plan, every arena buffer inside the arena at the limits, events
/// between distinct streams and forward in issue order, and each launch's
/// operands as its kernel takes them (LaunchContracts.h). Empty when
/// valid, else the first problem.
std::string validatePlan(const Plan &plan);

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_PLAN_H

// validatePlan: everything a backend relies on, checked once before any
// memory is sized from the plan. A plan file passes its checksum whenever it
// was written whole, so the checks here are what stands between a damaged or
// hand-edited plan and an out-of-bounds write: every count and size is
// bounded (plan/PlanLimits.h), every index resolves, every buffer fits its
// storage, and every launch's operands fit each other (LaunchContracts.cpp).
#include "runtime/plan/LaunchContracts.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanLimits.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace strata::plan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// "" when lo <= v <= hi, else "WHAT V is outside [lo, hi]".
std::string outside(const std::string &what, int64_t v, int64_t lo,
                    int64_t hi) {
  if (v >= lo && v <= hi)
    return "";
  return what + " " + str(v) + " is outside [" + str(lo) + ", " + str(hi) + "]";
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string validateHeader(const Plan &plan) {
  if (!(plan.weightInitStd > 0.0 && plan.weightInitStd <= kMaxInitStd))
    return "weight init std must be in (0, " + str(int64_t(kMaxInitStd)) +
           "], got " + std::to_string(plan.weightInitStd);
  const Limits &lim = plan.limits;
  for (std::string bad :
       {outside("max tokens", lim.maxTokens, 1, kMaxTokensLimit),
        outside("max batch", lim.maxBatch, 1, kMaxBatchLimit),
        outside("vocabulary size", plan.vocabSize, 1, kMaxVocabSize),
        outside("max positions", plan.maxPositions, 1, kMaxPositions)})
    if (!bad.empty())
      return bad;
  if (lim.maxBatch > lim.maxTokens)
    return "max batch " + str(lim.maxBatch) + " exceeds max tokens " +
           str(lim.maxTokens);
  const KvCacheDesc &kv = plan.kvCache;
  if (std::string bad = outside("KV cache layers", kv.layers, 0, kMaxLayers);
      !bad.empty())
    return bad;
  if (kv.layers > 0) {
    for (std::string bad : {outside("KV heads", kv.kvHeads, 1, kMaxHeads),
                            outside("KV head dim", kv.headDim, 1, kMaxHeadDim)})
      if (!bad.empty())
        return bad;
    if (!isPowerOfTwo(kv.blockSize) || kv.blockSize > kMaxKvBlockSize)
      return "KV block size must be a power of two in [1, " +
             str(kMaxKvBlockSize) + "], got " + str(kv.blockSize);
    if (kv.dtype == DType::I32)
      return "the KV cache cannot be i32";
  }
  const LinearStateDesc &ls = plan.linearState;
  if (std::string bad =
          outside("linear state layers", ls.layers, 0, kMaxLayers);
      !bad.empty())
    return bad;
  if (ls.layers > 0)
    for (std::string bad :
         {outside("linear state heads", ls.heads, 1, kMaxHeads),
          outside("linear state key dim", ls.keyDim, 1, kMaxHeadDim),
          outside("linear state value dim", ls.valueDim, 1, kMaxHeadDim)})
      if (!bad.empty())
        return bad;
  return "";
}

std::string validateWeight(const Weight &w) {
  if (w.name.empty())
    return "a weight has no name";
  if (w.shape.empty() || int64_t(w.shape.size()) > kMaxRank)
    return "weight '" + w.name + "' has rank " + str(int64_t(w.shape.size())) +
           "; expected 1 to " + str(kMaxRank);
  for (int64_t d : w.shape)
    if (d < 1 || d > kMaxDimension)
      return "weight '" + w.name + "' has dimension " + str(d) +
             ", outside [1, " + str(kMaxDimension) + "]";
  if (boundedElements(w.shape) < 0)
    return "weight '" + w.name + "' has more than " + str(kMaxElements) +
           " elements";
  if (w.packedRows.size() != w.packedFrom.size())
    return "weight '" + w.name + "' lists " +
           str(int64_t(w.packedFrom.size())) + " packed sources but " +
           str(int64_t(w.packedRows.size())) + " row counts";
  if (!w.packedFrom.empty()) {
    int64_t rows = 0;
    for (int64_t r : w.packedRows) {
      if (r < 1 || r > w.shape[0])
        return "weight '" + w.name + "' packs a source of " + str(r) +
               " rows into a first dimension of " + str(w.shape[0]);
      rows += r;
    }
    if (rows != w.shape[0])
      return "weight '" + w.name + "' packs " + str(rows) +
             " rows into a first dimension of " + str(w.shape[0]);
  }
  return "";
}

std::string where(const Program &p, const std::string &what) {
  return "program '" + p.phase + "': " + what;
}

/// What the buffer's kind requires of its dtype, shape and storage.
std::string validateBuffer(const Plan &plan, const Program &p, int32_t i) {
  const Buffer &b = p.buffers[size_t(i)];
  const std::string name = "buffer '" + b.name + "'";
  if (int64_t(b.shape.size()) > kMaxRank)
    return name + " has rank " + str(int64_t(b.shape.size()));
  for (const Dim &d : b.shape) {
    if (d.symbol == Symbol::None && (d.value < 1 || d.value > kMaxDimension))
      return name + " has dimension " + str(d.value) + ", outside [1, " +
             str(kMaxDimension) + "]";
    if (d.symbol != Symbol::None && d.value != 0)
      return name + " has a symbolic dimension with a value";
  }
  if ((b.kind == BufferKind::Input) != (b.role != InputRole::None))
    return name + " is " + toString(b.kind) + " with input role '" +
           toString(b.role) + "'; inputs and only inputs have a role";
  const int64_t elements =
      boundedElements(b.shape, plan.limits.maxTokens, plan.limits.maxBatch);
  if (elements < 0)
    return name + " has more than " + str(kMaxElements) +
           " elements at the plan's limits";
  switch (b.kind) {
  case BufferKind::Arena: {
    const uint64_t bytes = uint64_t(elements) * byteWidth(b.dtype);
    if (b.arenaOffset > p.arenaBytes || bytes > p.arenaBytes - b.arenaOffset)
      return name + " at arena byte " + std::to_string(b.arenaOffset) +
             " takes " + std::to_string(bytes) +
             " bytes, beyond the arena of " + std::to_string(p.arenaBytes);
    if (b.viewOf == -1)
      return "";
    if (b.viewOf < 0 || b.viewOf >= i ||
        p.buffers[size_t(b.viewOf)].kind != BufferKind::Arena ||
        p.buffers[size_t(b.viewOf)].viewOf != -1)
      return name + " is a view of buffer " + str(b.viewOf) +
             ", which is not an earlier arena buffer of its own";
    const Buffer &base = p.buffers[size_t(b.viewOf)];
    if (base.dtype != b.dtype ||
        boundedElements(base.shape, plan.limits.maxTokens,
                        plan.limits.maxBatch) != elements ||
        base.arenaOffset != b.arenaOffset)
      return name + " is a view of '" + base.name +
             "' with another dtype, size or offset";
    return "";
  }
  case BufferKind::Weight: {
    if (b.weight < 0 || b.weight >= int32_t(plan.weights.size()))
      return name + " names weight " + str(b.weight) + " of " +
             str(int64_t(plan.weights.size()));
    const Weight &w = plan.weights[size_t(b.weight)];
    bool same = b.dtype == w.dtype && b.shape.size() == w.shape.size();
    for (size_t d = 0; same && d < b.shape.size(); ++d)
      same = b.shape[d] == Dim::constant(w.shape[d]);
    if (!same)
      return name + " does not match weight '" + w.name + "' (" +
             toString(w.dtype) + ", " + str(int64_t(w.shape.size())) +
             " dimensions, first " + str(w.shape[0]) + ")";
    break;
  }
  case BufferKind::Input: {
    // The sequence table is a handle without a shape; every other input
    // holds one value per token.
    const bool table = b.role == InputRole::Sequences;
    if (b.dtype != DType::I32 ||
        (table ? !b.shape.empty()
               : b.shape.size() != 1 || b.shape[0] != Dim::tokens()))
      return name + " is the " + toString(b.role) + " input but not " +
             (table ? "i32[]" : "i32[tokens]");
    break;
  }
  case BufferKind::Output:
    // The backends size outputs per step by their first dimension; the
    // logits (the one f32 output) are also checked by the program.
    if (b.dtype == DType::I32 || b.shape.empty() ||
        b.shape[0].symbol == Symbol::None)
      return name + " is an output that is not a float tensor counting "
                    "tokens or sequences first";
    if (b.dtype == DType::F32 &&
        (b.shape.size() != 2 || b.shape[1] != Dim::constant(plan.vocabSize)))
      return name + " is an f32 output that is not [batch or tokens, " +
             str(plan.vocabSize) + "] (the logits)";
    break;
  case BufferKind::KvCache:
    if (plan.kvCache.layers == 0 || b.dtype != plan.kvCache.dtype ||
        !b.shape.empty())
      return name + " is a KV cache that the plan's cache (" +
             str(plan.kvCache.layers) + " layers, " +
             toString(plan.kvCache.dtype) + ") does not describe";
    break;
  case BufferKind::LinearState:
    if (plan.linearState.layers == 0 || b.dtype != DType::F32 ||
        !b.shape.empty())
      return name + " is a linear state that the plan's state (" +
             str(plan.linearState.layers) + " layers, f32) does not describe";
    break;
  }
  if (b.viewOf != -1 || b.arenaOffset != 0)
    return name + " is not an arena buffer but has an arena offset or base";
  return "";
}

std::string validateProgram(const Plan &plan, const Program &p) {
  const int32_t numBuffers = int32_t(p.buffers.size());
  const int32_t numLaunches = int32_t(p.launches.size());
  if (p.numStreams < 1 || p.numStreams > kMaxStreams)
    return where(p, "stream count " + str(p.numStreams) + " is outside [1, " +
                        str(kMaxStreams) + "]");
  int logits = 0;
  std::set<InputRole> roles;
  for (int32_t i = 0; i < numBuffers; ++i) {
    if (std::string bad = validateBuffer(plan, p, i); !bad.empty())
      return where(p, bad);
    const Buffer &b = p.buffers[size_t(i)];
    logits += b.kind == BufferKind::Output && b.dtype == DType::F32;
    if (b.role != InputRole::None && !roles.insert(b.role).second)
      return where(p, "buffer '" + b.name + "' is a second " +
                          toString(b.role) + " input");
  }
  if (logits != 1)
    return where(p, "has " + str(logits) +
                        " f32 outputs; a program returns its logits as the "
                        "one f32 output");
  for (int32_t i = 0; i < numLaunches; ++i) {
    const Launch &l = p.launches[size_t(i)];
    const std::string launch = "launch " + str(i) + " (" + launchName(l) + ")";
    if (l.stream < 0 || l.stream >= p.numStreams)
      return where(p, launch + " is on stream " + str(l.stream) + " of " +
                          str(p.numStreams));
    for (const auto *list : {&l.inputs, &l.outputs})
      for (int32_t b : *list)
        if (b < 0 || b >= numBuffers)
          return where(p, launch + " uses buffer " + str(b) + " of " +
                              str(numBuffers));
    for (int32_t b : l.outputs) {
      BufferKind k = p.buffers[size_t(b)].kind;
      if (k == BufferKind::Weight || k == BufferKind::Input)
        return where(p, launch + " writes " + toString(k) + " buffer '" +
                            p.buffers[size_t(b)].name + "'");
    }
  }
  for (const Event &e : p.events) {
    if (e.from < 0 || e.to >= numLaunches || e.from >= e.to)
      return where(p, "event " + str(e.from) + " -> " + str(e.to) +
                          " does not go forward in issue order");
    if (p.launches[size_t(e.from)].stream == p.launches[size_t(e.to)].stream)
      return where(p, "event " + str(e.from) + " -> " + str(e.to) +
                          " joins a stream to itself");
  }
  return "";
}

} // namespace

int64_t boundedElements(const std::vector<Dim> &shape, int64_t tokens,
                        int64_t batch) {
  int64_t n = 1;
  for (const Dim &d : shape) {
    int64_t v = d.symbol == Symbol::Tokens  ? tokens
                : d.symbol == Symbol::Batch ? batch
                                            : d.value;
    if (v < 0 || (v > 0 && n > kMaxElements / v))
      return -1;
    n *= v;
  }
  return n;
}

int64_t boundedElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t v : shape) {
    if (v < 0 || (v > 0 && n > kMaxElements / v))
      return -1;
    n *= v;
  }
  return n;
}

/// The tokenizer's ids; its files are checked when the tokenizer is
/// loaded (runtime/tokenizer), which names the embedded file.
std::string validateTokenizer(const Plan &plan) {
  const TokenizerFiles &tk = plan.tokenizer;
  if (tk.empty()) {
    if (!tk.tokenizerConfig.empty() || !tk.generationConfig.empty() ||
        tk.bosId != -1 || !tk.eosIds.empty())
      return "the plan has tokenizer settings but no tokenizer.json";
    return "";
  }
  if (tk.bosId != -1)
    if (std::string bad = outside("BOS id", tk.bosId, 0, plan.vocabSize - 1);
        !bad.empty())
      return bad;
  if (tk.eosIds.size() > kMaxEosIds)
    return "the plan lists " + str(int64_t(tk.eosIds.size())) +
           " EOS ids; at most " + str(kMaxEosIds) + " are supported";
  for (int32_t id : tk.eosIds)
    if (std::string bad = outside("EOS id", id, 0, plan.vocabSize - 1);
        !bad.empty())
      return bad;
  return "";
}

/// The fusion record is printed by the tools: only pass flags, each once,
/// so that a damaged file cannot put control bytes on a terminal.
std::string validateFusions(const Plan &plan) {
  if (plan.fusions.empty())
    return "";
  if (int64_t(plan.fusions.size()) > kMaxFusionPasses)
    return "the plan lists " + str(int64_t(plan.fusions.size())) +
           " fusion passes; at most " + str(kMaxFusionPasses) +
           " are supported";
  std::set<std::string> names;
  for (size_t i = 0; i < plan.fusions.size(); ++i) {
    const std::string &name = plan.fusions[i].name;
    const bool flag =
        !name.empty() && int64_t(name.size()) <= kMaxPassNameLength &&
        std::all_of(name.begin(), name.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        });
    if (!flag)
      return "fusion pass " + str(int64_t(i)) +
             " is not named by a pass flag (1 to " + str(kMaxPassNameLength) +
             " of a-z, 0-9 and '-')";
    if (!names.insert(name).second)
      return "the fusion pass '" + name + "' is listed twice";
  }
  for (const Program &p : plan.programs)
    if (p.phase == "forward")
      return "the plan lists fusion passes, but its 'forward' program is "
             "the generic forward, which no fusion pass rewrites";
  return "";
}

std::string validatePlan(const Plan &plan) {
  if (std::string bad = validateHeader(plan); !bad.empty())
    return bad;
  if (std::string bad = validateTokenizer(plan); !bad.empty())
    return bad;
  if (std::string bad = validateFusions(plan); !bad.empty())
    return bad;
  std::set<std::string> weightNames;
  for (const Weight &w : plan.weights) {
    if (std::string bad = validateWeight(w); !bad.empty())
      return bad;
    if (!weightNames.insert(w.name).second)
      return "two weights are named '" + w.name + "'";
  }
  static const std::set<std::string> kPhases = {"forward", "prefill", "extend",
                                                "decode", "verify"};
  std::set<std::string> phases;
  for (const Program &p : plan.programs) {
    if (!kPhases.count(p.phase))
      return "unknown program '" + p.phase +
             "'; expected forward, prefill, extend, decode or verify";
    if (!phases.insert(p.phase).second)
      return "two programs are named '" + p.phase + "'";
    if (std::string bad = validateProgram(plan, p); !bad.empty())
      return bad;
    for (size_t i = 0; i < p.launches.size(); ++i)
      if (std::string bad = checkLaunchContract(plan, p, i); !bad.empty())
        return where(p, "launch " + str(int64_t(i)) + " (" +
                            launchName(p.launches[i]) + "): " + bad);
  }
  return "";
}

} // namespace strata::plan

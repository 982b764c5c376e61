#include "runtime/plan/LaunchContracts.h"

#include "runtime/plan/PlanLimits.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <type_traits>

namespace strata::plan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string dimText(const Dim &d) {
  return d.symbol == Symbol::Tokens  ? "tokens"
         : d.symbol == Symbol::Batch ? "batch"
                                     : str(d.value);
}

std::string shapeText(const std::vector<Dim> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + dimText(shape[i]);
  return s + "]";
}

bool isFloat(DType t) { return t != DType::I32; }

/// One launch's checks. Each check records the first failure and returns
/// false; later checks are skipped once one failed, so a kernel's check
/// list reads top to bottom like its signature.
class Contract {
public:
  Contract(const Plan &plan, const Program &p, const Launch &l)
      : plan_(plan), p_(p), l_(l) {}

  const std::string &error() const { return error_; }
  bool ok() const { return error_.empty(); }
  bool fail(const std::string &message) {
    if (error_.empty())
      error_ = message;
    return false;
  }

  const Buffer &in(size_t i) const { return p_.buffers[size_t(l_.inputs[i])]; }
  const Buffer &out(size_t i) const {
    return p_.buffers[size_t(l_.outputs[i])];
  }
  int64_t dim(const Buffer &b, size_t d) const { return b.shape[d].value; }

  /// Operand counts: inputs in [minIn, maxIn], exactly `outs` outputs.
  bool operands(size_t minIn, size_t maxIn, size_t outs) {
    if (!ok())
      return false;
    if (l_.inputs.size() < minIn || l_.inputs.size() > maxIn)
      return fail("takes " + str(int64_t(minIn)) +
                  (maxIn > minIn ? " to " + str(int64_t(maxIn)) : "") +
                  " inputs, has " + str(int64_t(l_.inputs.size())));
    if (l_.outputs.size() != outs)
      return fail("takes " + str(int64_t(outs)) + " outputs, has " +
                  str(int64_t(l_.outputs.size())));
    // Every float tensor the launch touches shares one storage type (the
    // activation type); the logits are always f32 and the linear state too.
    for (const auto *list : {&l_.inputs, &l_.outputs})
      for (int32_t i : *list) {
        const Buffer &b = p_.buffers[size_t(i)];
        if (b.kind == BufferKind::Input || b.kind == BufferKind::LinearState ||
            (b.kind == BufferKind::Output && b.dtype == DType::F32))
          continue;
        if (!haveAct_) {
          act_ = b.dtype;
          haveAct_ = true;
        }
        if (!isFloat(b.dtype) || b.dtype != act_)
          return fail(name(b) + " is " + toString(b.dtype) + " where the " +
                      "launch's other tensors are " + toString(act_));
      }
    return true;
  }

  static std::string name(const Buffer &b) {
    return std::string(toString(b.kind)) + " '" + b.name + "'";
  }

  /// An activation: an arena tensor [tokens, d1, ..., d(rank-1)], or such
  /// a tensor that the program returns.
  bool activation(const Buffer &b, size_t rank) {
    if (!ok())
      return false;
    if ((b.kind != BufferKind::Arena && b.kind != BufferKind::Output) ||
        b.shape.empty() || b.shape.size() != rank ||
        b.shape[0] != Dim::tokens())
      return fail(name(b) + " is " + shapeText(b.shape) + "; expected an " +
                  "activation of rank " + str(int64_t(rank)) +
                  " counting tokens first");
    for (size_t d = 1; d < rank; ++d)
      if (b.shape[d].symbol != Symbol::None)
        return fail(name(b) + " is " + shapeText(b.shape) +
                    "; only its first dimension may count tokens");
    return true;
  }
  bool weight(const Buffer &b, size_t rank) {
    if (!ok())
      return false;
    if (b.kind != BufferKind::Weight || b.shape.size() != rank)
      return fail(name(b) + " is " + shapeText(b.shape) + "; expected a " +
                  "weight of rank " + str(int64_t(rank)));
    return true;
  }
  bool kind(const Buffer &b, BufferKind k) {
    if (ok() && b.kind != k)
      return fail(name(b) + " is not a " + toString(k) + " buffer");
    return ok();
  }
  /// The step's sequence table, or one of the per-token inputs, as the
  /// plan marks its role.
  bool seqs(const Buffer &b) {
    if (ok() && (b.kind != BufferKind::Input || b.role != InputRole::Sequences))
      return fail(name(b) + " is not the step's sequence table");
    return ok();
  }
  bool tokenInput(const Buffer &b, InputRole role, const char *what) {
    if (ok() && (b.kind != BufferKind::Input || b.role != role))
      return fail(name(b) + " is not the step's " + what);
    return ok();
  }
  /// `b`'s dimension d equals `expected` (a plan or attribute size).
  bool dimIs(const Buffer &b, size_t d, int64_t expected,
             const std::string &what) {
    if (ok() && dim(b, d) != expected)
      return fail(name(b) + " is " + shapeText(b.shape) + "; dimension " +
                  str(int64_t(d)) + " should be " + str(expected) + " (" +
                  what + ")");
    return ok();
  }
  bool sameShape(const Buffer &a, const Buffer &b) {
    if (ok() && a.shape != b.shape)
      return fail(name(a) + " is " + shapeText(a.shape) + " but " + name(b) +
                  " is " + shapeText(b.shape));
    return ok();
  }

  /// A parameter within [lo, hi].
  bool intField(const char *n, int64_t v, int64_t lo, int64_t hi) {
    if (ok() && (v < lo || v > hi))
      return fail(std::string("parameter '") + n + "' is " + str(v) +
                  ", outside [" + str(lo) + ", " + str(hi) + "]");
    return ok();
  }
  /// A finite number; `positive` also excludes zero and negatives.
  bool floatField(const char *n, double v, bool positive) {
    if (ok() && (!std::isfinite(v) || (positive && !(v > 0.0))))
      return fail(std::string("parameter '") + n + "' is " + std::to_string(v) +
                  "; expected a finite" + (positive ? " positive" : "") +
                  " number");
    return ok();
  }
  /// Every number finite and every enum one of its values, whatever the
  /// kernel: the parameters of a plan read from a file arrive unchecked.
  void allFields() {
    forEachField(l_.params, [&](const char *n, const auto &v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, double>) {
        floatField(n, v, false);
      } else if constexpr (std::is_enum_v<T>) {
        if (ok() && static_cast<uint8_t>(v) > maxCode<T>())
          fail(std::string("parameter '") + n + "' has the invalid code " +
               str(static_cast<uint8_t>(v)));
      } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        for (size_t i = 0; ok() && i < v.size(); ++i)
          if (!std::isfinite(v[i]))
            fail(std::string("parameter '") + n +
                 "' has the non-finite "
                 "value " +
                 std::to_string(v[i]) + " at " + str(int64_t(i)));
      }
    });
  }

  /// The KV-cache layer a launch reads or writes.
  void kvLayer(int64_t layer) {
    if (ok() && plan_.kvCache.layers == 0)
      fail("the plan has no KV cache");
    intField("layer", layer, 0, plan_.kvCache.layers - 1);
  }
  /// A [tokens, heads, head dim] activation over the plan's KV head dim.
  bool heads(const Buffer &b, int64_t numHeads, const std::string &what) {
    return activation(b, 3) && dimIs(b, 1, numHeads, what) &&
           dimIs(b, 2, plan_.kvCache.headDim, "the KV cache's head dim");
  }
  /// Query heads grouped over the cache's KV heads.
  bool queryHeads(const Buffer &q) {
    if (!activation(q, 3) ||
        !dimIs(q, 2, plan_.kvCache.headDim, "the KV cache's head dim"))
      return false;
    if (dim(q, 1) % plan_.kvCache.kvHeads != 0)
      return fail(name(q) + " has " + str(dim(q, 1)) + " query heads, not a " +
                  "multiple of the KV cache's " + str(plan_.kvCache.kvHeads) +
                  " heads");
    return true;
  }
  void rotary(const RotaryParams &r, int64_t headDim) {
    if (intField("rotary_dim", r.rotaryDim, 2, headDim) && r.rotaryDim % 2)
      fail("parameter 'rotary_dim' is " + str(r.rotaryDim) +
           "; it must be even");
    floatField("theta", r.theta, true);
    floatField("scaling_factor", r.scalingFactor, true);
    floatField("low_freq_factor", r.lowFreqFactor, true);
    floatField("high_freq_factor", r.highFreqFactor, true);
    intField("original_max_positions", r.originalMaxPositions, 0,
             kMaxPositions);
  }
  void attention(double scale, int64_t slidingWindow) {
    floatField("scale", scale, true);
    intField("sliding_window", slidingWindow, 0, kMaxPositions);
  }
  /// Query heads grouped over the cache's KV heads, as a launch names them.
  void headCounts(int64_t hq, int64_t hkv) {
    intField("num_kv_heads", hkv, plan_.kvCache.kvHeads, plan_.kvCache.kvHeads);
    intField("num_q_heads", hq, hkv, kMaxHeads);
    if (ok() && hq % hkv)
      fail("parameter 'num_q_heads' is " + str(hq) +
           ", not a multiple of num_kv_heads " + str(hkv));
  }

  const Plan &plan() const { return plan_; }
  const Launch &launch() const { return l_; }

private:
  const Plan &plan_;
  const Program &p_;
  const Launch &l_;
  DType act_ = DType::BF16;
  bool haveAct_ = false;
  std::string error_;
};

void checkNorm(Contract &c, size_t rank, double eps) {
  if (!c.operands(2, 2, 1) || !c.activation(c.in(0), rank) ||
      !c.weight(c.in(1), 1) || !c.sameShape(c.out(0), c.in(0)))
    return;
  c.dimIs(c.in(1), 0, c.dim(c.in(0), rank - 1), "the normalised rows' width");
  c.floatField("eps", eps, true);
}

void checkLinear(Contract &c) {
  if (!c.operands(2, 3, 1) || !c.activation(c.in(0), 2) ||
      !c.weight(c.in(1), 2) || !c.activation(c.out(0), 2))
    return;
  const int64_t n = c.dim(c.in(1), 0), k = c.dim(c.in(1), 1);
  c.dimIs(c.in(0), 1, k, "the weight's columns");
  c.dimIs(c.out(0), 1, n, "the weight's rows");
  if (c.launch().inputs.size() == 3 && c.weight(c.in(2), 1))
    c.dimIs(c.in(2), 0, n, "the weight's rows");
}

void checkElementwise(Contract &c, size_t inputs) {
  if (!c.operands(inputs, inputs, 1) || !c.activation(c.out(0), 2))
    return;
  for (size_t i = 0; i < inputs; ++i)
    c.sameShape(c.in(i), c.out(0));
}

/// Split or merge heads: the same bytes under another shape.
void checkReshape(Contract &c) {
  if (!c.operands(1, 1, 1) ||
      !c.activation(c.in(0), std::max<size_t>(c.in(0).shape.size(), 1)) ||
      !c.activation(c.out(0), std::max<size_t>(c.out(0).shape.size(), 1)))
    return;
  if (boundedElements(c.in(0).shape, 1, 1) !=
      boundedElements(c.out(0).shape, 1, 1))
    c.fail(Contract::name(c.in(0)) + " and " + Contract::name(c.out(0)) +
           " are not the same rows under another shape");
}

void checkRopeKvWrite(Contract &c, const RopeKvWriteParams &p) {
  const Plan &plan = c.plan();
  if (!c.operands(4, 6, 2) || c.launch().inputs.size() == 5) {
    if (c.ok())
      c.fail("takes both QK-norm weights or neither");
    return;
  }
  c.kvLayer(p.layer);
  c.headCounts(p.numQHeads, p.numKvHeads);
  const int64_t hq = p.numQHeads, hkv = p.numKvHeads;
  const int64_t headDim = plan.kvCache.headDim;
  c.rotary(p.rotary, headDim);
  const bool packed = p.variant == RopeKvVariant::Packed;
  if (!c.heads(c.in(0), hq + 2 * hkv, "q, k and v heads") ||
      !c.tokenInput(c.in(1), InputRole::Positions, "positions") ||
      !c.kind(c.in(2), BufferKind::KvCache) || !c.seqs(c.in(3)) ||
      !c.heads(c.out(0), packed ? hq + 2 * hkv : hq,
               packed ? "q, k and v heads" : "query heads") ||
      !c.kind(c.out(1), BufferKind::KvCache))
    return;
  if (c.launch().inputs.size() == 6) {
    for (size_t i : {4, 5})
      if (c.weight(c.in(i), 1))
        c.dimIs(c.in(i), 0, headDim, "the head dim");
    c.floatField("qk_norm_eps", p.qkNormEps, true);
  } else if (c.ok() && p.qkNormEps != 0.0) {
    c.fail("parameter 'qk_norm_eps' is " + std::to_string(p.qkNormEps) +
           " but the launch has no QK-norm weights; expected 0");
  }
}

void checkCachedAttention(Contract &c, int64_t layer, double scale,
                          int64_t slidingWindow, bool tree) {
  const size_t inputs = tree ? 4 : 3;
  if (!c.operands(inputs, inputs, 1))
    return;
  c.kvLayer(layer);
  c.attention(scale, slidingWindow);
  if (!c.queryHeads(c.in(0)) || !c.kind(c.in(1), BufferKind::KvCache) ||
      !c.seqs(c.in(2)) || !c.sameShape(c.out(0), c.in(0)))
    return;
  if (tree)
    c.tokenInput(c.in(3), InputRole::ParentIds, "draft-tree parents");
}

void checkPrefillAttention(Contract &c, const PrefillAttentionParams &p) {
  const Plan &plan = c.plan();
  if (!c.operands(2, 2, 1))
    return;
  if (plan.kvCache.layers == 0) {
    c.fail("the plan has no KV cache");
    return;
  }
  c.headCounts(p.numQHeads, p.numKvHeads);
  c.attention(p.scale, p.slidingWindow);
  if (c.heads(c.in(0), p.numQHeads + 2 * p.numKvHeads, "q, k and v heads") &&
      c.seqs(c.in(1)))
    c.heads(c.out(0), p.numQHeads, "query heads");
}

void checkLightning(Contract &c, int64_t layer,
                    const std::vector<double> &rates) {
  const Plan &plan = c.plan();
  const LinearStateDesc &ls = plan.linearState;
  if (!c.operands(5, 5, 2))
    return;
  if (ls.layers == 0) {
    c.fail("the plan has no linear-attention state");
    return;
  }
  if (ls.keyDim != ls.valueDim) {
    c.fail("the lightning kernels take equal key and value dims; the plan's "
           "state has " +
           str(ls.keyDim) + " and " + str(ls.valueDim));
    return;
  }
  c.intField("layer", layer, 0, ls.layers - 1);
  if (c.ok() && int64_t(rates.size()) != ls.heads)
    c.fail("parameter 'decay_slopes' lists " + str(int64_t(rates.size())) +
           " rates; expected one per head (" + str(ls.heads) + ")");
  for (size_t h = 0; c.ok() && h < rates.size(); ++h)
    if (!std::isfinite(rates[h]) || !(rates[h] > 0.0))
      c.fail("decay slope " + str(int64_t(h)) + " is " +
             std::to_string(rates[h]) + "; expected a finite rate > 0");
  for (size_t i = 0; i < 3; ++i)
    if (c.activation(c.in(i), 3) &&
        c.dimIs(c.in(i), 1, ls.heads, "the state's heads"))
      c.dimIs(c.in(i), 2, ls.keyDim, "the state's key dim");
  if (c.kind(c.in(3), BufferKind::LinearState) && c.seqs(c.in(4)) &&
      c.sameShape(c.out(0), c.in(2)))
    c.kind(c.out(1), BufferKind::LinearState);
}

void checkLogits(Contract &c, const LogitsParams &p) {
  const Plan &plan = c.plan();
  if (!c.operands(3, 3, 1) || !c.activation(c.in(0), 2) ||
      !c.weight(c.in(1), 2) || !c.seqs(c.in(2)) ||
      !c.kind(c.out(0), BufferKind::Output))
    return;
  c.dimIs(c.in(1), 0, plan.vocabSize, "the vocabulary");
  c.dimIs(c.in(1), 1, c.dim(c.in(0), 1), "the hidden size");
  const Dim rows = p.allTokens ? Dim::tokens() : Dim::batch();
  if (c.ok() && c.out(0).shape[0] != rows)
    c.fail(
        "its output has a row per " +
        std::string(c.out(0).shape[0] == Dim::tokens() ? "token" : "sequence") +
        " but the launch computes one per " +
        (p.allTokens ? "token" : "sequence"));
}

void check(Contract &c) {
  const Plan &plan = c.plan();
  const Launch &l = c.launch();
  c.allFields();
  if (!c.ok())
    return;
  switch (l.kernel()) {
  case Kernel::Embedding:
    if (c.operands(2, 2, 1) &&
        c.tokenInput(c.in(0), InputRole::TokenIds, "token ids") &&
        c.weight(c.in(1), 2) && c.activation(c.out(0), 2) &&
        c.dimIs(c.in(1), 0, plan.vocabSize, "the vocabulary"))
      c.dimIs(c.out(0), 1, c.dim(c.in(1), 1), "the table's width");
    return;
  case Kernel::RmsNorm:
    checkNorm(c, 2, l.as<RmsNormParams>().eps);
    return;
  case Kernel::HeadNorm:
    checkNorm(c, 3, l.as<HeadNormParams>().eps);
    return;
  case Kernel::AddRmsNorm: {
    const auto &p = l.as<AddRmsNormParams>();
    if (c.operands(3, 3, 2) && c.activation(c.in(0), 2) &&
        c.sameShape(c.in(1), c.in(0)) && c.weight(c.in(2), 1) &&
        c.dimIs(c.in(2), 0, c.dim(c.in(0), 1), "the rows' width") &&
        c.sameShape(c.out(0), c.in(0)) && c.sameShape(c.out(1), c.in(0)))
      c.floatField("eps", p.eps, true);
    return;
  }
  case Kernel::Linear:
    checkLinear(c);
    return;
  case Kernel::SplitHeads:
  case Kernel::MergeHeads:
    checkReshape(c);
    return;
  case Kernel::SiluMul:
  case Kernel::SigmoidMul:
  case Kernel::Add:
    checkElementwise(c, 2);
    return;
  case Kernel::Silu:
    checkElementwise(c, 1);
    return;
  case Kernel::Swiglu:
    if (c.operands(1, 1, 1) && c.activation(c.in(0), 2) &&
        c.activation(c.out(0), 2))
      c.dimIs(c.in(0), 1, 2 * c.dim(c.out(0), 1),
              "gate and up, twice the output's width");
    return;
  case Kernel::HeadSlice: {
    const auto &p = l.as<HeadSliceParams>();
    if (!c.operands(1, 1, 1) || !c.activation(c.in(0), 3) ||
        !c.activation(c.out(0), 3))
      return;
    const int64_t heads = c.dim(c.in(0), 1);
    if (c.intField("first", p.first, 0, heads - 1) &&
        c.intField("num_heads", p.numHeads, 1, heads - p.first) &&
        c.dimIs(c.out(0), 1, p.numHeads, "num_heads"))
      c.dimIs(c.out(0), 2, c.dim(c.in(0), 2), "the head dim");
    return;
  }
  case Kernel::Rope:
    if (c.operands(2, 2, 1) && c.activation(c.in(0), 3) &&
        c.tokenInput(c.in(1), InputRole::Positions, "positions") &&
        c.sameShape(c.out(0), c.in(0)))
      c.rotary(l.as<RopeParams>().rotary, c.dim(c.in(0), 2));
    return;
  case Kernel::KvAppend:
    if (!c.operands(4, 4, 1))
      return;
    c.kvLayer(l.as<KvAppendParams>().layer);
    for (size_t i : {0, 1})
      c.heads(c.in(i), plan.kvCache.kvHeads, "the KV cache's heads");
    if (c.kind(c.in(2), BufferKind::KvCache) && c.seqs(c.in(3)))
      c.kind(c.out(0), BufferKind::KvCache);
    return;
  case Kernel::Attention: {
    const auto &p = l.as<AttentionParams>();
    checkCachedAttention(c, p.layer, p.scale, p.slidingWindow, false);
    return;
  }
  case Kernel::ExtendAttention: {
    const auto &p = l.as<ExtendAttentionParams>();
    checkCachedAttention(c, p.layer, p.scale, p.slidingWindow, false);
    return;
  }
  case Kernel::PagedDecodeAttention: {
    const auto &p = l.as<PagedDecodeAttentionParams>();
    checkCachedAttention(c, p.layer, p.scale, p.slidingWindow, false);
    c.intField("max_splits", p.maxSplits, 1, 1024);
    return;
  }
  case Kernel::TreeAttention: {
    const auto &p = l.as<TreeAttentionParams>();
    checkCachedAttention(c, p.layer, p.scale, p.slidingWindow, true);
    return;
  }
  case Kernel::PrefillAttention:
    checkPrefillAttention(c, l.as<PrefillAttentionParams>());
    return;
  case Kernel::RopeKvWrite:
    checkRopeKvWrite(c, l.as<RopeKvWriteParams>());
    return;
  case Kernel::LinearAttention: {
    const auto &p = l.as<LinearAttentionParams>();
    checkLightning(c, p.layer, p.decaySlopes);
    return;
  }
  case Kernel::LightningPrefill: {
    const auto &p = l.as<LightningPrefillParams>();
    checkLightning(c, p.layer, p.decaySlopes);
    c.intField("chunk_size", p.chunkSize, 1, 4096);
    return;
  }
  case Kernel::LightningDecode: {
    const auto &p = l.as<LightningDecodeParams>();
    checkLightning(c, p.layer, p.decaySlopes);
    return;
  }
  case Kernel::Logits:
    checkLogits(c, l.as<LogitsParams>());
    return;
  }
  c.fail("unknown kernel code " + str(int64_t(l.params.index())));
}

} // namespace

std::string checkLaunchContract(const Plan &plan, const Program &program,
                                size_t index) {
  Contract c(plan, program, program.launches[index]);
  check(c);
  return c.error();
}

} // namespace strata::plan

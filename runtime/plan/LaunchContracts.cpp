#include "runtime/plan/LaunchContracts.h"

#include "runtime/plan/PlanLimits.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

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
  /// The step's sequence table (`seqs`), or one of the token inputs:
  /// "arg0" the token ids, "arg1" the positions, any other i32[tokens]
  /// input the draft tree's parents.
  bool seqs(const Buffer &b) {
    if (ok() && (b.kind != BufferKind::Input || !b.shape.empty()))
      return fail(name(b) + " is not the step's sequence table");
    return ok();
  }
  bool tokenInput(const Buffer &b, const char *what, bool named,
                  const char *argName) {
    if (!ok())
      return false;
    bool isTokens = b.kind == BufferKind::Input && b.shape.size() == 1;
    bool nameOk =
        named ? b.name == argName : b.name != "arg0" && b.name != "arg1";
    if (!isTokens || !nameOk)
      return fail(name(b) + " is not the step's " + what);
    return true;
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

  const Attr *attr(const char *n) const {
    for (const Attr &a : l_.attrs)
      if (a.name == n)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const char *n, int64_t lo, int64_t hi, bool required = true) {
    const Attr *a = attr(n);
    if (!ok() || (!a && !required))
      return lo;
    const int64_t *v = a ? std::get_if<int64_t>(&a->value) : nullptr;
    if (!v)
      return fail(std::string(a ? "attribute '" : "missing attribute '") + n +
                  (a ? "' is not an integer" : "'")),
             lo;
    if (*v < lo || *v > hi)
      return fail(std::string("attribute '") + n + "' is " + str(*v) +
                  ", outside [" + str(lo) + ", " + str(hi) + "]"),
             lo;
    return *v;
  }
  /// A finite number; `positive` also excludes zero and negatives.
  double floatAttr(const char *n, bool positive, bool required = true) {
    const Attr *a = attr(n);
    if (!ok() || (!a && !required))
      return 1.0;
    const double *v = a ? std::get_if<double>(&a->value) : nullptr;
    if (!v)
      return fail(std::string(a ? "attribute '" : "missing attribute '") + n +
                  (a ? "' is not a number" : "'")),
             1.0;
    if (!std::isfinite(*v) || (positive && !(*v > 0.0)))
      return fail(std::string("attribute '") + n + "' is " +
                  std::to_string(*v) + "; expected a finite" +
                  (positive ? " positive" : "") + " number"),
             1.0;
    return *v;
  }
  bool stringAttr(const char *n, std::initializer_list<const char *> allowed) {
    const Attr *a = attr(n);
    if (!ok())
      return false;
    const std::string *v = a ? std::get_if<std::string>(&a->value) : nullptr;
    std::string list;
    for (const char *s : allowed) {
      if (v && *v == s)
        return true;
      list += std::string(list.empty() ? "" : ", ") + s;
    }
    return fail(std::string("attribute '") + n + "' must be one of " + list);
  }

  /// The KV-cache layer a launch reads or writes.
  void kvLayer() {
    if (plan_.kvCache.layers == 0)
      fail("the plan has no KV cache");
    intAttr("layer", 0, plan_.kvCache.layers - 1);
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
  void ropeAttrs(int64_t headDim) {
    int64_t rot = intAttr("rotary_dim", 2, headDim);
    if (ok() && rot % 2)
      fail("attribute 'rotary_dim' is " + str(rot) + "; it must be even");
    floatAttr("theta", true);
    stringAttr("pairing", {"neox", "gptj"});
    stringAttr("scaling", {"none", "linear", "llama3"});
    floatAttr("scaling_factor", true, false);
    floatAttr("low_freq_factor", true, false);
    floatAttr("high_freq_factor", true, false);
    intAttr("original_max_positions", 0, kMaxPositions, false);
  }
  void attentionAttrs() {
    floatAttr("scale", true);
    intAttr("sliding_window", 0, kMaxPositions, false);
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

void checkNorm(Contract &c, size_t rank) {
  if (!c.operands(2, 2, 1) || !c.activation(c.in(0), rank) ||
      !c.weight(c.in(1), 1) || !c.sameShape(c.out(0), c.in(0)))
    return;
  c.dimIs(c.in(1), 0, c.dim(c.in(0), rank - 1), "the normalised rows' width");
  c.floatAttr("eps", true);
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
  c.floatAttr("lhs_scale", false, false);
  c.floatAttr("rhs_scale", false, false);
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

void checkRopeKvWrite(Contract &c) {
  const Plan &plan = c.plan();
  const std::string &variant = c.launch().variant;
  if (variant != "packed" && variant != "continuous" && variant != "tree") {
    c.fail("variant '" + variant + "' is not packed, continuous or tree");
    return;
  }
  if (!c.operands(4, 6, 2) || c.launch().inputs.size() == 5) {
    if (c.ok())
      c.fail("takes both QK-norm weights or neither");
    return;
  }
  c.kvLayer();
  const int64_t hkv =
      c.intAttr("num_kv_heads", plan.kvCache.kvHeads, plan.kvCache.kvHeads);
  const int64_t hq = c.intAttr("num_q_heads", hkv, kMaxHeads);
  if (c.ok() && hq % hkv)
    c.fail("num_q_heads " + str(hq) + " is not a multiple of num_kv_heads " +
           str(hkv));
  const int64_t headDim = plan.kvCache.headDim;
  c.ropeAttrs(headDim);
  if (!c.heads(c.in(0), hq + 2 * hkv, "q, k and v heads") ||
      !c.tokenInput(c.in(1), "positions", true, "arg1") ||
      !c.kind(c.in(2), BufferKind::KvCache) || !c.seqs(c.in(3)) ||
      !c.heads(c.out(0), variant == "packed" ? hq + 2 * hkv : hq,
               variant == "packed" ? "q, k and v heads" : "query heads") ||
      !c.kind(c.out(1), BufferKind::KvCache))
    return;
  if (c.launch().inputs.size() == 6) {
    for (size_t i : {4, 5})
      if (c.weight(c.in(i), 1))
        c.dimIs(c.in(i), 0, headDim, "the head dim");
    c.floatAttr("qk_norm_eps", true);
  }
}

void checkCachedAttention(Contract &c, bool tree) {
  const size_t inputs = tree ? 4 : 3;
  if (!c.operands(inputs, inputs, 1))
    return;
  c.kvLayer();
  c.attentionAttrs();
  c.intAttr("max_splits", 1, 1024, false);
  if (!c.queryHeads(c.in(0)) || !c.kind(c.in(1), BufferKind::KvCache) ||
      !c.seqs(c.in(2)) || !c.sameShape(c.out(0), c.in(0)))
    return;
  if (tree)
    c.tokenInput(c.in(3), "draft-tree parents", false, "");
}

void checkPrefillAttention(Contract &c) {
  const Plan &plan = c.plan();
  if (!c.operands(2, 2, 1))
    return;
  if (plan.kvCache.layers == 0) {
    c.fail("the plan has no KV cache");
    return;
  }
  const int64_t hkv =
      c.intAttr("num_kv_heads", plan.kvCache.kvHeads, plan.kvCache.kvHeads);
  const int64_t hq = c.intAttr("num_q_heads", hkv, kMaxHeads);
  if (c.ok() && hq % hkv)
    c.fail("num_q_heads " + str(hq) + " is not a multiple of num_kv_heads " +
           str(hkv));
  c.attentionAttrs();
  if (c.heads(c.in(0), hq + 2 * hkv, "q, k and v heads") && c.seqs(c.in(1)))
    c.heads(c.out(0), hq, "query heads");
}

void checkLightning(Contract &c, bool generic) {
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
  c.intAttr("layer", 0, ls.layers - 1);
  if (!generic && c.launch().kernel == "lightning_prefill")
    c.intAttr("chunk_size", 1, 4096);
  const Attr *slopes = c.attr("decay_slopes");
  const auto *rates =
      slopes ? std::get_if<std::vector<double>>(&slopes->value) : nullptr;
  if (c.ok() && (!rates || int64_t(rates->size()) != ls.heads))
    c.fail("attribute 'decay_slopes' must list one rate per head (" +
           str(ls.heads) + ")");
  for (size_t h = 0; c.ok() && rates && h < rates->size(); ++h)
    if (!std::isfinite((*rates)[h]) || !((*rates)[h] > 0.0))
      c.fail("decay slope " + str(int64_t(h)) + " is " +
             std::to_string((*rates)[h]) + "; expected a finite rate > 0");
  for (size_t i = 0; i < 3; ++i)
    if (c.activation(c.in(i), 3) &&
        c.dimIs(c.in(i), 1, ls.heads, "the state's heads"))
      c.dimIs(c.in(i), 2, ls.keyDim, "the state's key dim");
  if (c.kind(c.in(3), BufferKind::LinearState) && c.seqs(c.in(4)) &&
      c.sameShape(c.out(0), c.in(2)))
    c.kind(c.out(1), BufferKind::LinearState);
}

void checkLogits(Contract &c) {
  const Plan &plan = c.plan();
  if (!c.operands(3, 3, 1) || !c.activation(c.in(0), 2) ||
      !c.weight(c.in(1), 2) || !c.seqs(c.in(2)) ||
      !c.kind(c.out(0), BufferKind::Output))
    return;
  c.dimIs(c.in(1), 0, plan.vocabSize, "the vocabulary");
  c.dimIs(c.in(1), 1, c.dim(c.in(0), 1), "the hidden size");
  const bool all =
      c.intAttr("all_tokens", 0, 1, false) == 1 && c.attr("all_tokens");
  const Dim rows = all ? Dim::tokens() : Dim::batch();
  if (c.ok() && c.out(0).shape[0] != rows)
    c.fail(
        "its output has a row per " +
        std::string(c.out(0).shape[0] == Dim::tokens() ? "token" : "sequence") +
        " but the launch computes one per " + (all ? "token" : "sequence"));
}

void check(Contract &c) {
  const Plan &plan = c.plan();
  const Launch &l = c.launch();
  const std::string &k = l.kernel;
  const bool noVariant = l.variant.empty();
  if (k == "embedding" && noVariant) {
    if (c.operands(2, 2, 1) &&
        c.tokenInput(c.in(0), "token ids", true, "arg0") &&
        c.weight(c.in(1), 2) && c.activation(c.out(0), 2) &&
        c.dimIs(c.in(1), 0, plan.vocabSize, "the vocabulary"))
      c.dimIs(c.out(0), 1, c.dim(c.in(1), 1), "the table's width");
  } else if (k == "rms_norm" && noVariant) {
    checkNorm(c, 2);
  } else if (k == "head_norm" && noVariant) {
    checkNorm(c, 3);
  } else if (k == "add_rms_norm" && noVariant) {
    if (c.operands(3, 3, 2) && c.activation(c.in(0), 2) &&
        c.sameShape(c.in(1), c.in(0)) && c.weight(c.in(2), 1) &&
        c.dimIs(c.in(2), 0, c.dim(c.in(0), 1), "the rows' width") &&
        c.sameShape(c.out(0), c.in(0)) && c.sameShape(c.out(1), c.in(0))) {
      c.floatAttr("eps", true);
      c.floatAttr("x_scale", false, false);
      c.floatAttr("residual_scale", false, false);
    }
  } else if (k == "linear" && noVariant) {
    checkLinear(c);
  } else if ((k == "split_heads" || k == "merge_heads") && noVariant) {
    checkReshape(c);
  } else if ((k == "silu_mul" || k == "sigmoid_mul" || k == "add") &&
             noVariant) {
    checkElementwise(c, 2);
  } else if (k == "silu" && noVariant) {
    checkElementwise(c, 1);
  } else if (k == "swiglu" && noVariant) {
    if (c.operands(1, 1, 1) && c.activation(c.in(0), 2) &&
        c.activation(c.out(0), 2))
      c.dimIs(c.in(0), 1, 2 * c.dim(c.out(0), 1),
              "gate and up, twice the output's width");
  } else if (k == "head_slice" && noVariant) {
    if (!c.operands(1, 1, 1) || !c.activation(c.in(0), 3) ||
        !c.activation(c.out(0), 3))
      return;
    const int64_t heads = c.dim(c.in(0), 1);
    const int64_t first = c.intAttr("first", 0, heads - 1);
    const int64_t count = c.intAttr("num_heads", 1, heads - first);
    if (c.dimIs(c.out(0), 1, count, "num_heads"))
      c.dimIs(c.out(0), 2, c.dim(c.in(0), 2), "the head dim");
  } else if (k == "rope" && noVariant) {
    if (c.operands(2, 2, 1) && c.activation(c.in(0), 3) &&
        c.tokenInput(c.in(1), "positions", true, "arg1") &&
        c.sameShape(c.out(0), c.in(0)))
      c.ropeAttrs(c.dim(c.in(0), 2));
  } else if (k == "kv_append" && noVariant) {
    if (!c.operands(4, 4, 1))
      return;
    c.kvLayer();
    for (size_t i : {0, 1})
      c.heads(c.in(i), plan.kvCache.kvHeads, "the KV cache's heads");
    if (c.kind(c.in(2), BufferKind::KvCache) && c.seqs(c.in(3)))
      c.kind(c.out(0), BufferKind::KvCache);
  } else if (k == "attention" && l.variant == "softmax") {
    checkCachedAttention(c, false);
  } else if (k == "attention" && l.variant == "linear") {
    checkLightning(c, true);
  } else if ((k == "extend_attention" || k == "paged_decode_attention") &&
             noVariant) {
    checkCachedAttention(c, false);
  } else if (k == "tree_attention" && noVariant) {
    checkCachedAttention(c, true);
  } else if (k == "prefill_attention" && noVariant) {
    checkPrefillAttention(c);
  } else if (k == "rope_kv_write") {
    checkRopeKvWrite(c);
  } else if ((k == "lightning_prefill" || k == "lightning_decode") &&
             noVariant) {
    checkLightning(c, false);
  } else if (k == "logits" && noVariant) {
    checkLogits(c);
  } else {
    c.fail("unknown kernel");
  }
}

} // namespace

std::string checkLaunchContract(const Plan &plan, const Program &program,
                                size_t index) {
  Contract c(plan, program, program.launches[index]);
  check(c);
  return c.error();
}

} // namespace strata::plan

// Hugging Face config.json → strata model file. The JSON is read with
// yaml-cpp (a JSON document is YAML flow syntax), so values keep their
// positions and the scalar checks of YamlReader.h apply unchanged.
#include "models/HfConfigImporter.h"

#include "models/HfConfigFields.h"
#include "models/YamlReader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace strata {

using detail::Field;
using detail::ImportError;
using detail::YamlContext;

namespace {

using Arch = detail::HfArch;
using ArchInfo = detail::HfArchInfo;

// The converter writes per-layer lines (layer kinds, MiniMax's decay slopes
// of every head), so the counts that size them are bounded: the largest
// published models have under 200 layers and 128 heads, and a value far
// beyond that is a damaged config, not a model to spend gigabytes of text on.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// The model file under construction, one line at a time, each remembering
/// the config field it came from: when the final import rejects a line, the
/// message points at that field in config.json rather than at text the user
/// never wrote.
class YamlOut {
public:
  void line(const std::string &text,
            const YAML::Mark &from = YAML::Mark::null_mark()) {
    lines_.push_back(text);
    marks_.push_back(from);
  }
  std::string text() const {
    std::string out;
    for (const std::string &l : lines_)
      out += l + "\n";
    return out;
  }
  /// Source of 1-based output line `line`.
  YAML::Mark source(int line) const {
    if (line < 1 || line > static_cast<int>(marks_.size()))
      return YAML::Mark::null_mark();
    return marks_[line - 1];
  }

private:
  std::vector<std::string> lines_;
  std::vector<YAML::Mark> marks_;
};

struct RopeScalingOut {
  std::string type; // "" for none
  Field typeField;
  std::vector<std::pair<std::string, Field>> params;
};

class Converter {
public:
  Converter(const YamlContext &ctx, const YAML::Node &root,
            const HfConvertOptions &options)
      : ctx_(ctx), options_(options) {
    root_ = Field{"", root, root.Mark()};
  }

  std::string convert(YamlOut &out);

private:
  /// The field when present and not null.
  std::optional<Field> get(const std::string &key) const {
    auto it = fields_.find(key);
    if (it == fields_.end() || it->second.node.IsNull())
      return std::nullopt;
    return it->second;
  }
  Field require(const std::string &key) const {
    auto f = get(key);
    if (!f)
      ctx_.fail(root_, "missing required field '" + key + "'");
    return *f;
  }
  /// The validated number as written in config.json, so that no digit is
  /// lost between the two files.
  std::string numberText(const Field &f) const {
    ctx_.number(f);
    return f.node.Scalar();
  }
  std::string positiveNumberText(const Field &f) const {
    ctx_.positiveNumber(f);
    return f.node.Scalar();
  }

  void readFields();
  const ArchInfo &readArchitecture();
  void checkUnknownFields(const ArchInfo &arch);
  void checkMiniMaxExtras();
  /// MiniMax's alpha/beta factors as `residual_scale`, for the block kinds
  /// the model has; nothing when all are 1.
  void residualScale(YamlOut &out, bool anySoftmax, bool anyLinear);
  std::string dtype();
  RopeScalingOut ropeScaling();
  std::vector<std::string> layerKinds(Arch arch, int64_t numLayers,
                                      Field &from);
  /// Fails unless the list `f` has one entry per layer.
  void checkPerLayer(const Field &f, const std::vector<Field> &list,
                     int64_t numLayers) const;
  void checkUnsupportedSwitches();
  /// The `attention:` section (softmax layers): heads, rope and its
  /// scaling; `window` given when some layer slides.
  void attentionSection(YamlOut &out, Arch arch, const Field &heads,
                        int64_t headDim, const YAML::Mark &headDimMark,
                        const std::optional<Field> &window);
  /// The `linear_attention:` section: heads and each linear layer's
  /// decay slopes.
  void linearAttentionSection(YamlOut &out, const Field &heads, int64_t headDim,
                              const YAML::Mark &headDimMark, int64_t numLayers,
                              int64_t numHeads,
                              const std::vector<std::string> &kinds);

  const YamlContext &ctx_;
  const HfConvertOptions &options_;
  Field root_;
  std::map<std::string, Field> fields_;
  std::vector<std::string> order_;
};

void Converter::readFields() {
  if (!root_.node.IsMap())
    ctx_.fail(root_, "expected a JSON object at the top of config.json, got " +
                         YamlContext::describe(root_.node));
  for (auto it = root_.node.begin(); it != root_.node.end(); ++it) {
    const YAML::Node &key = it->first;
    if (!key.IsScalar())
      ctx_.fail(key.Mark(), "expected a string key");
    const std::string &name = key.Scalar();
    auto prev = fields_.find(name);
    if (prev != fields_.end())
      ctx_.fail(key.Mark(),
                "duplicate field '" + name + "' (first given at line " +
                    std::to_string(prev->second.anchor.line + 1) + ")");
    fields_[name] = Field{name, it->second, key.Mark()};
    order_.push_back(name);
  }
}

const ArchInfo &Converter::readArchitecture() {
  Field f = require("architectures");
  std::vector<Field> list = ctx_.sequence(f);
  if (list.empty())
    ctx_.fail(f, "'architectures' is empty; expected the model class, such "
                 "as \"LlamaForCausalLM\"");
  std::string name = ctx_.string(list[0]);
  for (const ArchInfo &a : detail::hfArchitectures())
    if (name == a.name)
      return a;
  ctx_.fail(list[0], "unsupported architecture '" + name + "'; supported: " +
                         detail::joinNames(supportedHfArchitectures()));
}

void Converter::checkUnknownFields(const ArchInfo &arch) {
  std::set<std::string> known;
  for (const std::string &n : detail::hfHarmlessFields())
    known.insert(n);
  for (const std::string &n : detail::hfMappedFields())
    known.insert(n);
  for (const std::string &n : detail::hfArchSpecificFields(arch.arch))
    known.insert(n);
  std::vector<std::string> unknown;
  for (const std::string &name : order_)
    if (!known.count(name))
      unknown.push_back(name);
  if (unknown.empty())
    return;
  std::string list;
  for (size_t i = 0; i < unknown.size(); ++i)
    list += (i ? ", '" : "'") + unknown[i] + "'";
  ctx_.fail(fields_.at(unknown[0]).anchor,
            std::string(unknown.size() == 1 ? "unsupported field "
                                            : "unsupported fields ") +
                list + " for " + arch.name +
                "; they may change the model and the converter does not "
                "know them");
}

void Converter::residualScale(YamlOut &out, bool anySoftmax, bool anyLinear) {
  // hfMiniMaxResidualFactors lists the original names (index 0-5) then
  // transformers' (6-11), each as full attention, linear attention, MLP
  // with alpha before beta.
  const std::vector<std::string> &factors = detail::hfMiniMaxResidualFactors();
  struct Block {
    const char *key;
    bool present;
  } blocks[] = {{"attention", anySoftmax},
                {"linear_attention", anyLinear},
                {"mlp", true}};
  std::vector<std::pair<std::string, YAML::Mark>> lines;
  for (int blk = 0; blk < 3; ++blk) {
    std::string entry;
    YAML::Mark mark = YAML::Mark::null_mark();
    for (int which = 0; which < 2; ++which) {
      const std::string &original = factors[2 * blk + which];
      const std::string &renamed = factors[6 + 2 * blk + which];
      std::optional<Field> a = get(original), b = get(renamed);
      if (a && b && ctx_.number(*a) != ctx_.number(*b))
        ctx_.fail(*b, "'" + renamed + "' is " + b->node.Scalar() + " but '" +
                          original + "' is " + a->node.Scalar() +
                          "; they name the same factor");
      std::optional<Field> f = b ? b : a;
      if (!f || ctx_.number(*f) == 1.0)
        continue;
      entry += std::string(entry.empty() ? "" : ", ") +
               (which == 0 ? "alpha: " : "beta: ") + f->node.Scalar();
      mark = f->mark();
    }
    if (!entry.empty() && blocks[blk].present)
      lines.push_back(
          {"  " + std::string(blocks[blk].key) + ": {" + entry + "}", mark});
  }
  if (lines.empty())
    return;
  out.line("residual_scale:");
  for (const auto &[text, mark] : lines)
    out.line(text, mark);
}

/// MiniMax fields that v1 cannot express unless they have their neutral
/// value.
void Converter::checkMiniMaxExtras() {
  // transformers' MiniMax layers always continue the residual stream from
  // the normed input (the original code's postnorm); the converted file says
  // `residual: normed`, so a config that asks for the other form is wrong.
  if (auto f = get("postnorm"))
    if (!ctx_.boolean(*f))
      ctx_.fail(*f, "'postnorm' false is not supported: MiniMaxForCausalLM "
                    "adds each block's output to its normed input");
  // The MLP is a mixture of experts. With one expert, routed to by every
  // token (a softmax over one logit is exactly 1), it is a dense MLP; the
  // weights loader maps that expert's tensors.
  Field experts = require("num_local_experts");
  if (ctx_.positiveInt(experts) > 1)
    ctx_.fail(experts, "mixture-of-experts MLPs are not supported "
                       "('num_local_experts' is " +
                           experts.node.Scalar() + "; only 1 is)");
  Field perToken = require("num_experts_per_tok");
  if (ctx_.positiveInt(perToken) != 1)
    ctx_.fail(perToken, "'num_experts_per_tok' is " + perToken.node.Scalar() +
                            "; with a single expert it must be 1");
  if (auto f = get("shared_intermediate_size"))
    if (ctx_.integer(*f) != 0)
      ctx_.fail(*f, "shared-expert MLPs are not supported "
                    "('shared_intermediate_size' is " +
                        f->node.Scalar() + ")");
  if (auto f = get("sliding_window"))
    ctx_.fail(*f, "'sliding_window' is not supported for MiniMaxForCausalLM");
}

std::string Converter::dtype() {
  std::optional<Field> f = get("dtype");
  std::optional<Field> legacy = get("torch_dtype");
  if (f && legacy && ctx_.string(*f) != ctx_.string(*legacy))
    ctx_.fail(*legacy, "'torch_dtype' (" + ctx_.string(*legacy) +
                           ") and 'dtype' (" + ctx_.string(*f) + ") disagree");
  if (!f)
    f = legacy;
  if (!f)
    return "";
  std::string v = ctx_.string(*f);
  if (v == "bfloat16")
    return "bf16";
  if (v == "float16")
    return "f16";
  if (v == "float32")
    return "f32";
  ctx_.fail(*f, "unsupported dtype '" + v + "' in '" + f->path +
                    "'; supported: bfloat16, float16, float32");
}

RopeScalingOut Converter::ropeScaling() {
  RopeScalingOut out;
  std::optional<Field> scaling = get("rope_scaling");
  std::optional<Field> params = get("rope_parameters");
  if (scaling && params)
    ctx_.fail(*params, "both 'rope_scaling' and 'rope_parameters' are given; "
                       "expected one of them");
  std::optional<Field> src = scaling ? scaling : params;
  if (!src)
    return out;
  if (!src->node.IsMap())
    ctx_.fail(*src, "expected an object for '" + src->path + "', got " +
                        YamlContext::describe(src->node));
  std::map<std::string, Field> entries;
  std::vector<std::string> order;
  for (auto it = src->node.begin(); it != src->node.end(); ++it) {
    std::string key = it->first.Scalar();
    if (entries.count(key))
      ctx_.fail(it->first.Mark(),
                "duplicate field '" + src->path + "." + key + "'");
    entries[key] = Field{src->path + "." + key, it->second, it->first.Mark()};
    order.push_back(key);
  }
  auto entry = [&](const std::string &key) -> std::optional<Field> {
    auto it = entries.find(key);
    if (it == entries.end() || it->second.node.IsNull())
      return std::nullopt;
    return it->second;
  };
  std::optional<Field> type = entry("rope_type");
  if (auto legacy = entry("type")) {
    if (type && ctx_.string(*type) != ctx_.string(*legacy))
      ctx_.fail(*legacy,
                "'" + legacy->path + "' and '" + type->path + "' disagree");
    if (!type)
      type = legacy;
  }
  std::string kind = type ? ctx_.string(*type) : "default";
  if (!type && src->path == "rope_scaling")
    ctx_.fail(*src, "missing 'rope_type' in 'rope_scaling'");
  std::vector<std::string> required;
  if (kind == "linear")
    required = {"factor"};
  else if (kind == "llama3")
    required = {"factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"};
  else if (kind != "default")
    ctx_.fail(*type, "unsupported rope scaling type '" + kind + "' in '" +
                         type->path + "'; supported: default, linear, llama3");

  // rope_parameters also carries the base and the partial rotary factor in
  // newer configs; Converter::convert reads those.
  std::set<std::string> allowed = {"rope_type", "type"};
  if (src->path == "rope_parameters") {
    allowed.insert("rope_theta");
    allowed.insert("partial_rotary_factor");
  }
  for (const std::string &r : required)
    allowed.insert(r);
  for (const std::string &key : order)
    if (!allowed.count(key))
      ctx_.fail(entries.at(key).anchor, "unsupported field '" + src->path +
                                            "." + key + "' for rope type '" +
                                            kind + "'");
  if (kind == "default")
    return out;
  out.type = kind;
  out.typeField = *type;
  for (const std::string &r : required) {
    std::optional<Field> f = entry(r);
    if (!f)
      ctx_.fail(*src, "missing '" + r + "' in '" + src->path +
                          "' (required by rope type '" + kind + "')");
    out.params.push_back({r, *f});
  }
  return out;
}

void Converter::checkPerLayer(const Field &f, const std::vector<Field> &list,
                              int64_t numLayers) const {
  if (static_cast<int64_t>(list.size()) != numLayers)
    ctx_.fail(f, "'" + f.path + "' has " + std::to_string(list.size()) +
                     " entries but 'num_hidden_layers' is " +
                     std::to_string(numLayers) +
                     "; expected one entry per layer");
}

/// The kind of every layer, or an empty list when all are full attention.
/// `from` is set to the field the list came from.
std::vector<std::string> Converter::layerKinds(Arch arch, int64_t numLayers,
                                               Field &from) {
  std::vector<std::string> kinds;
  if (auto f = get("layer_types")) {
    from = *f;
    std::vector<Field> list = ctx_.sequence(*f);
    checkPerLayer(*f, list, numLayers);
    for (const Field &e : list) {
      std::string k = ctx_.string(e);
      bool linear = k == "linear_attention";
      if (k != "full_attention" && k != "sliding_attention" && !linear)
        ctx_.fail(e, "unsupported layer type '" + k + "' in '" + e.path +
                         "'; supported: full_attention, sliding_attention, "
                         "linear_attention");
      if (linear && arch != Arch::MiniMax)
        ctx_.fail(e, "'linear_attention' layers are supported for "
                     "MiniMaxForCausalLM only");
      kinds.push_back(k);
    }
  }
  if (arch == Arch::MiniMax) {
    std::optional<Field> list = get("attn_type_list");
    if (!list && kinds.empty())
      ctx_.fail(root_, "missing required field 'attn_type_list' (or "
                       "'layer_types'); MiniMax configs state which layers "
                       "are linear");
    if (list) {
      std::vector<std::string> fromList;
      std::vector<Field> entries = ctx_.sequence(*list);
      checkPerLayer(*list, entries, numLayers);
      for (const Field &e : entries) {
        int64_t v = ctx_.integer(e);
        if (v != 0 && v != 1)
          ctx_.fail(e, "expected 0 (linear attention) or 1 (softmax "
                       "attention) in '" +
                           e.path + "', got " + e.node.Scalar());
        fromList.push_back(v ? "full_attention" : "linear_attention");
      }
      if (kinds.empty()) {
        kinds = fromList;
        from = *list;
      } else if (kinds != fromList) {
        ctx_.fail(*list, "'attn_type_list' and 'layer_types' disagree");
      }
    }
    return kinds;
  }
  if (!kinds.empty())
    return kinds;
  if (arch == Arch::Qwen3) {
    // transformers' rule: with use_sliding_window and a window, layers from
    // max_window_layers on are sliding, the ones before are full.
    auto use = get("use_sliding_window");
    if (!use || !ctx_.boolean(*use) || !get("sliding_window"))
      return kinds;
    std::optional<Field> maxWindow = get("max_window_layers");
    if (!maxWindow)
      ctx_.fail(*use, "'use_sliding_window' true needs 'max_window_layers' "
                      "(or 'layer_types') to tell which layers are sliding");
    int64_t first = ctx_.integer(*maxWindow);
    if (first < 0)
      ctx_.fail(*maxWindow, "'max_window_layers' must be at least 0, got " +
                                maxWindow->node.Scalar());
    for (int64_t i = 0; i < numLayers; ++i)
      kinds.push_back(i >= first ? "sliding_attention" : "full_attention");
    from = *maxWindow;
    return kinds;
  }
  // Llama and Mistral: a window applies to every layer.
  if (auto w = get("sliding_window")) {
    from = *w;
    kinds.assign(1, "sliding_attention");
  }
  return kinds;
}

/// Switches whose non-default value the format cannot express.
void Converter::checkUnsupportedSwitches() {
  if (auto f = get("hidden_act")) {
    std::string act = ctx_.string(*f);
    if (act != "silu")
      ctx_.fail(*f, "unsupported activation '" + act +
                        "' in 'hidden_act'; supported: silu");
  }
  if (auto f = get("attention_bias"))
    if (ctx_.boolean(*f))
      // transformers gives o_proj the same bias flag as q/k/v; the format
      // has biases on q, k and v only.
      ctx_.fail(*f, "'attention_bias' true is not supported: it also adds a "
                    "bias to the output projection, which the format "
                    "cannot express");
  if (auto f = get("mlp_bias"))
    if (ctx_.boolean(*f))
      ctx_.fail(*f, "'mlp_bias' true is not supported; the format has no "
                    "MLP biases");
}

void Converter::attentionSection(YamlOut &out, Arch arch, const Field &heads,
                                 int64_t headDim, const YAML::Mark &headDimMark,
                                 const std::optional<Field> &window) {
  RopeScalingOut scaling = ropeScaling();
  std::optional<Field> theta = get("rope_theta");
  std::optional<Field> partial = get("partial_rotary_factor");
  if (auto params = get("rope_parameters")) {
    if (params->node.IsMap()) {
      auto inner = [&](const std::string &key) -> std::optional<Field> {
        YAML::Node n = params->node[key];
        if (!n || n.IsNull())
          return std::nullopt;
        return Field{"rope_parameters." + key, n, n.Mark()};
      };
      for (auto [name, slot] : {std::pair<const char *, std::optional<Field> *>{
                                    "rope_theta", &theta},
                                {"partial_rotary_factor", &partial}}) {
        if (auto f = inner(name)) {
          if (*slot)
            ctx_.fail(*f, "'" + std::string(name) +
                              "' is given both at the top level and in "
                              "'rope_parameters'");
          *slot = f;
        }
      }
    }
  }
  if (!theta)
    ctx_.fail(root_, "missing required field 'rope_theta'");
  std::string thetaText = positiveNumberText(*theta);

  std::optional<int64_t> rotaryDim;
  YAML::Mark rotaryMark;
  if (partial) {
    double f = ctx_.positiveNumber(*partial);
    double r = f * static_cast<double>(headDim);
    double rounded = std::round(r);
    if (std::fabs(r - rounded) > 1e-9 * std::max(1.0, r) ||
        static_cast<int64_t>(rounded) % 2 != 0 || rounded > headDim ||
        rounded < 2)
      ctx_.fail(*partial, "'" + partial->path + "' " + partial->node.Scalar() +
                              " times head_dim " + std::to_string(headDim) +
                              " is not an even number of rotated "
                              "elements between 2 and head_dim");
    rotaryDim = static_cast<int64_t>(rounded);
    rotaryMark = partial->mark();
  }
  if (auto f = get("rotary_dim")) {
    if (rotaryDim)
      ctx_.fail(*f, "both 'rotary_dim' and 'partial_rotary_factor' are "
                    "given; expected one of them");
    rotaryDim = ctx_.positiveInt(*f);
    rotaryMark = f->mark();
    // The original MiniMax code rotated the first rotary_dim elements;
    // transformers' MiniMaxForCausalLM ignores the field and rotates the
    // whole head, so only the value that changes nothing is accepted.
    if (arch == Arch::MiniMax && *rotaryDim != headDim)
      ctx_.fail(*f, "'rotary_dim' " + f->node.Scalar() +
                        " differs from head_dim " + std::to_string(headDim) +
                        ": MiniMaxForCausalLM rotates the whole head");
  }

  out.line("", YAML::Mark::null_mark());
  out.line("attention:");
  out.line("  num_heads: " + heads.node.Scalar(), heads.mark());
  if (auto f = get("num_key_value_heads"))
    out.line("  num_kv_heads: " + std::to_string(ctx_.positiveInt(*f)),
             f->mark());
  out.line("  head_dim: " + std::to_string(headDim), headDimMark);
  if (arch == Arch::Qwen3)
    out.line("  qk_norm: true");
  if (window)
    out.line("  sliding_window: " + std::to_string(ctx_.positiveInt(*window)),
             window->mark());
  out.line("  rope:");
  out.line("    theta: " + thetaText, theta->mark());
  if (rotaryDim && *rotaryDim != headDim)
    out.line("    rotary_dim: " + std::to_string(*rotaryDim), rotaryMark);
  if (!scaling.type.empty()) {
    out.line("    scaling:");
    out.line("      type: " + scaling.type, scaling.typeField.mark());
    for (const auto &[key, f] : scaling.params) {
      std::string v = key == "original_max_position_embeddings"
                          ? std::to_string(ctx_.positiveInt(f))
                          : positiveNumberText(f);
      out.line("      " + key + ": " + v, f.mark());
    }
  }
}

void Converter::linearAttentionSection(YamlOut &out, const Field &heads,
                                       int64_t headDim,
                                       const YAML::Mark &headDimMark,
                                       int64_t numLayers, int64_t numHeads,
                                       const std::vector<std::string> &kinds) {
  out.line("", YAML::Mark::null_mark());
  out.line("linear_attention:");
  out.line("  num_heads: " + heads.node.Scalar(), heads.mark());
  out.line("  head_dim: " + std::to_string(headDim), headDimMark);
  // transformers' lightning layers normalise their output with the
  // RMSNorm default epsilon, not rms_norm_eps.
  out.line("  norm_eps: 1.0e-6");
  // The per-layer decay as transformers computes it:
  // 2^(-8(h+1)/H) * (1 - l/(L - 1 + 1e-5) + 1e-5), which differs from
  // the original code's `minimax` scheme (ALiBi slopes, l/(L - 1)).
  out.line("  decay_slopes:");
  for (int64_t l = 0; l < numLayers; ++l) {
    if (kinds[size_t(l)] != "linear_attention")
      continue;
    double factor = 1.0 - double(l) / (double(numLayers) - 1.0 + 1e-5) + 1e-5;
    std::string list;
    for (int64_t h = 0; h < numHeads; ++h) {
      double slope =
          std::exp2(-8.0 * double(h + 1) / double(numHeads)) * factor;
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17e", slope);
      list += (h ? ", " : "") + std::string(buf);
    }
    out.line("    - [" + list + "]  # layer " + std::to_string(l));
  }
}

std::string Converter::convert(YamlOut &out) {
  readFields();
  const ArchInfo &arch = readArchitecture();
  checkUnknownFields(arch);
  if (arch.arch == Arch::MiniMax)
    checkMiniMaxExtras();

  checkUnsupportedSwitches();

  Field vocab = require("vocab_size");
  Field hidden = require("hidden_size");
  Field layers = require("num_hidden_layers");
  Field heads = require("num_attention_heads");
  Field inter = require("intermediate_size");
  Field eps = require("rms_norm_eps");
  Field maxPos = require("max_position_embeddings");
  int64_t hiddenSize = ctx_.positiveInt(hidden);
  int64_t numLayers = ctx_.positiveInt(layers, kMaxLayers);
  int64_t numHeads = ctx_.positiveInt(heads, kMaxHeads);
  ctx_.positiveInt(vocab);
  ctx_.positiveInt(inter);
  ctx_.positiveInt(maxPos);
  std::string epsText = positiveNumberText(eps);
  std::string dt = dtype();

  std::optional<Field> headDimField = get("head_dim");
  int64_t headDim;
  if (headDimField) {
    headDim = ctx_.positiveInt(*headDimField);
  } else {
    if (hiddenSize % numHeads != 0)
      ctx_.fail(heads, "'num_attention_heads' (" + std::to_string(numHeads) +
                           ") does not divide 'hidden_size' (" +
                           std::to_string(hiddenSize) +
                           ") and there is no 'head_dim'");
    headDim = hiddenSize / numHeads;
  }
  YAML::Mark headDimMark = headDimField ? headDimField->mark() : heads.mark();

  Field kindsFrom;
  std::vector<std::string> kinds = layerKinds(arch.arch, numLayers, kindsFrom);
  bool anySoftmax = kinds.empty(), anyLinear = false, anySliding = false;
  for (const std::string &k : kinds) {
    anySoftmax |= k != "linear_attention";
    anyLinear |= k == "linear_attention";
    anySliding |= k == "sliding_attention";
  }
  std::optional<Field> window = get("sliding_window");
  if (arch.arch == Arch::Qwen3) {
    // Qwen3 ignores the window unless use_sliding_window is set.
    auto use = get("use_sliding_window");
    if (!use || !ctx_.boolean(*use))
      window.reset();
  }
  if (anySliding && !window)
    ctx_.fail(kindsFrom, "'" + kindsFrom.path +
                             "' has sliding_attention layers but there is "
                             "no 'sliding_window'");

  out.line("# Generated by 'strata import-hf' from " +
           options_.sourceDescription + ".");
  out.line("format: strata-model/v1");
  out.line("name: " + quoted(options_.name));
  out.line(std::string("family: ") + arch.family);
  if (!dt.empty()) {
    auto f = get("dtype") ? get("dtype") : get("torch_dtype");
    out.line("dtype: " + dt, f->mark());
  }
  out.line("", YAML::Mark::null_mark());
  out.line("vocab_size: " + vocab.node.Scalar(), vocab.mark());
  out.line("hidden_size: " + hidden.node.Scalar(), hidden.mark());
  out.line("num_layers: " + layers.node.Scalar(), layers.mark());
  out.line("max_position_embeddings: " + maxPos.node.Scalar(), maxPos.mark());
  out.line("norm_eps: " + epsText, eps.mark());
  if (auto f = get("tie_word_embeddings"))
    out.line(std::string("tie_word_embeddings: ") +
                 (ctx_.boolean(*f) ? "true" : "false"),
             f->mark());
  if (arch.arch == Arch::MiniMax) {
    out.line("residual: normed");
    residualScale(out, anySoftmax, anyLinear);
  }
  if (!kinds.empty()) {
    std::string list;
    for (size_t i = 0; i < kinds.size(); ++i)
      list += (i ? ", " : "") + kinds[i];
    // A single repeated kind (a window on every layer) is a pattern.
    const char *key = kinds.size() == 1 && numLayers != 1 &&
                              kindsFrom.path == "sliding_window"
                          ? "layer_pattern"
                          : "layer_types";
    out.line(std::string(key) + ": [" + list + "]", kindsFrom.mark());
  }

  if (anySoftmax)
    attentionSection(out, arch.arch, heads, headDim, headDimMark,
                     anySliding ? window : std::nullopt);
  if (anyLinear)
    linearAttentionSection(out, heads, headDim, headDimMark, numLayers,
                           numHeads, kinds);

  out.line("", YAML::Mark::null_mark());
  out.line("mlp:");
  out.line("  intermediate_size: " + inter.node.Scalar(), inter.mark());
  out.line("", YAML::Mark::null_mark());
  out.line("weights:");
  out.line("  source: safetensors");
  out.line("  path: " + quoted(options_.weightsPath));
  return out.text();
}

constexpr auto failure = &HfImportResult::failure;

/// First byte that is not JSON whitespace, or npos.
size_t firstNonBlank(const std::string &text) {
  return text.find_first_not_of(" \t\r\n");
}

} // namespace

const std::vector<std::string> &supportedHfArchitectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const ArchInfo &a : detail::hfArchitectures())
      v.push_back(a.name);
    return v;
  }();
  return names;
}

HfImportResult convertHfConfig(const std::string &json,
                               const std::string &displayName,
                               const HfConvertOptions &options) {
  YamlContext ctx(displayName);
  try {
    if (json.find('\0') != std::string::npos)
      return failure(displayName, 0, 0,
                     "unexpected NUL byte; expected JSON text");
    size_t start = firstNonBlank(json);
    if (start == std::string::npos)
      return failure(displayName, 0, 0, "config file is empty");
    // yaml-cpp would also take YAML that is not JSON; a config.json always
    // starts with an object.
    if (json[start] != '{') {
      int line = 1 + static_cast<int>(
                         std::count(json.begin(), json.begin() + start, '\n'));
      size_t lineStart = json.rfind('\n', start);
      int column = static_cast<int>(
          lineStart == std::string::npos ? start + 1 : start - lineStart);
      return failure(displayName, line, column,
                     "invalid JSON: expected '{' at the start of config.json");
    }
    YAML::Node root = YAML::Load(json);
    YamlOut out;
    Converter converter(ctx, root, options);
    HfImportResult r;
    r.yaml = converter.convert(out);
    // The importer is the judge of what the format accepts; its complaint is
    // reported at the config field the offending line came from.
    ImportResult check =
        importModelString(r.yaml, displayName + " (converted)");
    if (!check.ok) {
      YAML::Mark from = out.source(check.diag.line);
      if (from.is_null())
        return failure(displayName, 0, 0, check.diag.message);
      return failure(displayName, from.line + 1, from.column + 1,
                     check.diag.message);
    }
    r.ok = true;
    return r;
  } catch (const ImportError &e) {
    HfImportResult r;
    r.diag = e.diag;
    return r;
  } catch (const YAML::Exception &e) {
    if (e.mark.is_null())
      return failure(displayName, 0, 0, "invalid JSON: " + e.msg);
    return failure(displayName, e.mark.line + 1, e.mark.column + 1,
                   "invalid JSON: " + e.msg);
  } catch (const std::exception &e) {
    return failure(displayName, 0, 0,
                   std::string("cannot convert config: ") + e.what());
  } catch (...) {
    return failure(displayName, 0, 0, "cannot convert config: unknown error");
  }
}

} // namespace strata

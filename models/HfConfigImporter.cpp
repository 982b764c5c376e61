// Hugging Face config.json -> strata model file. config.json is read as
// strict JSON (json/JsonTree.h) into a tree that keeps every value's
// position, so that each complaint points at the field it is about.
#include "models/HfConfigImporter.h"

#include "models/HfConverter.h"
#include "models/YamlReader.h"

#include <algorithm>
#include <set>

namespace strata {
namespace detail {

namespace {

// The converter writes per-layer lines (layer kinds, MiniMax's decay slopes
// of every head), so the counts that size them are bounded: the largest
// published models have under 200 layers and 128 heads, and a value far
// beyond that is a damaged config, not a model to spend gigabytes of text on.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;

} // namespace

void HfConverter::readFields() {
  if (!root_.value->isObject())
    ctx_.fail(root_, "expected a JSON object at the top of config.json, got " +
                         HfConfigContext::describe(root_.value));
  // The JSON reader has rejected duplicate keys.
  for (const HfField &f : ctx_.members(root_)) {
    fields_[f.path] = f;
    order_.push_back(f.path);
  }
}

const HfArchInfo &HfConverter::readArchitecture() {
  HfField f = require("architectures");
  std::vector<HfField> list = ctx_.sequence(f);
  if (list.empty())
    ctx_.fail(f, "'architectures' is empty; expected the model class, such "
                 "as \"LlamaForCausalLM\"");
  std::string name = ctx_.string(list[0]);
  for (const HfArchInfo &a : hfArchitectures())
    if (name == a.name)
      return a;
  ctx_.fail(list[0], "unsupported architecture '" + name + "'; supported: " +
                         joinNames(supportedHfArchitectures()));
}

void HfConverter::checkUnknownFields(const HfArchInfo &arch) {
  std::set<std::string> known;
  for (const std::string &n : hfHarmlessFields())
    known.insert(n);
  for (const std::string &n : hfMappedFields())
    known.insert(n);
  for (const std::string &n : hfArchSpecificFields(arch.arch))
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
  ctx_.fail(fields_.at(unknown[0]).keyPos,
            std::string(unknown.size() == 1 ? "unsupported field "
                                            : "unsupported fields ") +
                list + " for " + arch.name +
                "; they may change the model and the converter does not "
                "know them");
}

void HfConverter::residualScale(ModelFileOut &out, bool anySoftmax,
                                bool anyLinear) {
  // hfMiniMaxResidualFactors lists the original names (index 0-5) then
  // transformers' (6-11), each as full attention, linear attention, MLP
  // with alpha before beta.
  const std::vector<std::string> &factors = hfMiniMaxResidualFactors();
  struct Block {
    const char *key;
    bool present;
  } blocks[] = {{"attention", anySoftmax},
                {"linear_attention", anyLinear},
                {"mlp", true}};
  struct Line {
    const char *key;
    std::vector<std::pair<std::string, std::string>> entries;
    JsonPos from;
  };
  std::vector<Line> lines;
  for (int blk = 0; blk < 3; ++blk) {
    Line line{blocks[blk].key, {}, {}};
    for (int which = 0; which < 2; ++which) {
      const std::string &original = factors[2 * blk + which];
      const std::string &renamed = factors[6 + 2 * blk + which];
      std::optional<HfField> a = get(original), b = get(renamed);
      if (a && b && ctx_.number(*a) != ctx_.number(*b))
        ctx_.fail(*b, "'" + renamed + "' is " + b->value->text + " but '" +
                          original + "' is " + a->value->text +
                          "; they name the same factor");
      std::optional<HfField> f = b ? b : a;
      if (!f || ctx_.number(*f) == 1.0)
        continue;
      line.entries.push_back({which == 0 ? "alpha" : "beta", f->value->text});
      line.from = f->pos();
    }
    if (!line.entries.empty() && blocks[blk].present)
      lines.push_back(std::move(line));
  }
  if (lines.empty())
    return;
  out.beginMap("residual_scale");
  for (const Line &line : lines)
    out.flowMap(line.key, line.entries, line.from);
  out.endMap();
}

/// MiniMax fields that v1 cannot express unless they have their neutral
/// value.
void HfConverter::checkMiniMaxExtras() {
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
  HfField experts = require("num_local_experts");
  if (ctx_.positiveInt(experts) > 1)
    ctx_.fail(experts, "mixture-of-experts MLPs are not supported "
                       "('num_local_experts' is " +
                           experts.value->text + "; only 1 is)");
  HfField perToken = require("num_experts_per_tok");
  if (ctx_.positiveInt(perToken) != 1)
    ctx_.fail(perToken, "'num_experts_per_tok' is " + perToken.value->text +
                            "; with a single expert it must be 1");
  if (auto f = get("shared_intermediate_size"))
    if (ctx_.integer(*f) != 0)
      ctx_.fail(*f, "shared-expert MLPs are not supported "
                    "('shared_intermediate_size' is " +
                        f->value->text + ")");
  if (auto f = get("sliding_window"))
    ctx_.fail(*f, "'sliding_window' is not supported for MiniMaxForCausalLM");
}

std::string HfConverter::configDtype() {
  std::optional<HfField> f = get("dtype");
  std::optional<HfField> legacy = get("torch_dtype");
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

void HfConverter::checkPerLayer(const HfField &f,
                                const std::vector<HfField> &list,
                                int64_t numLayers) const {
  if (static_cast<int64_t>(list.size()) != numLayers)
    ctx_.fail(f, "'" + f.path + "' has " + std::to_string(list.size()) +
                     " entries but 'num_hidden_layers' is " +
                     std::to_string(numLayers) +
                     "; expected one entry per layer");
}

/// The kind of every layer, or an empty list when all are full attention.
/// `from` is set to the field the list came from.
std::vector<std::string> HfConverter::layerKinds(HfArch arch, int64_t numLayers,
                                                 HfField &from) {
  std::vector<std::string> kinds;
  if (auto f = get("layer_types")) {
    from = *f;
    std::vector<HfField> list = ctx_.sequence(*f);
    checkPerLayer(*f, list, numLayers);
    for (const HfField &e : list) {
      std::string k = ctx_.string(e);
      bool linear = k == "linear_attention";
      if (k != "full_attention" && k != "sliding_attention" && !linear)
        ctx_.fail(e, "unsupported layer type '" + k + "' in '" + e.path +
                         "'; supported: full_attention, sliding_attention, "
                         "linear_attention");
      if (linear && arch != HfArch::MiniMax)
        ctx_.fail(e, "'linear_attention' layers are supported for "
                     "MiniMaxForCausalLM only");
      kinds.push_back(k);
    }
  }
  if (arch == HfArch::MiniMax) {
    std::optional<HfField> list = get("attn_type_list");
    if (!list && kinds.empty())
      ctx_.fail(root_, "missing required field 'attn_type_list' (or "
                       "'layer_types'); MiniMax configs state which layers "
                       "are linear");
    if (list) {
      std::vector<std::string> fromList;
      std::vector<HfField> entries = ctx_.sequence(*list);
      checkPerLayer(*list, entries, numLayers);
      for (const HfField &e : entries) {
        int64_t v = ctx_.integer(e);
        if (v != 0 && v != 1)
          ctx_.fail(e, "expected 0 (linear attention) or 1 (softmax "
                       "attention) in '" +
                           e.path + "', got " + e.value->text);
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
  if (arch == HfArch::Qwen3) {
    // transformers' rule: with use_sliding_window and a window, layers from
    // max_window_layers on are sliding, the ones before are full.
    auto use = get("use_sliding_window");
    if (!use || !ctx_.boolean(*use) || !get("sliding_window"))
      return kinds;
    std::optional<HfField> maxWindow = get("max_window_layers");
    if (!maxWindow)
      ctx_.fail(*use, "'use_sliding_window' true needs 'max_window_layers' "
                      "(or 'layer_types') to tell which layers are sliding");
    int64_t first = ctx_.integer(*maxWindow);
    if (first < 0)
      ctx_.fail(*maxWindow, "'max_window_layers' must be at least 0, got " +
                                maxWindow->value->text);
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
void HfConverter::checkUnsupportedSwitches() {
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

void HfConverter::convert(ModelFileOut &out) {
  readFields();
  const HfArchInfo &arch = readArchitecture();
  checkUnknownFields(arch);
  if (arch.arch == HfArch::MiniMax)
    checkMiniMaxExtras();

  checkUnsupportedSwitches();

  HfField vocab = require("vocab_size");
  HfField hidden = require("hidden_size");
  HfField layers = require("num_hidden_layers");
  HfField heads = require("num_attention_heads");
  HfField inter = require("intermediate_size");
  HfField eps = require("rms_norm_eps");
  HfField maxPos = require("max_position_embeddings");
  int64_t hiddenSize = ctx_.positiveInt(hidden);
  int64_t numLayers = ctx_.positiveInt(layers, kMaxLayers);
  int64_t numHeads = ctx_.positiveInt(heads, kMaxHeads);
  ctx_.positiveInt(vocab);
  ctx_.positiveInt(inter);
  ctx_.positiveInt(maxPos);
  std::string epsText = positiveNumberText(eps);
  std::string fromConfig = configDtype();
  std::string dt =
      options_.dtype.empty() ? hfDefaultDtype(fromConfig) : options_.dtype;
  if (options_.dtype.empty() && dt != fromConfig && !fromConfig.empty())
    note_ = ctx_.file() + ": note: the checkpoint's dtype is " +
            ctx_.string(get("dtype") ? *get("dtype") : *get("torch_dtype")) +
            "; the model file says " + dt +
            ", and the weights are converted to it when loaded (--dtype " +
            fromConfig + " keeps them as they are)";

  std::optional<HfField> headDimField = get("head_dim");
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
  JsonPos headDimPos = headDimField ? headDimField->pos() : heads.pos();

  HfField kindsFrom;
  std::vector<std::string> kinds = layerKinds(arch.arch, numLayers, kindsFrom);
  bool anySoftmax = kinds.empty(), anyLinear = false, anySliding = false;
  for (const std::string &k : kinds) {
    anySoftmax |= k != "linear_attention";
    anyLinear |= k == "linear_attention";
    anySliding |= k == "sliding_attention";
  }
  std::optional<HfField> window = get("sliding_window");
  if (arch.arch == HfArch::Qwen3) {
    // Qwen3 ignores the window unless use_sliding_window is set.
    auto use = get("use_sliding_window");
    if (!use || !ctx_.boolean(*use))
      window.reset();
  }
  if (anySliding && !window)
    ctx_.fail(kindsFrom, "'" + kindsFrom.path +
                             "' has sliding_attention layers but there is "
                             "no 'sliding_window'");

  out.begin("Generated by 'strata import-hf' from " +
            options_.sourceDescription + ".");
  out.field("format", "strata-model/v1");
  out.quotedField("name", options_.name);
  out.field("family", arch.family);
  {
    std::optional<HfField> f = get("dtype") ? get("dtype") : get("torch_dtype");
    out.field("dtype", dt, f && options_.dtype.empty() ? f->pos() : JsonPos{});
  }
  out.blankLine();
  out.field("vocab_size", vocab.value->text, vocab.pos());
  out.field("hidden_size", hidden.value->text, hidden.pos());
  out.field("num_layers", layers.value->text, layers.pos());
  out.field("max_position_embeddings", maxPos.value->text, maxPos.pos());
  out.field("norm_eps", epsText, eps.pos());
  if (auto f = get("tie_word_embeddings"))
    out.flag("tie_word_embeddings", ctx_.boolean(*f), f->pos());
  if (arch.arch == HfArch::MiniMax) {
    out.field("residual", "normed");
    residualScale(out, anySoftmax, anyLinear);
  }
  if (!kinds.empty()) {
    // A single repeated kind (a window on every layer) is a pattern.
    const char *key = kinds.size() == 1 && numLayers != 1 &&
                              kindsFrom.path == "sliding_window"
                          ? "layer_pattern"
                          : "layer_types";
    out.flowList(key, kinds, kindsFrom.pos());
  }

  if (anySoftmax)
    attentionSection(out, arch.arch, heads, headDim, headDimPos,
                     anySliding ? window : std::nullopt);
  if (anyLinear)
    linearAttentionSection(out, heads, headDim, headDimPos, numLayers, numHeads,
                           kinds);

  out.blankLine();
  out.beginMap("mlp");
  out.field("intermediate_size", inter.value->text, inter.pos());
  out.endMap();
  out.blankLine();
  out.beginMap("weights");
  out.field("source", "safetensors");
  out.quotedField("path", options_.weightsPath);
  out.endMap();
  if (!options_.tokenizerPath.empty()) {
    out.blankLine();
    out.beginMap("tokenizer");
    out.quotedField("path", options_.tokenizerPath);
    if (options_.bosId >= 0)
      out.field("bos_token_id", std::to_string(options_.bosId));
    if (!options_.eosIds.empty()) {
      std::vector<std::string> ids;
      for (int64_t id : options_.eosIds)
        ids.push_back(std::to_string(id));
      out.flowList("eos_token_ids", ids);
    }
    out.endMap();
  }
}

} // namespace detail

namespace {

constexpr auto failure = &HfImportResult::failure;

/// First byte that is not JSON whitespace, or npos.
size_t firstNonBlank(const std::string &text) {
  return text.find_first_not_of(" \t\r\n");
}

} // namespace

std::string hfDefaultDtype(const std::string &configDtype) {
  return configDtype == "f16" ? "f16" : "bf16";
}

const std::vector<std::string> &supportedHfArchitectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const detail::HfArchInfo &a : detail::hfArchitectures())
      v.push_back(a.name);
    return v;
  }();
  return names;
}

HfImportResult convertHfConfig(const std::string &json,
                               const std::string &displayName,
                               const HfConvertOptions &options) {
  try {
    if (!options.dtype.empty() && options.dtype != "bf16" &&
        options.dtype != "f16" && options.dtype != "f32")
      return failure(displayName, 0, 0,
                     "unsupported dtype '" + options.dtype +
                         "' requested; supported: bf16, f16, f32");
    if (json.find('\0') != std::string::npos)
      return failure(displayName, 0, 0,
                     "unexpected NUL byte; expected JSON text");
    size_t start = firstNonBlank(json);
    if (start == std::string::npos)
      return failure(displayName, 0, 0, "config file is empty");
    // A config.json always holds one object.
    if (json[start] != '{') {
      int line = 1 + static_cast<int>(
                         std::count(json.begin(), json.begin() + start, '\n'));
      size_t lineStart = json.rfind('\n', start);
      int column = static_cast<int>(
          lineStart == std::string::npos ? start + 1 : start - lineStart);
      return failure(displayName, line, column,
                     "invalid JSON: expected '{' at the start of config.json");
    }
    JsonValue root;
    JsonSyntaxError syntax;
    if (!parseStrictJson(json, root, syntax))
      return failure(displayName, syntax.pos.line, syntax.pos.column,
                     syntax.message);
    detail::HfConfigContext ctx(displayName);
    detail::ModelFileOut out;
    detail::HfConverter converter(ctx, root, options);
    converter.convert(out);
    HfImportResult r;
    r.yaml = out.finish();
    // The importer is the judge of what the format accepts; its complaint is
    // reported at the config field the offending line came from.
    ImportResult check =
        importModelString(r.yaml, (options.modelFilePath.empty()
                                       ? displayName
                                       : options.modelFilePath) +
                                      " (converted)");
    if (!check.ok) {
      JsonPos from = out.source(check.diag.line);
      return failure(displayName, from.line, from.column, check.diag.message);
    }
    r.ok = true;
    r.note = converter.note();
    return r;
  } catch (const detail::ImportError &e) {
    HfImportResult r;
    r.diag = e.diag;
    return r;
  } catch (const std::exception &e) {
    return failure(displayName, 0, 0,
                   std::string("cannot convert config: ") + e.what());
  } catch (...) {
    return failure(displayName, 0, 0, "cannot convert config: unknown error");
  }
}

} // namespace strata

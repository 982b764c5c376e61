#include "models/SpecReader.h"

#include "models/DecaySlopes.h"
#include "models/ModelLimits.h"
#include "models/NearestName.h"

#include <cmath>
#include <filesystem>

namespace strata {
namespace detail {

namespace {

/// Spellings of the Hugging Face config (and of other engines) mapped to the
/// key that means the same here, so that "did you mean" points to it even
/// when the two are far apart by edit distance.
const std::map<std::string, std::string> kTopHints = {
    {"num_hidden_layers", "num_layers"},
    {"rms_norm_eps", "norm_eps"},
    {"layer_norm_eps", "norm_eps"},
    {"torch_dtype", "dtype"},
    {"num_attention_heads", "attention.num_heads"},
    {"num_key_value_heads", "attention.num_kv_heads"},
    {"head_dim", "attention.head_dim"},
    {"rope_theta", "attention.rope.theta"},
    {"rope_scaling", "attention.rope.scaling"},
    {"sliding_window", "attention.sliding_window"},
    {"intermediate_size", "mlp.intermediate_size"},
    {"hidden_act", "mlp.activation"},
    {"format_version", "format"},
};
const std::map<std::string, std::string> kAttentionHints = {
    {"num_attention_heads", "num_heads"},
    {"num_key_value_heads", "num_kv_heads"},
    {"attention_bias", "qkv_bias"},
    {"rope_theta", "rope.theta"},
    {"rope_scaling", "rope.scaling"},
    {"rotary_dim", "rope.rotary_dim"},
    {"partial_rotary_factor", "rope.rotary_dim"},
};
const std::map<std::string, std::string> kRopeHints = {
    {"rope_theta", "theta"},
    {"rope_scaling", "scaling"},
    {"partial_rotary_factor", "rotary_dim"},
};
const std::map<std::string, std::string> kScalingHints = {
    {"rope_type", "type"},
};
const std::map<std::string, std::string> kMlpHints = {
    {"hidden_act", "activation"},
};
const std::map<std::string, std::string> kWeightsHints = {
    {"initializer_range", "init_std"},
};

const std::map<std::string, std::string> kTokenizerHints = {
    {"bos_token", "bos_token_id"},
    {"eos_token", "eos_token_ids"},
    {"eos_token_id", "eos_token_ids"},
};

const std::vector<std::string> kLayerKindNames = {
    "full_attention", "sliding_attention", "linear_attention"};

/// One decoder layer's kind and the YAML element it came from (the element
/// of `layer_types` or `layer_pattern`; absent when neither is given).
struct LayerEntry {
  LayerKind kind;
  std::optional<Field> source;
};

std::string str(int64_t v) { return std::to_string(v); }

/// Where a problem with a layer list is reported: the element that asked for
/// the layer kind.
std::string layerName(size_t index) { return "layer " + std::to_string(index); }

class SpecReader {
public:
  SpecReader(const YamlContext &ctx, const std::string &displayName)
      : ctx_(ctx), displayName_(displayName) {}

  ModelSpec read(const YAML::Node &root);

private:
  void checkFormat(const Field &root);
  std::vector<LayerEntry> readLayerKinds(const MapReader &top,
                                         int64_t numLayers);
  LayerKind readLayerKind(const Field &f);
  void readAttention(const MapReader &top, ModelSpec &spec);
  void readRope(const Field &f, ModelSpec &spec);
  void readScaling(const Field &f, RopeScaling &scaling);
  void readLinear(const MapReader &top, ModelSpec &spec);
  std::vector<double> readSlopeList(const Field &f, int64_t numHeads);
  void readDecaySlopes(const Field &f, ModelSpec &spec);
  void readMlp(const MapReader &top, ModelSpec &spec);
  void readResidualScale(const Field &section, ModelSpec &spec);
  void readWeights(const MapReader &top, ModelSpec &spec);
  void readTokenizer(const MapReader &top, ModelSpec &spec);
  /// head_dim if given, else hidden_size / num_heads when that divides.
  int64_t readHeadDim(const MapReader &section, const Field &numHeadsField,
                      int64_t numHeads, int64_t hiddenSize);
  /// Fails when a section that some layer needs is absent, or when one is
  /// present that no layer uses (it would be silently ignored).
  void checkSection(const MapReader &top, const std::string &section,
                    bool (*uses)(LayerKind), const std::string &usesWhat);

  const YamlContext &ctx_;
  std::string displayName_;
  std::vector<LayerEntry> layers_;
};

bool usesSoftmax(LayerKind k) { return k != LayerKind::LinearAttention; }
bool usesLinear(LayerKind k) { return k == LayerKind::LinearAttention; }

ModelSpec SpecReader::read(const YAML::Node &root) {
  Field rootField{"", root, YAML::Mark()};
  if (!root.IsMap())
    ctx_.fail(rootField, "expected a mapping at the top level (starting with "
                         "'format: " +
                             std::string(kFormatV1) + "'), got " +
                             YamlContext::describe(root));
  // The version is checked before anything else: a file of another version
  // should be told so, not be given a list of unknown keys.
  checkFormat(rootField);
  MapReader top(ctx_, rootField,
                {"format", "name", "family", "dtype", "vocab_size",
                 "hidden_size", "num_layers", "max_position_embeddings",
                 "norm_eps", "tie_word_embeddings", "residual",
                 "residual_scale", "layer_types", "layer_pattern", "attention",
                 "linear_attention", "mlp", "weights", "tokenizer"},
                kTopHints);

  ModelSpec spec;
  spec.formatVersion = 1;
  spec.loc.file = ctx_.file();
  spec.loc.line = root.Mark().line + 1;
  spec.loc.column = root.Mark().column + 1;
  if (auto f = top.find("name"))
    spec.name = ctx_.string(*f);
  else
    spec.name = std::filesystem::path(displayName_).stem().string();
  if (auto f = top.find("family"))
    spec.family = ctx_.string(*f);

  if (auto f = top.find("dtype")) {
    std::string d = ctx_.string(*f);
    if (d == "f32")
      spec.dtype = DType::F32;
    else if (d == "f16")
      spec.dtype = DType::F16;
    else if (d == "bf16")
      spec.dtype = DType::BF16;
    else
      ctx_.fail(*f, "unsupported dtype '" + d + "'; supported: f32, f16, bf16");
  }

  spec.vocabSize =
      ctx_.positiveInt(top.require("vocab_size"), limits::kMaxVocabSize);
  spec.hiddenSize =
      ctx_.positiveInt(top.require("hidden_size"), limits::kMaxHiddenSize);
  int64_t numLayers =
      ctx_.positiveInt(top.require("num_layers"), limits::kMaxLayers);
  spec.maxPositionEmbeddings = ctx_.positiveInt(
      top.require("max_position_embeddings"), limits::kMaxPositions);
  spec.normEps = top.requirePositiveNumber("norm_eps");
  spec.tieWordEmbeddings = top.optBool("tie_word_embeddings", false);
  if (auto f = top.find("residual")) {
    std::string r = ctx_.string(*f);
    if (r != "input" && r != "normed")
      ctx_.fail(*f, "unknown residual source '" + r +
                        "' in 'residual'; expected input or normed");
    spec.residualFromNorm = r == "normed";
  }

  layers_ = readLayerKinds(top, numLayers);
  spec.layers.resize(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i)
    spec.layers[i].kind = layers_[i].kind;
  if (auto f = top.find("residual_scale"))
    readResidualScale(*f, spec);

  checkSection(top, "attention", usesSoftmax, "softmax attention");
  checkSection(top, "linear_attention", usesLinear, "linear_attention");
  if (top.has("attention"))
    readAttention(top, spec);
  if (top.has("linear_attention"))
    readLinear(top, spec);
  readMlp(top, spec);
  readWeights(top, spec);
  readTokenizer(top, spec);
  return spec;
}

void SpecReader::checkFormat(const Field &root) {
  std::optional<Field> format;
  for (auto it = root.node.begin(); it != root.node.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == "format")
      format = Field{"format", it->second, it->first.Mark()};
  std::string expected = "'format: " + std::string(kFormatV1) + "'";
  if (!format)
    ctx_.fail(root, "missing required key 'format' (expected " + expected +
                        " as the first key)");
  if (!format->node.IsScalar() || format->node.Scalar() != kFormatV1)
    ctx_.fail(*format, "unsupported format " +
                           YamlContext::describe(format->node) +
                           "; expected '" + kFormatV1 + "'");
}

LayerKind SpecReader::readLayerKind(const Field &f) {
  std::string name = ctx_.string(f);
  if (name == "full_attention")
    return LayerKind::FullAttention;
  if (name == "sliding_attention")
    return LayerKind::SlidingAttention;
  if (name == "linear_attention")
    return LayerKind::LinearAttention;
  std::string near = nearestName(name, kLayerKindNames);
  if (!near.empty())
    ctx_.fail(f, "unknown layer kind '" + name + "'; did you mean '" + near +
                     "'?");
  ctx_.fail(f, "unknown layer kind '" + name +
                   "'; expected full_attention, sliding_attention or "
                   "linear_attention");
}

std::vector<LayerEntry> SpecReader::readLayerKinds(const MapReader &top,
                                                   int64_t numLayers) {
  auto types = top.find("layer_types");
  auto pattern = top.find("layer_pattern");
  std::vector<LayerEntry> out;
  if (types && pattern) {
    const Field &later =
        types->anchor.pos > pattern->anchor.pos ? *types : *pattern;
    ctx_.fail(later.anchor, "give either 'layer_types' or 'layer_pattern', "
                            "not both");
  }
  if (!types && !pattern) {
    for (int64_t i = 0; i < numLayers; ++i)
      out.push_back({LayerKind::FullAttention, std::nullopt});
    return out;
  }
  const Field &list = types ? *types : *pattern;
  std::vector<Field> elements = ctx_.sequence(list);
  if (elements.empty())
    ctx_.fail(list,
              "'" + list.path + "' is empty; expected at least one layer kind");
  std::vector<LayerEntry> given;
  for (const Field &e : elements)
    given.push_back({readLayerKind(e), e});
  int64_t n = static_cast<int64_t>(given.size());
  if (types) {
    if (n != numLayers)
      ctx_.fail(list, "'layer_types' has " + str(n) +
                          " entries but num_layers is " + str(numLayers) +
                          "; expected one entry per layer");
    return given;
  }
  if (numLayers % n != 0)
    ctx_.fail(list,
              "num_layers " + str(numLayers) +
                  " is not a multiple of the length of 'layer_pattern' (" +
                  str(n) + "); the pattern repeats over all layers");
  for (int64_t i = 0; i < numLayers; ++i)
    out.push_back(given[i % n]);
  return out;
}

void SpecReader::checkSection(const MapReader &top, const std::string &section,
                              bool (*uses)(LayerKind),
                              const std::string &usesWhat) {
  const LayerEntry *first = nullptr;
  size_t firstIndex = 0;
  for (size_t i = 0; i < layers_.size() && !first; ++i)
    if (uses(layers_[i].kind)) {
      first = &layers_[i];
      firstIndex = i;
    }
  auto f = top.find(section);
  if (first && !f) {
    if (!first->source)
      top.failMissing(section, " (every layer is full_attention)");
    ctx_.fail(*first->source,
              layerName(firstIndex) + " is '" + toString(first->kind) +
                  "' but the file has no '" + section + "' section");
  }
  if (!first && f)
    ctx_.fail(f->anchor, "'" + section + "' is given but no layer uses " +
                             usesWhat +
                             "; remove it or change the layer kinds");
}

int64_t SpecReader::readHeadDim(const MapReader &section,
                                const Field &numHeadsField, int64_t numHeads,
                                int64_t hiddenSize) {
  if (auto f = section.find("head_dim"))
    return ctx_.positiveInt(*f, limits::kMaxHeadDim);
  if (hiddenSize % numHeads != 0)
    ctx_.fail(numHeadsField, "'" + numHeadsField.path + "' (" + str(numHeads) +
                                 ") does not divide hidden_size (" +
                                 str(hiddenSize) +
                                 "); give 'head_dim' explicitly");
  return hiddenSize / numHeads;
}

void SpecReader::readAttention(const MapReader &top, ModelSpec &spec) {
  MapReader att(ctx_, *top.find("attention"),
                {"num_heads", "num_kv_heads", "head_dim", "scale", "qk_norm",
                 "qkv_bias", "sliding_window", "rope"},
                kAttentionHints);
  AttentionSpec &a = spec.attention;
  Field headsField = att.require("num_heads");
  a.numHeads = ctx_.positiveInt(headsField, limits::kMaxHeads);
  a.headDim = readHeadDim(att, headsField, a.numHeads, spec.hiddenSize);
  a.numKvHeads = a.numHeads;
  if (auto f = att.find("num_kv_heads")) {
    a.numKvHeads = ctx_.positiveInt(*f, limits::kMaxHeads);
    if (a.numHeads % a.numKvHeads != 0)
      ctx_.fail(*f, "num_kv_heads (" + str(a.numKvHeads) +
                        ") does not divide num_heads (" + str(a.numHeads) +
                        "); each kv head serves a whole group of query heads");
  }
  a.scale = 1.0 / std::sqrt(static_cast<double>(a.headDim));
  if (auto f = att.find("scale"))
    a.scale = ctx_.positiveNumber(*f);
  a.qkNorm = att.optBool("qk_norm", false);
  a.qkvBias = att.optBool("qkv_bias", false);

  int64_t window = 0;
  auto windowField = att.find("sliding_window");
  if (windowField)
    window = ctx_.positiveInt(*windowField, limits::kMaxPositions);
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i].kind != LayerKind::SlidingAttention)
      continue;
    if (!windowField)
      att.failMissing("sliding_window",
                      " (" + layerName(i) + " is sliding_attention)");
    spec.layers[i].slidingWindow = window;
  }
  if (windowField && spec.layers.size() > 0) {
    bool anySliding = false;
    for (const LayerSpec &l : spec.layers)
      anySliding |= l.kind == LayerKind::SlidingAttention;
    if (!anySliding)
      ctx_.fail(windowField->anchor,
                "'attention.sliding_window' is set but no layer is "
                "sliding_attention; to window every layer, add "
                "'layer_pattern: [sliding_attention]'");
  }

  readRope(att.require("rope"), spec);
}

void SpecReader::readRope(const Field &f, ModelSpec &spec) {
  MapReader rope(ctx_, f, {"theta", "rotary_dim", "pairing", "scaling"},
                 kRopeHints);
  RopeSpec &r = spec.rope;
  r.theta = rope.requirePositiveNumber("theta");
  int64_t headDim = spec.attention.headDim;
  if (auto rd = rope.find("rotary_dim")) {
    r.rotaryDim = ctx_.positiveInt(*rd);
    if (r.rotaryDim % 2 != 0)
      ctx_.fail(*rd, "rotary_dim (" + str(r.rotaryDim) +
                         ") must be even; elements are rotated in pairs");
    if (r.rotaryDim > headDim)
      ctx_.fail(*rd, "rotary_dim (" + str(r.rotaryDim) +
                         ") is larger than head_dim (" + str(headDim) + ")");
  } else {
    r.rotaryDim = headDim;
    if (headDim % 2 != 0)
      ctx_.fail(f, "rotary_dim defaults to head_dim (" + str(headDim) +
                       "), which is odd; give an even 'rotary_dim'");
  }
  if (auto p = rope.find("pairing")) {
    std::string s = ctx_.string(*p);
    if (s == "neox")
      r.pairing = RopePairing::Neox;
    else if (s == "gptj")
      r.pairing = RopePairing::GptJ;
    else
      ctx_.fail(*p,
                "unsupported rope pairing '" + s + "'; supported: neox, gptj");
  }
  if (auto s = rope.find("scaling"))
    readScaling(*s, r.scaling);
}

void SpecReader::readScaling(const Field &f, RopeScaling &scaling) {
  MapReader sc(ctx_, f,
               {"type", "factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"},
               kScalingHints);
  Field typeField = sc.require("type");
  std::string type = ctx_.string(typeField);
  if (type == "linear") {
    scaling.type = RopeScalingType::Linear;
    for (const char *key : {"low_freq_factor", "high_freq_factor",
                            "original_max_position_embeddings"})
      if (auto extra = sc.find(key))
        ctx_.fail(extra->anchor, "'" + extra->path +
                                     "' applies only to rope scaling type "
                                     "'llama3'");
    scaling.factor = sc.requirePositiveNumber("factor");
    return;
  }
  if (type != "llama3")
    ctx_.fail(typeField, "unsupported rope scaling type '" + type +
                             "'; supported: linear, llama3");
  // Every llama3 parameter is required: the published checkpoints all
  // state them, and no default is shared by all of them.
  scaling.type = RopeScalingType::Llama3;
  scaling.factor = sc.requirePositiveNumber("factor");
  scaling.lowFreqFactor = sc.requirePositiveNumber("low_freq_factor");
  Field high = sc.require("high_freq_factor");
  scaling.highFreqFactor = ctx_.positiveNumber(high);
  scaling.originalMaxPositionEmbeddings = ctx_.positiveInt(
      sc.require("original_max_position_embeddings"), limits::kMaxPositions);
  if (!(scaling.highFreqFactor > scaling.lowFreqFactor))
    ctx_.fail(high, "high_freq_factor (" + high.node.Scalar() +
                        ") must be greater than low_freq_factor; the "
                        "frequencies between them are interpolated");
}

void SpecReader::readLinear(const MapReader &top, ModelSpec &spec) {
  MapReader lin(ctx_, *top.find("linear_attention"),
                {"num_heads", "head_dim", "decay_slopes", "qkv_silu",
                 "output_norm", "output_gate", "norm_eps", "chunk_size"},
                {{"num_attention_heads", "num_heads"}});
  LinearAttentionSpec &l = spec.linear;
  Field headsField = lin.require("num_heads");
  l.numHeads = ctx_.positiveInt(headsField, limits::kMaxHeads);
  l.headDim = readHeadDim(lin, headsField, l.numHeads, spec.hiddenSize);
  l.qkvSilu = lin.optBool("qkv_silu", true);
  l.outputNorm = lin.optBool("output_norm", true);
  l.outputGate = lin.optBool("output_gate", true);
  l.normEps = spec.normEps;
  if (auto f = lin.find("norm_eps")) {
    if (!l.outputNorm)
      ctx_.fail(*f, "'linear_attention.norm_eps' is given but "
                    "'linear_attention.output_norm' is false");
    l.normEps = ctx_.positiveNumber(*f);
  }
  if (auto f = lin.find("chunk_size"))
    l.chunkSize = ctx_.positiveInt(*f, limits::kMaxChunkSize);
  readDecaySlopes(lin.require("decay_slopes"), spec);
}

std::vector<double> SpecReader::readSlopeList(const Field &f,
                                              int64_t numHeads) {
  std::vector<Field> elements = ctx_.sequence(f);
  if (static_cast<int64_t>(elements.size()) != numHeads)
    ctx_.fail(f, "expected " + str(numHeads) + " decay slopes in '" + f.path +
                     "' (one per linear_attention head), got " +
                     str(static_cast<int64_t>(elements.size())));
  std::vector<double> slopes;
  for (const Field &e : elements)
    slopes.push_back(ctx_.positiveNumber(e));
  return slopes;
}

void SpecReader::readDecaySlopes(const Field &f, ModelSpec &spec) {
  int64_t numHeads = spec.linear.numHeads;
  int64_t numLayers = spec.numLayers();
  std::vector<size_t> linearLayers;
  for (size_t i = 0; i < spec.layers.size(); ++i)
    if (spec.layers[i].kind == LayerKind::LinearAttention)
      linearLayers.push_back(i);

  if (f.node.IsScalar()) {
    std::string scheme = f.node.Scalar();
    if (scheme == "minimax") {
      for (size_t i : linearLayers)
        spec.layers[i].decaySlopes =
            minimaxDecaySlopes(numHeads, static_cast<int64_t>(i), numLayers);
      return;
    }
    if (scheme == "alibi") {
      for (size_t i : linearLayers)
        spec.layers[i].decaySlopes = alibiSlopes(numHeads);
      return;
    }
    std::string near = nearestName(scheme, {"minimax", "alibi"});
    ctx_.fail(f, "unknown decay slope scheme '" + scheme + "'; " +
                     (near.empty() ? "expected minimax, alibi or a list of "
                                     "slopes"
                                   : "did you mean '" + near + "'?"));
  }
  if (!f.node.IsSequence())
    ctx_.fail(f, "expected a scheme name (minimax or alibi) or a list of "
                 "slopes for 'linear_attention.decay_slopes', got " +
                     YamlContext::describe(f.node));
  std::vector<Field> elements = ctx_.sequence(f);
  if (elements.empty())
    ctx_.fail(f, "'linear_attention.decay_slopes' is empty; expected " +
                     str(numHeads) +
                     " slopes, or one list of them per linear_attention layer");
  if (!elements.front().node.IsSequence()) {
    // One list for every linear layer.
    std::vector<double> shared = readSlopeList(f, numHeads);
    for (size_t i : linearLayers)
      spec.layers[i].decaySlopes = shared;
    return;
  }
  if (elements.size() != linearLayers.size())
    ctx_.fail(f, "expected " + str(static_cast<int64_t>(linearLayers.size())) +
                     " lists in 'linear_attention.decay_slopes' (one per "
                     "linear_attention layer), got " +
                     str(static_cast<int64_t>(elements.size())));
  for (size_t j = 0; j < linearLayers.size(); ++j)
    spec.layers[linearLayers[j]].decaySlopes =
        readSlopeList(elements[j], numHeads);
}

void SpecReader::readMlp(const MapReader &top, ModelSpec &spec) {
  MapReader mlp(ctx_, top.require("mlp"), {"intermediate_size", "activation"},
                kMlpHints);
  spec.mlp.intermediateSize = ctx_.positiveInt(mlp.require("intermediate_size"),
                                               limits::kMaxIntermediateSize);
  if (auto f = mlp.find("activation")) {
    std::string act = ctx_.string(*f);
    if (act != "silu")
      ctx_.fail(*f, "unsupported activation '" + act + "'; supported: silu");
  }
}

void SpecReader::readResidualScale(const Field &section, ModelSpec &spec) {
  MapReader scales(ctx_, section, {"attention", "linear_attention", "mlp"});
  auto read = [&](const char *key, ResidualScale &out) {
    auto f = scales.find(key);
    if (!f)
      return;
    // A scale of a block no layer has would be silently ignored.
    bool used = std::string(key) == "mlp";
    for (const LayerEntry &l : layers_)
      used |= std::string(key) == "attention" ? usesSoftmax(l.kind)
                                              : usesLinear(l.kind);
    if (!used)
      ctx_.fail(*f, "'residual_scale." + std::string(key) +
                        "' is given but no layer is " +
                        (std::string(key) == "attention" ? "softmax attention"
                                                         : "linear_attention"));
    MapReader ab(ctx_, *f, {"alpha", "beta"});
    if (auto a = ab.find("alpha"))
      out.alpha = ctx_.number(*a);
    if (auto b = ab.find("beta"))
      out.beta = ctx_.number(*b);
  };
  read("attention", spec.attentionResidual);
  read("linear_attention", spec.linearResidual);
  read("mlp", spec.mlpResidual);
}

void SpecReader::readTokenizer(const MapReader &top, ModelSpec &spec) {
  auto f = top.find("tokenizer");
  if (!f)
    return;
  MapReader t(ctx_, *f, {"path", "bos_token_id", "eos_token_ids"},
              kTokenizerHints);
  TokenizerSpec &ts = spec.tokenizer;
  Field pathField = t.require("path");
  std::string path = ctx_.string(pathField);
  if (path.empty())
    ctx_.fail(pathField, "'tokenizer.path' is empty; expected the path of a "
                         "tokenizer.json");
  std::filesystem::path p(path);
  if (p.is_relative())
    p = std::filesystem::path(displayName_).parent_path() / p;
  ts.path = p.lexically_normal().string();
  // The value's place: where the missing-file message points too.
  ts.pathLoc = {ctx_.file(), pathField.node.Mark().line + 1,
                pathField.node.Mark().column + 1};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(ts.path, ec))
    ctx_.fail(pathField, "tokenizer file '" + ts.path +
                             "' does not exist or is not a file (paths are "
                             "relative to the model file)");
  auto tokenId = [&](const Field &id) {
    const int64_t v = ctx_.integer(id);
    if (v < 0 || v >= spec.vocabSize)
      ctx_.fail(id, "token id " + id.node.Scalar() +
                        " is outside the vocabulary (0 to " +
                        str(spec.vocabSize - 1) + ")");
    return v;
  };
  if (auto b = t.find("bos_token_id"))
    ts.bosId = tokenId(*b);
  if (auto e = t.find("eos_token_ids")) {
    if (e->node.IsScalar()) {
      ts.eosIds.push_back(tokenId(*e));
    } else {
      for (const Field &id : ctx_.sequence(*e))
        ts.eosIds.push_back(tokenId(id));
      if (ts.eosIds.size() > size_t(limits::kMaxEosIds))
        ctx_.fail(*e, "at most " + str(limits::kMaxEosIds) +
                          " EOS ids are supported, got " +
                          str(int64_t(ts.eosIds.size())));
    }
  }
}

void SpecReader::readWeights(const MapReader &top, ModelSpec &spec) {
  auto f = top.find("weights");
  if (!f)
    return; // random, seed 0, init_std 0.02 (the WeightsSpec defaults)
  MapReader w(ctx_, *f, {"source", "seed", "init_std", "path"}, kWeightsHints);
  Field sourceField = w.require("source");
  std::string source = ctx_.string(sourceField);
  WeightsSpec &ws = spec.weights;
  auto onlyFor = [&](const char *key, const char *src) {
    if (auto extra = w.find(key))
      ctx_.fail(extra->anchor,
                "'" + extra->path + "' applies only to 'source: " + src + "'");
  };
  if (source == "random") {
    ws.source = WeightSource::Random;
    onlyFor("path", "safetensors");
    if (auto s = w.find("seed")) {
      int64_t seed = ctx_.integer(*s);
      if (seed < 0)
        ctx_.fail(*s, "expected a non-negative integer for 'weights.seed', "
                      "got " +
                          s->node.Scalar());
      ws.seed = static_cast<uint64_t>(seed);
    }
    if (auto s = w.find("init_std")) {
      ws.initStd = ctx_.positiveNumber(*s);
      if (ws.initStd > limits::kMaxInitStd)
        ctx_.fail(*s, "value " + s->node.Scalar() +
                          " for 'weights.init_std' is too large; the largest "
                          "supported value is " +
                          str(int64_t(limits::kMaxInitStd)));
    }
    return;
  }
  if (source != "safetensors")
    ctx_.fail(sourceField, "unsupported weights source '" + source +
                               "'; supported: random, safetensors");
  ws.source = WeightSource::Safetensors;
  onlyFor("seed", "random");
  onlyFor("init_std", "random");
  Field pathField = w.require("path");
  std::string path = ctx_.string(pathField);
  if (path.empty())
    ctx_.fail(pathField, "'weights.path' is empty; expected the path of a "
                         ".safetensors file or of its index");
  // Relative to the model file, so that a model directory can be moved as a
  // whole and used from any working directory.
  std::filesystem::path p(path);
  if (p.is_relative())
    p = std::filesystem::path(displayName_).parent_path() / p;
  ws.path = p.lexically_normal().string();
}

} // namespace

ModelSpec readModelSpec(const YamlContext &ctx, const YAML::Node &root,
                        const std::string &displayName) {
  return SpecReader(ctx, displayName).read(root);
}

} // namespace detail
} // namespace strata

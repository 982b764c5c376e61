// The converter's rope, attention and linear-attention sections
// (models/HfConverter.h).
#include "models/HfConverter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace strata::detail {

RopeScalingOut HfConverter::ropeScaling() {
  RopeScalingOut out;
  std::optional<HfField> scaling = get("rope_scaling");
  std::optional<HfField> params = get("rope_parameters");
  if (scaling && params)
    ctx_.fail(*params, "both 'rope_scaling' and 'rope_parameters' are given; "
                       "expected one of them");
  std::optional<HfField> src = scaling ? scaling : params;
  if (!src)
    return out;
  std::map<std::string, HfField> entries;
  std::vector<std::string> order;
  for (const HfField &e : ctx_.members(*src)) {
    std::string key = e.path.substr(src->path.size() + 1);
    entries[key] = e;
    order.push_back(key);
  }
  auto entry = [&](const std::string &key) -> std::optional<HfField> {
    auto it = entries.find(key);
    if (it == entries.end() || it->second.isNull())
      return std::nullopt;
    return it->second;
  };
  std::optional<HfField> type = entry("rope_type");
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
  // newer configs; HfConverter::convert reads those.
  std::set<std::string> allowed = {"rope_type", "type"};
  if (src->path == "rope_parameters") {
    allowed.insert("rope_theta");
    allowed.insert("partial_rotary_factor");
  }
  for (const std::string &r : required)
    allowed.insert(r);
  for (const std::string &key : order)
    if (!allowed.count(key))
      ctx_.fail(entries.at(key).keyPos, "unsupported field '" + src->path +
                                            "." + key + "' for rope type '" +
                                            kind + "'");
  if (kind == "default")
    return out;
  out.type = kind;
  out.typeField = *type;
  for (const std::string &r : required) {
    std::optional<HfField> f = entry(r);
    if (!f)
      ctx_.fail(*src, "missing '" + r + "' in '" + src->path +
                          "' (required by rope type '" + kind + "')");
    out.params.push_back({r, *f});
  }
  return out;
}

void HfConverter::attentionSection(ModelFileOut &out, HfArch arch,
                                   const HfField &heads, int64_t headDim,
                                   JsonPos headDimPos,
                                   const std::optional<HfField> &window) {
  RopeScalingOut scaling = ropeScaling();
  std::optional<HfField> theta = get("rope_theta");
  std::optional<HfField> partial = get("partial_rotary_factor");
  if (auto params = get("rope_parameters")) {
    // Not an object: ropeScaling has said so already.
    for (auto [name, slot] : {std::pair<const char *, std::optional<HfField> *>{
                                  "rope_theta", &theta},
                              {"partial_rotary_factor", &partial}}) {
      const JsonMember *m = params->value->find(name);
      if (!m || m->value.isNull())
        continue;
      if (*slot)
        ctx_.fail(m->value.pos, "'" + std::string(name) +
                                    "' is given both at the top level and "
                                    "in 'rope_parameters'");
      *slot =
          HfField{"rope_parameters." + std::string(name), &m->value, m->keyPos};
    }
  }
  if (!theta)
    ctx_.fail(root_, "missing required field 'rope_theta'");
  std::string thetaText = positiveNumberText(*theta);

  std::optional<int64_t> rotaryDim;
  JsonPos rotaryPos;
  if (partial) {
    double f = ctx_.positiveNumber(*partial);
    double r = f * static_cast<double>(headDim);
    double rounded = std::round(r);
    if (std::fabs(r - rounded) > 1e-9 * std::max(1.0, r) ||
        static_cast<int64_t>(rounded) % 2 != 0 || rounded > headDim ||
        rounded < 2)
      ctx_.fail(*partial, "'" + partial->path + "' " + partial->value->text +
                              " times head_dim " + std::to_string(headDim) +
                              " is not an even number of rotated "
                              "elements between 2 and head_dim");
    rotaryDim = static_cast<int64_t>(rounded);
    rotaryPos = partial->pos();
  }
  if (auto f = get("rotary_dim")) {
    if (rotaryDim)
      ctx_.fail(*f, "both 'rotary_dim' and 'partial_rotary_factor' are "
                    "given; expected one of them");
    rotaryDim = ctx_.positiveInt(*f);
    rotaryPos = f->pos();
    // The original MiniMax code rotated the first rotary_dim elements;
    // transformers' MiniMaxForCausalLM ignores the field and rotates the
    // whole head, so only the value that changes nothing is accepted.
    if (arch == HfArch::MiniMax && *rotaryDim != headDim)
      ctx_.fail(*f, "'rotary_dim' " + f->value->text +
                        " differs from head_dim " + std::to_string(headDim) +
                        ": MiniMaxForCausalLM rotates the whole head");
  }

  out.blankLine();
  out.beginMap("attention");
  out.field("num_heads", heads.value->text, heads.pos());
  if (auto f = get("num_key_value_heads"))
    out.field("num_kv_heads", std::to_string(ctx_.positiveInt(*f)), f->pos());
  out.field("head_dim", std::to_string(headDim), headDimPos);
  if (arch == HfArch::Qwen3)
    out.flag("qk_norm", true);
  if (window)
    out.field("sliding_window", std::to_string(ctx_.positiveInt(*window)),
              window->pos());
  out.beginMap("rope");
  out.field("theta", thetaText, theta->pos());
  if (rotaryDim && *rotaryDim != headDim)
    out.field("rotary_dim", std::to_string(*rotaryDim), rotaryPos);
  if (!scaling.type.empty()) {
    out.beginMap("scaling");
    out.field("type", scaling.type, scaling.typeField.pos());
    for (const auto &[key, f] : scaling.params) {
      std::string v = key == "original_max_position_embeddings"
                          ? std::to_string(ctx_.positiveInt(f))
                          : positiveNumberText(f);
      out.field(key, v, f.pos());
    }
    out.endMap();
  }
  out.endMap();
  out.endMap();
}

void HfConverter::linearAttentionSection(
    ModelFileOut &out, const HfField &heads, int64_t headDim,
    JsonPos headDimPos, int64_t numLayers, int64_t numHeads,
    const std::vector<std::string> &kinds) {
  out.blankLine();
  out.beginMap("linear_attention");
  out.field("num_heads", heads.value->text, heads.pos());
  out.field("head_dim", std::to_string(headDim), headDimPos);
  // transformers' lightning layers normalise their output with the
  // RMSNorm default epsilon, not rms_norm_eps.
  out.field("norm_eps", "1.0e-6");
  // The per-layer decay as transformers computes it:
  // 2^(-8(h+1)/H) * (1 - l/(L - 1 + 1e-5) + 1e-5), which differs from
  // the original code's `minimax` scheme (ALiBi slopes, l/(L - 1)).
  out.beginList("decay_slopes");
  for (int64_t l = 0; l < numLayers; ++l) {
    if (kinds[size_t(l)] != "linear_attention")
      continue;
    double factor = 1.0 - double(l) / (double(numLayers) - 1.0 + 1e-5) + 1e-5;
    std::vector<std::string> slopes;
    for (int64_t h = 0; h < numHeads; ++h) {
      double slope =
          std::exp2(-8.0 * double(h + 1) / double(numHeads)) * factor;
      // 17 significant digits: the double reads back exactly.
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17e", slope);
      slopes.push_back(buf);
    }
    out.flowListItem(slopes, "layer " + std::to_string(l));
  }
  out.endList();
  out.endMap();
}

} // namespace strata::detail

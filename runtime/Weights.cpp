#include "runtime/Weights.h"

#include "kernels/cpu/HalfTypes.h"
#include "kernels/cpu/SamplingRef.h"
#include "runtime/RandomWeights.h"
#include "runtime/Safetensors.h"
#include "runtime/WeightScan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include <unistd.h>

namespace strata {

namespace {

void store(plan::DType dtype, float value, uint8_t *dst) {
  uint16_t bits = 0;
  switch (dtype) {
  case plan::DType::F32:
    std::memcpy(dst, &value, 4);
    return;
  case plan::DType::BF16:
    bits = kernels::floatToBf16Bits(value);
    break;
  case plan::DType::F16:
    bits = kernels::floatToF16Bits(value);
    break;
  case plan::DType::I32:
    return;
  }
  std::memcpy(dst, &bits, 2);
}

/// One checkpoint tensor by name: its values depend on (seed, name) only.
std::vector<uint8_t> randomTensor(const std::string &name, plan::DType dtype,
                                  int64_t count, uint64_t seed, double std) {
  const uint64_t width = plan::byteWidth(dtype);
  std::vector<uint8_t> out(count * width);
  const uint64_t h = weightNameHash(name);
  const RandomInit init = randomInitOf(name);
  bool norm = init == RandomInit::One;
  bool bias = init == RandomInit::Zero;
  for (int64_t i = 0; i < count; ++i) {
    float value;
    if (norm) {
      value = 1.0f;
    } else if (bias) {
      value = 0.0f;
    } else {
      // Box-Muller from two counter-based uniforms; 1 - u keeps log finite.
      double u1 = 1.0 - kernels::counterUniform(seed, h, 2 * i);
      double u2 = kernels::counterUniform(seed, h, 2 * i + 1);
      value = float(std * std::sqrt(-2.0 * std::log(u1)) *
                    std::cos(6.283185307179586 * u2));
    }
    store(dtype, value, &out[i * width]);
  }
  return out;
}

/// Lightning layers of Hugging Face MiniMax checkpoints also store the decay
/// tables their forward derives from the slopes (slope_rate and the
/// per-block query, key and diagonal decays). The model file's decay slopes
/// already define them, so they are accepted and not read.
bool isDerivedDecayBuffer(const std::string &name) {
  static const char *const kSuffixes[] = {
      ".self_attn.slope_rate", ".self_attn.query_decay",
      ".self_attn.key_decay", ".self_attn.diagonal_decay"};
  if (name.rfind("model.layers.", 0) != 0)
    return false;
  for (const char *suffix : kSuffixes) {
    const std::string sfx(suffix);
    if (name.size() > sfx.size() &&
        name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0)
      return true;
  }
  return false;
}

} // namespace

WeightStore WeightStore::random(const plan::Plan &plan, WeightSubset subset) {
  const double std = plan.weightInitStd;
  const std::vector<bool> read = plan::weightsRead(plan);
  WeightStore store;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const plan::Weight &w = plan.weights[i];
    if (subset == WeightSubset::ReadByLaunches && !read[i]) {
      store.storage_.emplace_back();
      continue;
    }
    if (w.packedFrom.empty()) {
      store.storage_.push_back(randomTensor(w.name, w.dtype, plan::numElements(w.shape),
                                            plan.weightSeed, std));
      continue;
    }
    // Packed: the sources stacked along dimension 0, each drawn exactly as
    // the unpacked tensor of that name would be.
    std::vector<uint8_t> packed;
    int64_t rowElems = plan::numElements(w.shape) / w.shape[0];
    for (size_t s = 0; s < w.packedFrom.size(); ++s) {
      std::vector<uint8_t> part =
          randomTensor(w.packedFrom[s], w.dtype, w.packedRows[s] * rowElems,
                       plan.weightSeed, std);
      packed.insert(packed.end(), part.begin(), part.end());
    }
    store.storage_.push_back(std::move(packed));
  }
  return store;
}

uint64_t WeightStore::totalBytes() const {
  uint64_t n = 0;
  for (const auto &s : storage_)
    n += s.size();
  return n;
}

namespace {

float loadValue(SafetensorsDType dtype, const uint8_t *src) {
  uint16_t bits = 0;
  switch (dtype) {
  case SafetensorsDType::F32: {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  case SafetensorsDType::BF16:
    std::memcpy(&bits, src, 2);
    return kernels::bf16BitsToFloat(bits);
  case SafetensorsDType::F16:
    std::memcpy(&bits, src, 2);
    return kernels::f16BitsToFloat(bits);
  }
  return 0.0f;
}

bool sameType(SafetensorsDType a, plan::DType b) {
  return (a == SafetensorsDType::F32 && b == plan::DType::F32) ||
         (a == SafetensorsDType::F16 && b == plan::DType::F16) ||
         (a == SafetensorsDType::BF16 && b == plan::DType::BF16);
}

/// Appends `count` values of `src` converted to `dtype`. Every conversion
/// goes through fp32, which holds bf16 and fp16 exactly, so the only
/// rounding is the final one.
void convertInto(SafetensorsDType srcType, const uint8_t *src, int64_t count,
                 plan::DType dtype, uint8_t *dst) {
  if (sameType(srcType, dtype)) {
    std::memcpy(dst, src, size_t(count) * plan::byteWidth(dtype));
    return;
  }
  const uint64_t in = byteWidth(srcType), out = plan::byteWidth(dtype);
  for (int64_t i = 0; i < count; ++i)
    store(dtype, loadValue(srcType, src + i * in), dst + i * out);
}

/// A value for messages: "NaN", "+Inf", "-Inf", or the number.
std::string valueText(SafetensorsDType dtype, const uint8_t *src) {
  float v = loadValue(dtype, src);
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
}

/// Converts elements [first, first + count) of checkpoint tensor `e` to
/// `dtype` at `dst`, checking the values on the way: every source value
/// must be finite, and must stay finite in `dtype`. Chunks keep each piece
/// in cache between the scan, the conversion and the overflow scan.
bool loadChecked(const SafetensorsCheckpoint::Entry &e, int64_t first,
                 int64_t count, plan::DType dtype, uint8_t *dst,
                 std::string &error) {
  constexpr int64_t kChunk = 1 << 14;
  const SafetensorsDType srcType = e.tensor->dtype;
  const uint64_t in = byteWidth(srcType), out = plan::byteWidth(dtype);
  const bool canOverflow =
      !sameType(srcType, dtype) && conversionCanOverflow(srcType, dtype);
  const uint8_t *base = e.file->data(*e.tensor);
  for (int64_t at = 0; at < count; at += kChunk) {
    const int64_t n = std::min(kChunk, count - at);
    const uint8_t *src = base + uint64_t(first + at) * in;
    uint8_t *to = dst + uint64_t(at) * out;
    auto fail = [&](int64_t bad, const std::string &why) {
      error = e.file->path() + ": error: tensor '" + e.tensor->name + "' " +
              elementText(e.tensor->shape, first + at + bad) + " is " +
              valueText(srcType, src + uint64_t(bad) * in) + why;
      return false;
    };
    if (int64_t bad = findNonFinite(srcType, src, n); bad >= 0)
      return fail(bad, "");
    convertInto(srcType, src, n, dtype, to);
    if (canOverflow)
      if (int64_t bad = findInfinite(dtype, to, n); bad >= 0)
        return fail(bad, ", which overflows the model's dtype " +
                             std::string(plan::toString(dtype)));
  }
  return true;
}

/// Where the values of one plan tensor come from: rows of one checkpoint
/// tensor viewed as [rows, rowElems] (rowElems from the plan tensor's
/// shape), in order; no ranges means the whole tensor.
struct Source {
  std::string tensor;
  const SafetensorsCheckpoint::Entry *entry = nullptr;
  std::vector<std::pair<int64_t, int64_t>> rows; // (first, count)
};

/// Hugging Face layouts that hold a plan tensor under another name, used
/// only when the checkpoint lacks the plan's own name:
///  - transformers' MiniMax lightning layers: one `qkv_proj` whose rows are
///    [head][q|k|v][head_dim], and `out_proj` for `o_proj`;
///  - a mixture-of-experts MLP of exactly one expert, which every token is
///    routed to with weight 1 (a softmax over one logit), so that it is the
///    dense MLP: `block_sparse_moe.experts.0.w1/w3/w2` (gate, up, down), or
///    transformers' stacked `mlp.experts.gate_up_proj` [1, 2I, H] and
///    `mlp.experts.down_proj` [1, H, I].
/// `routers` collects the router tensors that a one-expert MLP makes
/// unused. Returns false with `error` set when an alias exists but does not
/// fit; `found` tells whether one was found.
bool resolveAlias(const SafetensorsCheckpoint &ckpt, const plan::Plan &plan,
                  const std::string &name, const std::vector<int64_t> &shape,
                  Source &src, bool &found, std::set<std::string> &routers,
                  std::string &error) {
  found = false;
  const std::string layers = "model.layers.";
  if (name.compare(0, layers.size(), layers) != 0 || shape.size() != 2)
    return true;
  size_t dot = name.find('.', layers.size());
  if (dot == std::string::npos)
    return true;
  std::string prefix = name.substr(0, dot + 1); // "model.layers.N."
  std::string rest = name.substr(dot + 1);
  auto lookup = [&](const std::string &tensor,
                    const std::vector<int64_t> &expected) -> bool {
    const SafetensorsCheckpoint::Entry *e = ckpt.find(prefix + tensor);
    if (!e)
      return false;
    found = true;
    src.tensor = prefix + tensor;
    src.entry = e;
    if (e->tensor->shape != expected) {
      error = e->file->path() + ": error: tensor '" + src.tensor +
              "' has shape " + shapeText(e->tensor->shape) +
              ", the model expects " + shapeText(expected) + " (it holds '" +
              name + "')";
      return false;
    }
    return true;
  };
  auto expertCount = [&](const std::string &tensor) -> int64_t {
    const SafetensorsCheckpoint::Entry *e = ckpt.find(prefix + tensor);
    return e && !e->tensor->shape.empty() ? e->tensor->shape[0] : 0;
  };
  const int64_t rows = shape[0], cols = shape[1];

  if (rest == "self_attn.o_proj.weight") {
    if (!lookup("self_attn.out_proj.weight", shape) && found)
      return false;
    return true;
  }
  const char *qkv[] = {"self_attn.q_proj.weight", "self_attn.k_proj.weight",
                       "self_attn.v_proj.weight"};
  for (int j = 0; j < 3; ++j) {
    if (rest != qkv[j])
      continue;
    int64_t heads = plan.linearState.heads, d = plan.linearState.keyDim;
    if (heads <= 0 || d <= 0 || rows != heads * d)
      return true;
    if (!lookup("self_attn.qkv_proj.weight", {3 * rows, cols}))
      return !found;
    for (int64_t h = 0; h < heads; ++h)
      src.rows.push_back({h * 3 * d + j * d, d});
    return true;
  }

  struct Mlp {
    const char *plan, *legacy, *stacked;
    bool upper; // the second half of gate_up_proj
  };
  const Mlp mlps[] = {
      {"mlp.gate_proj.weight", "block_sparse_moe.experts.0.w1.weight",
       "mlp.experts.gate_up_proj", false},
      {"mlp.up_proj.weight", "block_sparse_moe.experts.0.w3.weight",
       "mlp.experts.gate_up_proj", true},
      {"mlp.down_proj.weight", "block_sparse_moe.experts.0.w2.weight",
       "mlp.experts.down_proj", false},
  };
  for (const Mlp &m : mlps) {
    if (rest != m.plan)
      continue;
    bool down = rest == "mlp.down_proj.weight";
    if (ckpt.find(prefix + "block_sparse_moe.experts.1.w1.weight") ||
        expertCount(m.stacked) > 1) {
      const SafetensorsCheckpoint::Entry *e = ckpt.find(prefix + m.stacked);
      std::string where = e ? e->file->path() : ckpt.path();
      error = where + ": error: layer '" + prefix.substr(0, dot) +
              "' has a mixture-of-experts MLP of several experts, which "
              "the model cannot express (one expert is supported)";
      found = true;
      return false;
    }
    if (lookup(m.legacy, shape)) {
      // rows empty: the whole tensor
    } else if (found) {
      return false;
    } else if (down ? lookup(m.stacked, {1, rows, cols})
                    : lookup(m.stacked, {1, 2 * rows, cols})) {
      if (m.upper)
        src.rows.push_back({rows, rows});
      else
        src.rows.push_back({0, rows});
    } else {
      return !found;
    }
    for (const char *router :
         {"block_sparse_moe.gate.weight", "mlp.gate.weight"})
      if (ckpt.find(prefix + router))
        routers.insert(prefix + router);
    return true;
  }
  return true;
}

/// A one-line bar on stderr, redrawn in place; silent when stderr is not a
/// terminal so that logs and pipes stay clean.
class Progress {
public:
  Progress(size_t tensors, uint64_t bytes)
      : enabled_(::isatty(2)), tensors_(tensors), bytes_(bytes) {}
  ~Progress() {
    if (enabled_ && drawn_)
      std::fputc('\n', stderr);
  }
  void update(size_t tensors, uint64_t bytes) {
    if (!enabled_)
      return;
    auto now = std::chrono::steady_clock::now();
    bool last = tensors == tensors_;
    if (drawn_ && !last && now - lastDraw_ < std::chrono::milliseconds(100))
      return;
    lastDraw_ = now;
    drawn_ = true;
    constexpr int kWidth = 30;
    int filled = bytes_ ? int(double(bytes) / double(bytes_) * kWidth) : kWidth;
    std::string bar(size_t(filled), '#');
    bar.resize(kWidth, ' ');
    std::fprintf(stderr,
                 "\rloading weights [%s] %zu/%zu tensors, %.1f/%.1f MiB",
                 bar.c_str(), tensors, tensors_, double(bytes) / (1 << 20),
                 double(bytes_) / (1 << 20));
    std::fflush(stderr);
  }

private:
  bool enabled_;
  bool drawn_ = false;
  size_t tensors_;
  uint64_t bytes_;
  std::chrono::steady_clock::time_point lastDraw_;
};

} // namespace

std::optional<WeightStore>
WeightStore::fromSafetensors(const plan::Plan &plan, const std::string &path,
                             std::string &error, WeightSubset subset) {
  WeightStore store;
  store.storage_.resize(plan.weights.size());
  if (!streamSafetensors(plan, path, error, subset,
                         [&](int32_t index, std::vector<uint8_t> &bytes,
                             std::string &) {
                           store.storage_[size_t(index)] = std::move(bytes);
                           return true;
                         }))
    return std::nullopt;
  return store;
}

bool WeightStore::streamSafetensors(const plan::Plan &plan,
                                    const std::string &path,
                                    std::string &error, WeightSubset subset,
                                    const Sink &sink) {
  auto ckpt = SafetensorsCheckpoint::open(path, error);
  if (!ckpt)
    return false;
  auto where = [&](const SafetensorsCheckpoint::Entry &e) {
    return e.file->path();
  };

  // What each plan weight needs: one (tensor, shape) per source, checked
  // in full before anything is copied.
  struct Part {
    std::string tensor;
    std::vector<int64_t> shape;
    Source source;
  };
  std::vector<std::vector<Part>> parts(plan.weights.size());
  std::set<std::string> used, routers;
  size_t totalParts = 0;
  uint64_t totalBytes = 0;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const plan::Weight &w = plan.weights[i];
    if (w.dtype == plan::DType::I32) {
      error = "plan weight '" + w.name + "' is not a floating-point tensor";
      return false;
    }
    if (w.packedFrom.empty()) {
      parts[i].push_back({w.name, w.shape});
    } else {
      int64_t rows = 0;
      for (int64_t r : w.packedRows)
        rows += r;
      if (w.shape.empty() || w.packedRows.size() != w.packedFrom.size() ||
          rows != w.shape[0]) {
        error = "plan weight '" + w.name +
                "': its packed rows do not add up to its shape";
        return false;
      }
      for (size_t s = 0; s < w.packedFrom.size(); ++s) {
        std::vector<int64_t> shape = w.shape;
        shape[0] = w.packedRows[s];
        parts[i].push_back({w.packedFrom[s], shape});
      }
    }
    for (Part &p : parts[i]) {
      const SafetensorsCheckpoint::Entry *e = ckpt->find(p.tensor);
      if (!e) {
        bool found = false;
        if (!resolveAlias(*ckpt, plan, p.tensor, p.shape, p.source, found,
                          routers, error))
          return false;
        if (found) {
          used.insert(p.source.tensor);
          ++totalParts;
          totalBytes += uint64_t(plan::numElements(p.shape)) *
                        byteWidth(p.source.entry->tensor->dtype);
          continue;
        }
        error = path + ": error: tensor '" + p.tensor + "' is missing";
        if (p.tensor == "lm_head.weight")
          error += " (a checkpoint without lm_head ties it to the "
                   "embedding: set tie_word_embeddings: true in the model "
                   "file)";
        return false;
      }
      if (e->tensor->shape != p.shape) {
        error = where(*e) + ": error: tensor '" + p.tensor + "' has shape " +
                shapeText(e->tensor->shape) + ", the model expects " +
                shapeText(p.shape);
        return false;
      }
      p.source.tensor = p.tensor;
      p.source.entry = e;
      used.insert(p.tensor);
      ++totalParts;
      totalBytes += e->tensor->end - e->tensor->begin;
    }
  }
  // A one-expert MLP's router computes a softmax over one logit: exactly 1
  // whatever its weights, so they are read by nothing.
  for (const std::string &name : routers) {
    const SafetensorsCheckpoint::Entry *e = ckpt->find(name);
    if (e->tensor->shape.empty() || e->tensor->shape[0] != 1) {
      error = where(*e) + ": error: router '" + name + "' has shape " +
              shapeText(e->tensor->shape) +
              ": a mixture-of-experts MLP of several experts, which the "
              "model cannot express (one expert is supported)";
      return false;
    }
    used.insert(name);
  }
  for (const auto &[name, e] : ckpt->tensors())
    if (!used.count(name) && !(plan.linearState.layers > 0 &&
                               isDerivedDecayBuffer(name))) {
      error = where(e) + ": error: unexpected tensor '" + name +
              "': the model uses no tensor of that name (does the model "
              "file describe this checkpoint?)";
      return false;
    }

  // Only what is copied counts towards the progress line.
  std::vector<bool> keep(plan.weights.size(), true);
  if (subset == WeightSubset::ReadByLaunches) {
    keep = plan::weightsRead(plan);
    totalParts = 0;
    totalBytes = 0;
    for (size_t i = 0; i < plan.weights.size(); ++i)
      if (keep[i])
        for (const Part &p : parts[i]) {
          ++totalParts;
          totalBytes += uint64_t(plan::numElements(p.shape)) *
                        byteWidth(p.source.entry->tensor->dtype);
        }
  }
  Progress progress(totalParts, totalBytes);
  size_t doneTensors = 0;
  uint64_t doneBytes = 0;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const plan::Weight &w = plan.weights[i];
    if (!keep[i])
      continue;
    bytes.clear(); // also after a sink took the previous weight's bytes
    bytes.resize(uint64_t(plan::numElements(w.shape)) *
                 plan::byteWidth(w.dtype));
    uint8_t *dst = bytes.data();
    for (const Part &p : parts[i]) {
      const SafetensorsCheckpoint::Entry &e = *p.source.entry;
      int64_t count = plan::numElements(p.shape);
      if (p.source.rows.empty()) {
        if (!loadChecked(e, 0, count, w.dtype, dst, error))
          return false;
      } else {
        // Rows of the checkpoint tensor, each as wide as the plan tensor's.
        const int64_t rowElems = count / p.shape[0];
        uint8_t *out = dst;
        for (auto [first, n] : p.source.rows) {
          if (!loadChecked(e, first * rowElems, n * rowElems, w.dtype, out,
                           error))
            return false;
          out += uint64_t(n * rowElems) * plan::byteWidth(w.dtype);
        }
      }
      dst += uint64_t(count) * plan::byteWidth(w.dtype);
      progress.update(++doneTensors,
                      doneBytes += uint64_t(count) * byteWidth(e.tensor->dtype));
    }
    if (!sink(int32_t(i), bytes, error))
      return false;
  }
  return true;
}

} // namespace strata

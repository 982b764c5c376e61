#include "runtime/Weights.h"

#include "kernels/cpu/HalfTypes.h"
#include "kernels/cpu/SamplingRef.h"
#include "runtime/RandomWeights.h"
#include "runtime/Safetensors.h"

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

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
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

} // namespace

WeightStore WeightStore::random(const plan::Plan &plan) {
  const double std = plan.weightInitStd;
  WeightStore store;
  for (const plan::Weight &w : plan.weights) {
    if (w.packedFrom.empty()) {
      store.storage_.push_back(randomTensor(w.name, w.dtype, elements(w.shape),
                                            plan.weightSeed, std));
      continue;
    }
    // Packed: the sources stacked along dimension 0, each drawn exactly as
    // the unpacked tensor of that name would be.
    std::vector<uint8_t> packed;
    int64_t rowElems = elements(w.shape) / w.shape[0];
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

} // namespace strata

namespace strata {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

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

std::optional<WeightStore> WeightStore::fromSafetensors(const plan::Plan &plan,
                                                        const std::string &path,
                                                        std::string &error) {
  auto ckpt = SafetensorsCheckpoint::open(path, error);
  if (!ckpt)
    return std::nullopt;
  auto where = [&](const SafetensorsCheckpoint::Entry &e) {
    return e.file->path();
  };

  // What each plan weight needs: one (tensor, shape) per source, checked
  // in full before anything is copied.
  struct Part {
    std::string tensor;
    std::vector<int64_t> shape;
  };
  std::vector<std::vector<Part>> parts(plan.weights.size());
  std::set<std::string> used;
  size_t totalParts = 0;
  uint64_t totalBytes = 0;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const plan::Weight &w = plan.weights[i];
    if (w.dtype == plan::DType::I32) {
      error = "plan weight '" + w.name + "' is not a floating-point tensor";
      return std::nullopt;
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
        return std::nullopt;
      }
      for (size_t s = 0; s < w.packedFrom.size(); ++s) {
        std::vector<int64_t> shape = w.shape;
        shape[0] = w.packedRows[s];
        parts[i].push_back({w.packedFrom[s], shape});
      }
    }
    for (const Part &p : parts[i]) {
      const SafetensorsCheckpoint::Entry *e = ckpt->find(p.tensor);
      if (!e) {
        error = path + ": error: tensor '" + p.tensor + "' is missing";
        if (p.tensor == "lm_head.weight")
          error += " (a checkpoint without lm_head ties it to the "
                   "embedding: set tie_word_embeddings: true in the model "
                   "file)";
        return std::nullopt;
      }
      if (e->tensor->shape != p.shape) {
        error = where(*e) + ": error: tensor '" + p.tensor + "' has shape " +
                shapeText(e->tensor->shape) + ", the model expects " +
                shapeText(p.shape);
        return std::nullopt;
      }
      used.insert(p.tensor);
      ++totalParts;
      totalBytes += e->tensor->end - e->tensor->begin;
    }
  }
  for (const auto &[name, e] : ckpt->tensors())
    if (!used.count(name)) {
      error = where(e) + ": error: unexpected tensor '" + name +
              "': the model uses no tensor of that name (does the model "
              "file describe this checkpoint?)";
      return std::nullopt;
    }

  Progress progress(totalParts, totalBytes);
  size_t doneTensors = 0;
  uint64_t doneBytes = 0;
  WeightStore store;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const plan::Weight &w = plan.weights[i];
    std::vector<uint8_t> bytes(uint64_t(elements(w.shape)) *
                               plan::byteWidth(w.dtype));
    uint8_t *dst = bytes.data();
    for (const Part &p : parts[i]) {
      const SafetensorsCheckpoint::Entry &e = *ckpt->find(p.tensor);
      int64_t count = elements(p.shape);
      convertInto(e.tensor->dtype, e.file->data(*e.tensor), count, w.dtype,
                  dst);
      dst += uint64_t(count) * plan::byteWidth(w.dtype);
      progress.update(++doneTensors,
                      doneBytes += e.tensor->end - e.tensor->begin);
    }
    store.storage_.push_back(std::move(bytes));
  }
  return store;
}

} // namespace strata

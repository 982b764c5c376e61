#include "runtime/Weights.h"

#include "kernels/cpu/HalfTypes.h"
#include "kernels/cpu/SamplingRef.h"

#include <cmath>
#include <cstring>

namespace strata {

namespace {

/// FNV-1a: a stable name hash, so values do not depend on weight order.
uint64_t nameHash(const std::string &name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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
  const uint64_t h = nameHash(name);
  bool norm = endsWith(name, "norm.weight");
  bool bias = endsWith(name, ".bias");
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

WeightStore WeightStore::random(const plan::Plan &plan, double std) {
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

#include "runtime/WeightScan.h"

#include <algorithm>
#include <cstring>

namespace strata {

namespace {

/// Index of the first of `count` values of type T whose bits under `mask`
/// are all ones, or -1. Blocks are OR-reduced without branches, which
/// vectorises; only a block that holds a match is searched again.
template <typename T>
int64_t firstAllOnes(const uint8_t *src, int64_t count, T mask) {
  constexpr int64_t kBlock = 1024;
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t end = std::min(count, start + kBlock);
    unsigned hit = 0;
    for (int64_t i = start; i < end; ++i) {
      T v;
      std::memcpy(&v, src + i * int64_t(sizeof(T)), sizeof(T));
      hit |= unsigned((v & mask) == mask);
    }
    if (!hit)
      continue;
    for (int64_t i = start; i < end; ++i) {
      T v;
      std::memcpy(&v, src + i * int64_t(sizeof(T)), sizeof(T));
      if ((v & mask) == mask)
        return i;
    }
  }
  return -1;
}

constexpr uint16_t kBf16Exponent = 0x7F80;
constexpr uint16_t kF16Exponent = 0x7C00;
constexpr uint32_t kF32Exponent = 0x7F800000;

} // namespace

int64_t findNonFinite(SafetensorsDType dtype, const uint8_t *src,
                      int64_t count) {
  switch (dtype) {
  case SafetensorsDType::BF16:
    return firstAllOnes<uint16_t>(src, count, kBf16Exponent);
  case SafetensorsDType::F16:
    return firstAllOnes<uint16_t>(src, count, kF16Exponent);
  case SafetensorsDType::F32:
    return firstAllOnes<uint32_t>(src, count, kF32Exponent);
  }
  return -1;
}

int64_t findInfinite(plan::DType dtype, const uint8_t *data, int64_t count) {
  // The values come from finite ones (findNonFinite ran first) and the
  // conversions never make a NaN, so all-ones exponents are infinities.
  switch (dtype) {
  case plan::DType::BF16:
    return firstAllOnes<uint16_t>(data, count, kBf16Exponent);
  case plan::DType::F16:
    return firstAllOnes<uint16_t>(data, count, kF16Exponent);
  case plan::DType::F32:
    return firstAllOnes<uint32_t>(data, count, kF32Exponent);
  case plan::DType::I32:
    return -1;
  }
  return -1;
}

bool conversionCanOverflow(SafetensorsDType from, plan::DType to) {
  // bf16 and f32 share f32's exponent range; f16's is narrower.
  if (to == plan::DType::F16)
    return from != SafetensorsDType::F16;
  if (to == plan::DType::BF16)
    return from == SafetensorsDType::F32;
  return false;
}

std::string elementText(const std::vector<int64_t> &shape, int64_t index) {
  std::string out = "element " + std::to_string(index);
  if (shape.size() < 2)
    return out;
  std::vector<int64_t> at(shape.size());
  int64_t rest = index;
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = std::max<int64_t>(shape[d], 1);
    at[d] = rest % extent;
    rest /= extent;
  }
  if (shape.size() == 2)
    return out + " (row " + std::to_string(at[0]) + ", column " +
           std::to_string(at[1]) + ")";
  std::string text = " (index [";
  for (size_t d = 0; d < at.size(); ++d)
    text += (d ? ", " : "") + std::to_string(at[d]);
  return out + text + "])";
}

} // namespace strata

// Non-finite and overflowing checkpoint values: the raw-bit scans (every
// dtype, any alignment, block boundaries, no false alarms at the largest
// finite values), and the loader's errors, which name the file, the
// tensor and the element, on both load paths.
#include "runtime/WeightScan.h"

#include "kernels/cpu/HalfTypes.h"
#include "runtime/Weights.h"
#include "tests/unit/runtime/SafetensorsWriter.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace strata;
using namespace strata::testing;

namespace {

/// `count` values of 16 or 32 bits, all `fill` but `special` at `at`,
/// placed one byte into the buffer so that no load is aligned.
template <typename T>
std::vector<uint8_t> values(int64_t count, T fill, int64_t at, T special) {
  std::vector<uint8_t> out(1 + size_t(count) * sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    T v = i == at ? special : fill;
    std::memcpy(&out[1 + size_t(i) * sizeof(T)], &v, sizeof(T));
  }
  return out;
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

} // namespace

TEST_CASE("weight scan: the first non-finite value of each dtype") {
  const int64_t n = 5000; // several blocks of 1024 and a partial one
  for (int64_t at : {0, 1023, 1024, 2047, 4999}) {
    INFO("at " << at);
    // NaN and both infinities, each next to the largest finite values.
    auto bf = values<uint16_t>(n, 0x7F7F, at, 0x7FC0);
    CHECK(findNonFinite(SafetensorsDType::BF16, bf.data() + 1, n) == at);
    bf = values<uint16_t>(n, 0xFF7F, at, 0xFF80);
    CHECK(findNonFinite(SafetensorsDType::BF16, bf.data() + 1, n) == at);
    auto h = values<uint16_t>(n, 0x7BFF, at, 0x7C00);
    CHECK(findNonFinite(SafetensorsDType::F16, h.data() + 1, n) == at);
    h = values<uint16_t>(n, 0xFBFF, at, 0x7E01);
    CHECK(findNonFinite(SafetensorsDType::F16, h.data() + 1, n) == at);
    auto f = values<uint32_t>(n, 0x7F7FFFFF, at, 0xFF800000);
    CHECK(findNonFinite(SafetensorsDType::F32, f.data() + 1, n) == at);
    f = values<uint32_t>(n, bitsOf(-1.5f), at, 0x7FC00001);
    CHECK(findNonFinite(SafetensorsDType::F32, f.data() + 1, n) == at);
  }
  // All finite: subnormals, zeros of both signs, the largest values.
  auto clean = values<uint16_t>(3000, 0x0001, 7, 0x8000);
  CHECK(findNonFinite(SafetensorsDType::BF16, clean.data() + 1, 3000) == -1);
  CHECK(findNonFinite(SafetensorsDType::F16, clean.data() + 1, 3000) == -1);
  auto cleanF = values<uint32_t>(3000, 0x7F7FFFFF, 7, 0xFF7FFFFF);
  CHECK(findNonFinite(SafetensorsDType::F32, cleanF.data() + 1, 3000) == -1);
  CHECK(findNonFinite(SafetensorsDType::F32, cleanF.data() + 1, 0) == -1);
  // After a conversion, infinities only.
  auto converted = values<uint16_t>(100, 0x7BFF, 42, 0xFC00);
  CHECK(findInfinite(plan::DType::F16, converted.data() + 1, 100) == 42);
}

TEST_CASE("weight scan: which conversions can overflow") {
  using S = SafetensorsDType;
  using P = plan::DType;
  CHECK(conversionCanOverflow(S::F32, P::BF16));
  CHECK(conversionCanOverflow(S::F32, P::F16));
  CHECK(conversionCanOverflow(S::BF16, P::F16));
  CHECK_FALSE(conversionCanOverflow(S::F16, P::BF16));
  CHECK_FALSE(conversionCanOverflow(S::F16, P::F32));
  CHECK_FALSE(conversionCanOverflow(S::BF16, P::F32));
  CHECK_FALSE(conversionCanOverflow(S::BF16, P::BF16));
}

TEST_CASE("weight scan: elements are named by row and column") {
  CHECK(elementText({7}, 5) == "element 5");
  CHECK(elementText({4, 320}, 850) == "element 850 (row 2, column 210)");
  CHECK(elementText({2, 3, 4}, 23) == "element 23 (index [1, 2, 3])");
}

namespace {

plan::Plan onePlan(plan::DType dtype, std::vector<int64_t> shape) {
  plan::Plan p;
  p.weights.push_back({"w", dtype, shape, {}, {}});
  return p;
}

StTensor f32Tensor(const std::string &name, std::vector<int64_t> shape,
                   std::vector<float> vals) {
  StTensor t{name, "F32", shape, std::vector<uint8_t>(vals.size() * 4)};
  std::memcpy(t.bytes.data(), vals.data(), t.bytes.size());
  return t;
}

StTensor bitsTensor(const std::string &name, const std::string &dtype,
                    std::vector<int64_t> shape, std::vector<uint16_t> vals) {
  StTensor t{name, dtype, shape, std::vector<uint8_t>(vals.size() * 2)};
  std::memcpy(t.bytes.data(), vals.data(), t.bytes.size());
  return t;
}

/// The loader's error on both load paths, which must agree.
std::string loadError(const plan::Plan &plan, const std::string &path) {
  std::string error;
  CHECK(!WeightStore::fromSafetensors(plan, path, error));
  std::string streamed;
  CHECK(!WeightStore::streamSafetensors(
      plan, path, streamed, WeightSubset::All,
      [](int32_t, std::vector<uint8_t> &, std::string &) { return true; }));
  CHECK(streamed == error);
  return error;
}

} // namespace

TEST_CASE("loading: a NaN or an infinity names the tensor and element") {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  // bf16 as stored: 3 rows of 4; a NaN at row 2, column 1.
  std::vector<uint16_t> bits(12, 0x3F80); // 1.0
  bits[9] = 0x7FC1;
  writeSafetensors(path, {bitsTensor("w", "BF16", {3, 4}, bits)});
  CHECK(loadError(onePlan(plan::DType::BF16, {3, 4}), path) ==
        path + ": error: tensor 'w' element 9 (row 2, column 1) is NaN");
  // Also when the plan's dtype differs (converted) or the tensor is 1-D.
  bits[9] = 0x3F80;
  bits[11] = 0xFF80;
  writeSafetensors(path, {bitsTensor("w", "BF16", {12}, bits)});
  CHECK(loadError(onePlan(plan::DType::F32, {12}), path) ==
        path + ": error: tensor 'w' element 11 is -Inf");
  std::vector<uint16_t> half(12, 0x3C00);
  half[0] = 0x7C00;
  writeSafetensors(path, {bitsTensor("w", "F16", {3, 4}, half)});
  CHECK(loadError(onePlan(plan::DType::BF16, {3, 4}), path) ==
        path + ": error: tensor 'w' element 0 (row 0, column 0) is +Inf");
  std::vector<float> f(12, 0.5f);
  f[7] = std::numeric_limits<float>::quiet_NaN();
  writeSafetensors(path, {f32Tensor("w", {3, 4}, f)});
  CHECK(loadError(onePlan(plan::DType::F32, {3, 4}), path) ==
        path + ": error: tensor 'w' element 7 (row 1, column 3) is NaN");
}

TEST_CASE("loading: a finite value the model's dtype cannot hold") {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  // 65504 is fp16's largest value; 65520 rounds to infinity.
  std::vector<float> f(6, 65504.0f);
  writeSafetensors(path, {f32Tensor("w", {2, 3}, f)});
  std::string error;
  auto store = WeightStore::fromSafetensors(onePlan(plan::DType::F16, {2, 3}),
                                            path, error);
  INFO(error);
  REQUIRE(store);
  f[4] = 65520.0f;
  writeSafetensors(path, {f32Tensor("w", {2, 3}, f)});
  CHECK(loadError(onePlan(plan::DType::F16, {2, 3}), path) ==
        path + ": error: tensor 'w' element 4 (row 1, column 1) is 65520, "
               "which overflows the model's dtype f16");
  // Beyond bf16's largest value (about 3.3895e38).
  f.assign(6, 1.0f);
  f[2] = 3.4e38f;
  writeSafetensors(path, {f32Tensor("w", {2, 3}, f)});
  CHECK(loadError(onePlan(plan::DType::BF16, {2, 3}), path) ==
        path + ": error: tensor 'w' element 2 (row 0, column 2) is "
               "3.39999995e+38, which overflows the model's dtype bf16");
  // bf16 into f16.
  std::vector<uint16_t> bits(6, 0x3F80);
  bits[5] = 0x4780; // 65536
  writeSafetensors(path, {bitsTensor("w", "BF16", {2, 3}, bits)});
  CHECK(loadError(onePlan(plan::DType::F16, {2, 3}), path) ==
        path + ": error: tensor 'w' element 5 (row 1, column 2) is 65536, "
               "which overflows the model's dtype f16");
}

TEST_CASE("loading: elements of a tensor read in slices keep their index") {
  // transformers' MiniMax qkv_proj, rows [head][q|k|v][d] with 2 heads of
  // d = 2: q_proj reads rows 0-1 and 6-7. A NaN at row 7, column 1 is
  // element 22 of qkv_proj, the tensor the file holds.
  plan::Plan p;
  p.linearState = {1, 2, 2, 2};
  for (const char *name : {"q_proj", "k_proj", "v_proj"})
    p.weights.push_back(
        {std::string("model.layers.0.self_attn.") + name + ".weight",
         plan::DType::BF16,
         {4, 3},
         {},
         {}});
  std::vector<uint16_t> bits(36, 0x3F80);
  bits[22] = 0x7FC0;
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  writeSafetensors(path, {bitsTensor("model.layers.0.self_attn.qkv_proj.weight",
                                     "BF16", {12, 3}, bits)});
  CHECK(loadError(p, path) ==
        path + ": error: tensor 'model.layers.0.self_attn.qkv_proj.weight' "
               "element 22 (row 7, column 1) is NaN");
}

// Loading a plan's weights from safetensors: names, packed sources, dtype
// conversion, sharded checkpoints, and one test per way a checkpoint can be
// wrong (each error names the file and, where one is at fault, the tensor).
#include "kernels/cpu/HalfTypes.h"
#include "runtime/Weights.h"
#include "tests/unit/runtime/SafetensorsWriter.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace strata;
using namespace strata::testing;
using Catch::Contains;

namespace {

/// Four weights: one per plan dtype, one of them packed from two sources.
plan::Plan smallPlan() {
  plan::Plan p;
  p.weights.push_back({"embed.weight", plan::DType::BF16, {4, 3}, {}, {}});
  p.weights.push_back({"qk.weight",
                       plan::DType::BF16,
                       {6, 3},
                       {"q.weight", "k.weight"},
                       {4, 2}});
  p.weights.push_back({"norm.weight", plan::DType::F32, {3}, {}, {}});
  p.weights.push_back({"out.weight", plan::DType::F16, {2, 3}, {}, {}});
  return p;
}

/// Value i of a tensor; some need rounding to 16 bits (odd multiples of
/// 2^-9 near 1 sit exactly between two bf16 values: ties go to even).
float value(int salt, int64_t i) {
  return 1.0f + float(2 * i + 1) * (1.0f / 512) * float(salt % 2 ? 1 : -1) +
         float(salt);
}

std::vector<uint8_t> encode(const std::string &dtype, int salt, int64_t n) {
  std::vector<uint8_t> out;
  for (int64_t i = 0; i < n; ++i) {
    float v = value(salt, i);
    if (dtype == "F32") {
      uint8_t b[4];
      std::memcpy(b, &v, 4);
      out.insert(out.end(), b, b + 4);
      continue;
    }
    uint16_t bits = dtype == "BF16" ? kernels::floatToBf16Bits(v)
                                    : kernels::floatToF16Bits(v);
    out.push_back(uint8_t(bits & 0xFF));
    out.push_back(uint8_t(bits >> 8));
  }
  return out;
}

StTensor tensor(const std::string &name, const std::string &dtype,
                std::vector<int64_t> shape, int salt) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return {name, dtype, shape, encode(dtype, salt, n)};
}

/// A checkpoint for smallPlan() whose dtypes differ from the plan's, so
/// that every conversion path is taken.
std::vector<StTensor> goodTensors() {
  return {tensor("embed.weight", "F32", {4, 3}, 1),
          tensor("q.weight", "BF16", {4, 3}, 2),
          tensor("k.weight", "F16", {2, 3}, 3),
          tensor("norm.weight", "BF16", {3}, 4),
          tensor("out.weight", "F32", {2, 3}, 5)};
}

/// What the store must hold for weight `w` of smallPlan().
std::vector<uint8_t> expected(int w) {
  auto bf16 = [](float v) { return kernels::floatToBf16Bits(v); };
  std::vector<uint16_t> halves;
  std::vector<float> floats;
  switch (w) {
  case 0:
    for (int i = 0; i < 12; ++i)
      halves.push_back(bf16(value(1, i)));
    break;
  case 1:
    for (int i = 0; i < 12; ++i)
      halves.push_back(bf16(value(2, i)));
    // fp16 -> bf16: through the fp16 value, rounded once.
    for (int i = 0; i < 6; ++i)
      halves.push_back(
          bf16(kernels::f16BitsToFloat(kernels::floatToF16Bits(value(3, i)))));
    break;
  case 2:
    for (int i = 0; i < 3; ++i)
      floats.push_back(kernels::bf16BitsToFloat(bf16(value(4, i))));
    break;
  case 3:
    for (int i = 0; i < 6; ++i)
      halves.push_back(kernels::floatToF16Bits(value(5, i)));
    break;
  }
  std::vector<uint8_t> out(halves.size() * 2 + floats.size() * 4);
  std::memcpy(out.data(),
              halves.empty() ? (void *)floats.data() : (void *)halves.data(),
              out.size());
  return out;
}

std::string loadError(const std::string &path) {
  std::string error;
  auto store = WeightStore::fromSafetensors(smallPlan(), path, error);
  CHECK(!store);
  return error;
}

} // namespace

TEST_CASE("safetensors weights load by name, packed and converted") {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  auto tensors = goodTensors();
  writeFile(path,
            packSafetensors(safetensorsHeader(tensors, "{\"format\":\"pt\"}"),
                            tensors));
  std::string error;
  auto store = WeightStore::fromSafetensors(smallPlan(), path, error);
  INFO(error);
  REQUIRE(store);
  for (int w = 0; w < 4; ++w) {
    INFO("weight " << w);
    CHECK(store->bytes(w) == expected(w));
  }
  // The rounding cases are really there: 1 + 1/512 ties to 1 in bf16.
  CHECK(kernels::floatToBf16Bits(1.0f + 1.0f / 512) ==
        kernels::floatToBf16Bits(1.0f));
}

TEST_CASE("streaming a checkpoint hands over each weight once, in order") {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  writeSafetensors(path, goodTensors());
  std::string error;
  std::vector<int32_t> seen;
  bool ok = WeightStore::streamSafetensors(
      smallPlan(), path, error, WeightSubset::All,
      [&](int32_t index, std::vector<uint8_t> &bytes, std::string &) {
        seen.push_back(index);
        CHECK(bytes == expected(index));
        return true;
      });
  INFO(error);
  REQUIRE(ok);
  CHECK(seen == std::vector<int32_t>{0, 1, 2, 3});

  // A sink that fails stops the stream with its own message.
  seen.clear();
  ok = WeightStore::streamSafetensors(
      smallPlan(), path, error, WeightSubset::All,
      [&](int32_t index, std::vector<uint8_t> &, std::string &why) {
        seen.push_back(index);
        why = "device full";
        return index < 1;
      });
  CHECK(!ok);
  CHECK(error == "device full");
  CHECK(seen == std::vector<int32_t>{0, 1});

  // The checks run before any weight is handed over.
  std::vector<StTensor> missing = goodTensors();
  missing.pop_back();
  writeSafetensors(path, missing);
  seen.clear();
  ok = WeightStore::streamSafetensors(
      smallPlan(), path, error, WeightSubset::All,
      [&](int32_t index, std::vector<uint8_t> &, std::string &) {
        seen.push_back(index);
        return true;
      });
  CHECK(!ok);
  CHECK(seen.empty());
  CHECK(error.find("tensor 'out.weight' is missing") != std::string::npos);
}

TEST_CASE("a sharded checkpoint loads through its index") {
  TempDir dir;
  auto tensors = goodTensors();
  std::vector<StTensor> a(tensors.begin(), tensors.begin() + 2),
      b(tensors.begin() + 2, tensors.end());
  writeSafetensors(dir.file("model-00001-of-00002.safetensors"), a);
  writeSafetensors(dir.file("model-00002-of-00002.safetensors"), b);
  std::string index = "{\"metadata\":{\"total_size\":1},\"weight_map\":{";
  for (size_t i = 0; i < tensors.size(); ++i)
    index += (i ? "," : "") + std::string("\"") + tensors[i].name +
             "\":\"model-0000" + (i < 2 ? "1" : "2") +
             "-of-00002.safetensors\"";
  writeFile(dir.file("model.safetensors.index.json"), index + "}}");
  std::string error;
  auto store = WeightStore::fromSafetensors(
      smallPlan(), dir.file("model.safetensors.index.json"), error);
  INFO(error);
  REQUIRE(store);
  for (int w = 0; w < 4; ++w)
    CHECK(store->bytes(w) == expected(w));
}

TEST_CASE("safetensors: a missing file is named") {
  TempDir dir;
  std::string path = dir.file("absent.safetensors");
  std::string error = loadError(path);
  CHECK_THAT(error, Contains(path) && Contains("cannot open"));
}

TEST_CASE("safetensors: a truncated file") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  std::string bytes = packSafetensors(safetensorsHeader(tensors), tensors);
  writeFile(path, bytes.substr(0, 5));
  CHECK_THAT(loadError(path), Contains(path) && Contains("truncated"));
  // Cut inside the data: the last tensor's offsets leave the data region.
  writeFile(path, bytes.substr(0, bytes.size() - 4));
  CHECK_THAT(loadError(path), Contains(path) && Contains("out.weight") &&
                                  Contains("outside the data region"));
}

TEST_CASE("safetensors: a header size beyond the file") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  std::string bytes(8, '\0');
  bytes[5] = 1; // 2^40
  writeFile(path, bytes + "{}");
  CHECK_THAT(loadError(path), Contains(path) &&
                                  Contains("header size 1099511627776") &&
                                  Contains("beyond the end of the file"));
}

TEST_CASE("safetensors: a header that is not JSON") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  writeFile(path, packSafetensors("{\"a\": [1, 2,]}", {}));
  CHECK_THAT(loadError(path),
             Contains(path) && Contains("bad JSON") && Contains("at byte 20"));
}

TEST_CASE("safetensors: an unsupported dtype names the tensor") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  tensors[1].dtype = "I16"; // same size, so only the dtype is wrong
  writeSafetensors(path, tensors);
  CHECK_THAT(loadError(path), Contains(path) && Contains("q.weight") &&
                                  Contains("unsupported dtype I16"));
}

TEST_CASE("safetensors: a shape that differs from the model's") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  tensors[0] = tensor("embed.weight", "F32", {3, 4}, 1);
  writeSafetensors(path, tensors);
  CHECK_THAT(loadError(path),
             Contains(path) && Contains("embed.weight") &&
                 Contains("has shape [3, 4], the model expects [4, 3]"));
  // A packed source with the wrong row count.
  tensors = goodTensors();
  tensors[2] = tensor("k.weight", "F16", {3, 3}, 3);
  writeSafetensors(path, tensors);
  CHECK_THAT(loadError(path),
             Contains("k.weight") &&
                 Contains("has shape [3, 3], the model expects [2, 3]"));
}

TEST_CASE("safetensors: a missing tensor") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  tensors.erase(tensors.begin() + 2); // k.weight, a packed source
  writeSafetensors(path, tensors);
  CHECK_THAT(loadError(path),
             Contains(path) && Contains("tensor 'k.weight' is missing"));
  // An untied model asks for lm_head; the message points at tying.
  plan::Plan p = smallPlan();
  p.weights.push_back({"lm_head.weight", plan::DType::BF16, {4, 3}, {}, {}});
  writeSafetensors(path, goodTensors());
  std::string error;
  CHECK(!WeightStore::fromSafetensors(p, path, error));
  CHECK_THAT(error, Contains("'lm_head.weight' is missing") &&
                        Contains("tie_word_embeddings"));
}

TEST_CASE("safetensors: a tensor the model does not use") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  tensors.push_back(tensor("extra.bias", "F32", {3}, 6));
  writeSafetensors(path, tensors);
  CHECK_THAT(loadError(path),
             Contains(path) && Contains("unexpected tensor 'extra.bias'"));
}

TEST_CASE("safetensors: data_offsets that do not match shape and dtype") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  std::string header = safetensorsHeader(tensors);
  // norm.weight claims 4 elements but its offsets hold 3 bf16 values.
  std::string from = "\"norm.weight\":{\"dtype\":\"BF16\",\"shape\":[3]";
  size_t at = header.find(from);
  REQUIRE(at != std::string::npos);
  header.replace(at, from.size(),
                 "\"norm.weight\":{\"dtype\":\"BF16\",\"shape\":[4]");
  writeFile(path, packSafetensors(header, tensors));
  CHECK_THAT(loadError(path), Contains(path) && Contains("norm.weight") &&
                                  Contains("hold 6 bytes") &&
                                  Contains("needs 8"));
}

TEST_CASE("safetensors: an index naming a missing shard") {
  TempDir dir;
  auto tensors = goodTensors();
  writeSafetensors(dir.file("a.safetensors"), tensors);
  std::string index = dir.file("model.safetensors.index.json");
  writeFile(index, "{\"weight_map\":{\"embed.weight\":\"a.safetensors\","
                   "\"q.weight\":\"b.safetensors\"}}");
  std::string error = loadError(index);
  CHECK_THAT(error, Contains(index) && Contains("tensor 'q.weight'") &&
                        Contains(dir.file("b.safetensors")) &&
                        Contains("cannot open"));
  // A shard holding a tensor the index does not list for it.
  writeFile(index, "{\"weight_map\":{\"embed.weight\":\"a.safetensors\"}}");
  CHECK_THAT(loadError(index), Contains("tensor 'q.weight' is not listed"));
}

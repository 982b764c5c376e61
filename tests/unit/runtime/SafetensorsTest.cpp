// Loading a plan's weights from safetensors: names, packed sources, dtype
// conversion, sharded checkpoints, and one test per way a checkpoint can be
// wrong (each error names the file and, where one is at fault, the tensor).
#include "runtime/Safetensors.h"
#include "kernels/cpu/HalfTypes.h"
#include "runtime/Weights.h"
#include "tests/unit/runtime/SafetensorsWriter.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

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
  writeFile(path, packSafetensors(
                      safetensorsHeader(tensors, {{"format", "pt"}}), tensors));
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
  StJson index = {{"metadata", {{"total_size", 1}}},
                  {"weight_map", StJson::object()}};
  for (size_t i = 0; i < tensors.size(); ++i)
    index["weight_map"][tensors[i].name] = std::string("model-0000") +
                                           (i < 2 ? "1" : "2") +
                                           "-of-00002.safetensors";
  writeFile(dir.file("model.safetensors.index.json"), index.dump());
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
             Contains(path + ": error: bad JSON header at byte 19: invalid "
                             "JSON: trailing comma before ']'"));
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

TEST_CASE("safetensors: an index that is not JSON names line and column") {
  TempDir dir;
  std::string index = dir.file("model.safetensors.index.json");
  writeFile(index, "{\"weight_map\": {\n  \"a\": \"a.safetensors\",\n}}");
  CHECK(loadError(index) ==
        index + ":2:23: error: invalid JSON: trailing comma before '}'");
  writeFile(index, "{\"weight_map\": {\"a\": \"x\",\n \"a\": \"y\"}}");
  CHECK(loadError(index) ==
        index + ":2:2: error: duplicate key 'weight_map.a' (first given at "
                "line 1)");
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
  // Shards lie in the index's folder or below it.
  const std::vector<std::string> outsiders = {
      "../a.safetensors", dir.file("a.safetensors"), "sub/../../a.safetensors"};
  for (const std::string &outside : outsiders) {
    writeFile(index, "{\"weight_map\":{\"embed.weight\":\"" + outside + "\"}}");
    CHECK(loadError(index) ==
          index + ": error: weight_map puts tensor 'embed.weight' in '" +
              outside +
              "', outside the index's folder; shards are named relative to "
              "it, without '..'");
  }
}

namespace {

/// goodTensors() laid out back to back: their offsets.
std::vector<std::pair<uint64_t, uint64_t>> goodOffsets() {
  return {{0, 48}, {48, 72}, {72, 84}, {84, 90}, {90, 114}};
}

std::string openError(const std::string &path) {
  std::string error;
  CHECK(!SafetensorsFile::open(path, error));
  return error;
}

} // namespace

TEST_CASE("safetensors: tensors whose bytes overlap") {
  // out.weight (24 bytes) starts inside norm.weight: both would read some
  // of the same bytes, and the loads used to succeed with wrong values.
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto offsets = goodOffsets();
  offsets[4] = {84, 108};
  std::string bytes = packSafetensors(
      safetensorsHeaderAt(goodTensors(), offsets), goodTensors());
  writeFile(path, bytes.substr(0, bytes.size() - 6));
  CHECK(loadError(path) ==
        path + ": error: tensor 'out.weight' (data_offsets [84, 108)) "
               "overlaps tensor 'norm.weight' [84, 90); every byte of the "
               "data region belongs to one tensor");
  // Two tensors on the same bytes.
  offsets = goodOffsets();
  offsets[2] = {48, 60};
  writeFile(path, packSafetensors(safetensorsHeaderAt(goodTensors(), offsets),
                                  goodTensors()));
  CHECK_THAT(openError(path), Contains("tensor 'q.weight' (data_offsets [48, "
                                       "72)) overlaps tensor 'k.weight'"));
}

TEST_CASE("safetensors: bytes that belong to no tensor") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  // A gap of 6 bytes between norm.weight and out.weight.
  auto offsets = goodOffsets();
  offsets[4] = {96, 120};
  std::string bytes =
      packSafetensors(safetensorsHeaderAt(tensors, offsets), tensors);
  writeFile(path, bytes + std::string(6, '\0'));
  CHECK(openError(path) ==
        path + ": error: bytes [90, 96) of the data region, between tensor "
               "'norm.weight' and tensor 'out.weight', belong to no tensor; "
               "the format has no gaps between tensors");
  // Before the first tensor.
  offsets = goodOffsets();
  for (auto &[begin, end] : offsets) {
    begin += 2;
    end += 2;
  }
  writeFile(path,
            packSafetensors(safetensorsHeaderAt(tensors, offsets), tensors) +
                "xx");
  CHECK_THAT(openError(path),
             Contains("bytes [0, 2) of the data region, before tensor "
                      "'embed.weight', belong to no tensor"));
  // After the last one: the file is longer than the header says.
  writeFile(path,
            packSafetensors(safetensorsHeader(tensors), tensors) + "tail");
  CHECK(openError(path) ==
        path + ": error: the data region holds 118 bytes, but the last "
               "tensor 'out.weight' ends at 114: the file is longer than its "
               "header describes");
  writeFile(path, packSafetensors("{}", {}) + "tail");
  CHECK_THAT(openError(path), Contains("the data region holds 4 bytes, but "
                                       "the header lists no tensor"));
}

TEST_CASE("safetensors: the header's order need not be the data's") {
  // The format does not order the header (the reference implementation
  // sorts by offset): tensors listed out of data order load as usual.
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  auto offsets = goodOffsets();
  std::vector<StTensor> listed = {tensors[4], tensors[0], tensors[3],
                                  tensors[1], tensors[2]};
  std::vector<std::pair<uint64_t, uint64_t>> listedOffsets = {
      offsets[4], offsets[0], offsets[3], offsets[1], offsets[2]};
  writeFile(path, packSafetensors(safetensorsHeaderAt(listed, listedOffsets),
                                  tensors));
  std::string error;
  auto store = WeightStore::fromSafetensors(smallPlan(), path, error);
  INFO(error);
  REQUIRE(store);
  for (int w = 0; w < 4; ++w)
    CHECK(store->bytes(w) == expected(w));
  // Empty tensors hold no bytes, wherever they sit.
  std::vector<StTensor> withEmpty = tensors;
  withEmpty.insert(withEmpty.begin() + 2, StTensor{"empty", "F32", {0, 3}, {}});
  writeSafetensors(path, withEmpty);
  auto file = SafetensorsFile::open(path, error);
  INFO(error);
  REQUIRE(file);
  CHECK(file->find("empty")->begin == 72);
  CHECK(file->find("empty")->end == 72);
}

TEST_CASE("safetensors: the header's size and first byte") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  // A size beyond the reference implementation's limit, inside a (sparse)
  // file long enough for it.
  std::string bytes(8, '\0');
  uint64_t size = 100000001;
  for (int i = 0; i < 8; ++i)
    bytes[size_t(i)] = char((size >> (8 * i)) & 0xFF);
  writeFile(path, bytes + "{");
  std::filesystem::resize_file(path, 8 + size + 16);
  CHECK(openError(path) == path + ": error: header size 100000001 is larger "
                                  "than the format's limit of 100000000 bytes");
  // The header must start with '{': not a safetensors file otherwise.
  writeFile(path, packSafetensors(" {}", {}));
  CHECK(openError(path) == path + ": error: the header does not start with "
                                  "'{' (byte 8 is ' '): not a safetensors "
                                  "file");
  writeFile(path, packSafetensors("[]", {}));
  CHECK_THAT(openError(path), Contains("(byte 8 is '['): not a safetensors"));
  writeFile(path, packSafetensors("", {}));
  CHECK_THAT(openError(path), Contains("byte 8 is the end of the file"));
  // Trailing spaces pad the header so that the data is aligned.
  auto tensors = goodTensors();
  writeFile(path,
            packSafetensors(safetensorsHeader(tensors) + "      ", tensors));
  std::string error;
  CHECK(SafetensorsFile::open(path, error));
}

TEST_CASE("safetensors: a tensor named twice") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  // A JSON writer keeps one value per key: the second name is put in the
  // text.
  std::string header = safetensorsHeader(tensors);
  size_t at = header.find("\"q.weight\"");
  REQUIRE(at != std::string::npos);
  header.replace(at, 10, "\"embed.weight\"");
  writeFile(path, packSafetensors(header, tensors));
  CHECK(openError(path) ==
        path + ": error: bad JSON header at byte " + std::to_string(8 + at) +
            ": duplicate key 'embed.weight' (first given at byte 9)");
}

TEST_CASE("safetensors: shapes that are not sizes") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  auto withShape = [&](const std::string &shape) {
    std::string header = safetensorsHeader(tensors);
    std::string from = "\"norm.weight\":{\"dtype\":\"BF16\",\"shape\":[3]";
    size_t at = header.find(from);
    REQUIRE(at != std::string::npos);
    header.replace(at, from.size(),
                   "\"norm.weight\":{\"dtype\":\"BF16\",\"shape\":" + shape);
    writeFile(path, packSafetensors(header, tensors));
    return openError(path);
  };
  CHECK(withShape("[-3]") ==
        path + ": error: tensor 'norm.weight': shape entry 0 is -3, expected "
               "a non-negative integer");
  CHECK_THAT(withShape("[3.0]"), Contains("shape entry 0 is 3.0, expected a "
                                          "non-negative integer"));
  CHECK_THAT(withShape("[1, \"3\"]"),
             Contains("shape entry 1 is a string, expected a non-negative "
                      "integer"));
  CHECK_THAT(withShape("[9223372036854775808]"),
             Contains("shape entry 0 (9223372036854775808) is too large"));
  CHECK_THAT(withShape("[18446744073709551616]"),
             Contains("shape entry 0 (18446744073709551616) is too large"));
  // Each entry fits, their product in bytes does not: an overflowed product
  // could match the offsets.
  CHECK_THAT(withShape("[4294967296, 4294967296]"),
             Contains("shape [4294967296, 4294967296] is too large: its size "
                      "in bytes overflows 64 bits"));
  CHECK_THAT(withShape("{}"), Contains("shape is not an array"));
}

TEST_CASE("safetensors: metadata is an object of strings") {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  auto tensors = goodTensors();
  writeFile(path,
            packSafetensors(safetensorsHeader(tensors, {{"a", 1}}), tensors));
  CHECK(openError(path) == path + ": error: __metadata__ entry 'a' is a "
                                  "number, expected a string");
  writeFile(path, packSafetensors(safetensorsHeader(tensors, StJson::array()),
                                  tensors));
  CHECK(openError(path) == path + ": error: __metadata__ is an array, "
                                  "expected an object of strings");
}

// Plan files: a plan survives the round trip exactly, and every way a file
// can be damaged is rejected with its own message.
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanText.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

using namespace strata::plan;

namespace {

Plan samplePlan() {
  Plan plan;
  plan.modelName = "tiny";
  plan.weightSeed = 42;
  plan.vocabSize = 512;
  plan.limits = {256, 8};
  plan.kvCache = {2, 2, 32, 16, DType::BF16};
  plan.linearState = {1, 4, 32, 32};
  plan.weights = {
      {"model.embed_tokens.weight", DType::BF16, {512, 256}, {}, {}},
      {"model.layers.0.self_attn.qkv_proj.weight",
       DType::BF16,
       {384, 256},
       {"model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.self_attn.v_proj.weight"},
       {256, 64, 64}}};
  Program p;
  p.phase = "decode";
  p.numStreams = 2;
  p.buffers = {
      {"token_ids", BufferKind::Input, DType::I32, {Dim::tokens()}, 0, -1},
      {"embed",
       BufferKind::Weight,
       DType::BF16,
       {Dim::constant(512), Dim::constant(256)},
       0,
       0},
      {"h0",
       BufferKind::Arena,
       DType::BF16,
       {Dim::tokens(), Dim::constant(256)},
       0,
       -1},
      {"h1",
       BufferKind::Arena,
       DType::BF16,
       {Dim::tokens(), Dim::constant(256)},
       131072,
       -1},
      {"kv", BufferKind::KvCache, DType::BF16, {}, 0, -1},
      {"logits",
       BufferKind::Output,
       DType::F32,
       {Dim::batch(), Dim::constant(512)},
       0,
       -1}};
  p.arenaBytes = 262144;
  p.launches = {{"embedding", "", {}, {0, 1}, {2}, 0},
                {"rope_kv_write",
                 "continuous",
                 {{"layer", int64_t(0)},
                  {"theta", 500000.0},
                  {"pairing", std::string("neox")},
                  {"slopes", std::vector<double>{0.5, 0.25}},
                  {"dims", std::vector<int64_t>{8, 2, 32}}},
                 {2, 4},
                 {3, 4},
                 1},
                {"logits", "", {}, {3, 1}, {5}, 0}};
  p.events = {{0, 1}, {1, 2}};
  plan.programs = {p};
  return plan;
}

std::string reject(const std::string &bytes) {
  Plan plan;
  std::string error;
  bool ok = deserializePlan(bytes, "m.splan", plan, error);
  CHECK_FALSE(ok);
  return error;
}

} // namespace

TEST_CASE("a plan survives the file round trip exactly") {
  Plan plan = samplePlan();
  REQUIRE(validatePlan(plan).empty());
  std::string path = "plan-roundtrip.splan";
  std::string error;
  REQUIRE(writePlanFile(plan, path, error));
  Plan back;
  REQUIRE(readPlanFile(path, back, error));
  CHECK(back == plan);
  std::remove(path.c_str());
}

TEST_CASE("a file that is not a plan is named as such") {
  CHECK(reject("hello world, this is not a plan at all") ==
        "m.splan: error: not a strata plan (missing the STRATAPL signature)");
  CHECK(reject("") ==
        "m.splan: error: not a strata plan (missing the STRATAPL signature)");
}

TEST_CASE("another format version is rejected with both versions") {
  std::string bytes = serializePlan(samplePlan());
  bytes[8] = 7;
  CHECK(reject(bytes) ==
        "m.splan: error: plan format version 7 is not supported; this build "
        "reads version 2 (recompile the model with this strata)");
}

TEST_CASE("a truncated plan is rejected") {
  std::string bytes = serializePlan(samplePlan());
  CHECK_THAT(reject(bytes.substr(0, bytes.size() - 10)),
             Catch::Matchers::StartsWith(
                 "m.splan: error: plan is truncated: header says"));
  CHECK_THAT(reject(bytes.substr(0, 20)),
             Catch::Matchers::Contains("shorter than the 32-byte header"));
  CHECK_THAT(reject(bytes + "xx"),
             Catch::Matchers::Contains("2 unexpected bytes after"));
}

TEST_CASE("a flipped payload byte fails the checksum") {
  std::string bytes = serializePlan(samplePlan());
  bytes[kPlanHeaderBytes + 5] ^= 0x10;
  CHECK(reject(bytes) ==
        "m.splan: error: plan is corrupt: payload checksum mismatch");
}

TEST_CASE("random corruption never crashes and is always reported") {
  std::string good = serializePlan(samplePlan());
  std::mt19937 rng(3);
  for (int trial = 0; trial < 500; ++trial) {
    std::string bytes = good;
    int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f)
      bytes[std::uniform_int_distribution<size_t>(8, bytes.size() - 1)(rng)] ^=
          static_cast<char>(1 + rng() % 255);
    Plan plan;
    std::string error;
    if (!deserializePlan(bytes, "m.splan", plan, error))
      CHECK_THAT(error, Catch::Matchers::StartsWith("m.splan: error: "));
    else
      CHECK(plan == samplePlan()); // a flip in an unused header byte
  }
}

TEST_CASE("a payload with a consistent checksum but bad content is "
          "rejected") {
  // Re-sign a damaged payload so that only the decoder can catch it.
  Plan plan = samplePlan();
  plan.programs[0].launches[1].stream = 5;
  std::string bytes = serializePlan(plan);
  CHECK(reject(bytes) ==
        "m.splan: error: plan is invalid: program 'decode': launch 1 "
        "(rope_kv_write) is on stream 5 of 2");

  plan = samplePlan();
  plan.programs[0].buffers[3].arenaOffset = 200000;
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("beyond the arena of 262144"));

  // A view (split heads) must share an earlier arena buffer's bytes
  // exactly; the round trip keeps a good one.
  plan = samplePlan();
  Buffer view{"h1.heads", BufferKind::Arena, DType::BF16,
              {Dim::tokens(), Dim::constant(8), Dim::constant(32)}, 131072,
              -1};
  view.viewOf = 3;
  plan.programs[0].buffers.push_back(view);
  REQUIRE(validatePlan(plan).empty());
  {
    Plan back;
    std::string error;
    REQUIRE(deserializePlan(serializePlan(plan), "m.splan", back, error));
    CHECK(back == plan);
  }
  plan.programs[0].buffers.back().arenaOffset = 0;
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("'h1.heads' is a view of 'h1' with "
                                       "another dtype, size or offset"));
  plan.programs[0].buffers.back().arenaOffset = 131072;
  plan.programs[0].buffers.back().shape[1] = Dim::constant(4);
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("another dtype, size or offset"));
  plan.programs[0].buffers.back().shape[1] = Dim::constant(8);
  plan.programs[0].buffers.back().viewOf = 4; // the KV cache
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("is a view of buffer 4, which is not "
                                       "an earlier arena buffer of its own"));

  plan = samplePlan();
  plan.programs[0].events = {{1, 1}};
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("does not go forward"));

  std::string good = serializePlan(samplePlan());
  // A model-name length far beyond the payload.
  std::string bad = good;
  bad[kPlanHeaderBytes + 3] = 0x7f;
  uint32_t crc =
      crc32(bad.data() + kPlanHeaderBytes, bad.size() - kPlanHeaderBytes);
  std::memcpy(&bad[24], &crc, 4);
  CHECK_THAT(reject(bad), Catch::Matchers::Contains(
                              "plan is malformed: count of model name"));
}

TEST_CASE("packed weights must account for every row") {
  Plan plan = samplePlan();
  plan.weights[1].packedRows = {256, 64, 32};
  CHECK(reject(serializePlan(plan)) ==
        "m.splan: error: plan is invalid: weight "
        "'model.layers.0.self_attn.qkv_proj.weight' packs 352 rows into a "
        "first dimension of 384");
  plan.weights[1].packedRows = {256};
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("lists 3 packed sources but 1 row"));
}

TEST_CASE("a missing plan file names the path") {
  Plan plan;
  std::string error;
  CHECK_FALSE(readPlanFile("/nonexistent/x.splan", plan, error));
  CHECK(error == "/nonexistent/x.splan: error: cannot open plan file: No "
                 "such file or directory");
}

TEST_CASE("inspect lists launches per stream, events, buffers and peak") {
  std::string text = describePlan(samplePlan());
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "program decode: 3 launches on 2 streams, 2 events, "
                       "arena peak 256.00 KiB at 256 tokens / 8 sequences"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "#1 rope_kv_write<continuous>(h0, kv) -> (h1, kv) "
                       "{layer = 0, theta = 500000, pairing = \"neox\", "
                       "slopes = [0.5, 0.25], dims = [8, 2, 32]}"));
  CHECK_THAT(text, Catch::Matchers::Contains("wait  event(0 -> 1)"));
  CHECK_THAT(text, Catch::Matchers::Contains("h1: arena bf16[tokens, 256] "
                                             "@131072"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "kv cache: 2 layers x 2 kv heads x 32 head dim, "
                       "blocks of 16 tokens, bf16"));
}

// Plan files: a plan survives the round trip exactly, and every way a file
// can be damaged is rejected with its own message.
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanText.h"

#include "SamplePlan.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <type_traits>

using namespace strata::plan;

using strata::test::samplePlan;

namespace {

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
        "reads version 6 (recompile the model with this strata)");
}

TEST_CASE("a plan of format 5, written before plans recorded their fusion "
          "passes, is refused") {
  std::string bytes = serializePlan(samplePlan());
  bytes[8] = 5;
  CHECK(reject(bytes) ==
        "m.splan: error: plan format version 5 is not supported; this build "
        "reads version 6 (recompile the model with this strata)");
}

TEST_CASE("a plan keeps the fusion passes it was built with and without") {
  Plan plan = samplePlan();
  plan.fusions = {{"strata-fuse-qkv", true},
                  {"strata-fuse-rope-kv", true},
                  {"strata-select-attention", false},
                  {"strata-fuse-swiglu", false}};
  Plan back;
  std::string error;
  REQUIRE(deserializePlan(serializePlan(plan), "m.splan", back, error));
  CHECK(back == plan);
  CHECK(fusionsOn(back) ==
        std::vector<std::string>{"strata-fuse-qkv", "strata-fuse-rope-kv"});
  CHECK(fusionsOff(back) == std::vector<std::string>{"strata-select-attention",
                                                     "strata-fuse-swiglu"});
  CHECK(describeFusions(back) ==
        "strata-fuse-qkv, strata-fuse-rope-kv; left out: "
        "strata-select-attention, strata-fuse-swiglu");
  // Equality sees the record: a plan built without a fusion is another plan.
  Plan other = plan;
  other.fusions[3].enabled = true;
  CHECK_FALSE(other == plan);
  other = plan;
  other.fusions.pop_back();
  CHECK_FALSE(other == plan);

  for (FusionPass &f : plan.fusions)
    f.enabled = true;
  CHECK(describeFusions(plan) ==
        "strata-fuse-qkv, strata-fuse-rope-kv, strata-select-attention, "
        "strata-fuse-swiglu (all 4)");
  for (FusionPass &f : plan.fusions)
    f.enabled = false;
  CHECK(describeFusions(plan) ==
        "none; left out: strata-fuse-qkv, strata-fuse-rope-kv, "
        "strata-select-attention, strata-fuse-swiglu");
  plan.fusions.clear();
  CHECK(describeFusions(plan) ==
        "none (the phase programs before the fusion passes)");
  plan.programs[0].phase = "forward";
  CHECK(describeFusions(plan) == "none (the generic forward, unfused)");
}

TEST_CASE("a damaged fusion record is refused") {
  Plan plan = samplePlan();
  plan.fusions = {{"strata-fuse-qkv", true}};
  std::string good = serializePlan(plan);
  // The last byte of the payload is the flag: 2 is neither on nor off.
  std::string bad = good;
  bad.back() = 2;
  uint32_t crc =
      crc32(bad.data() + kPlanHeaderBytes, bad.size() - kPlanHeaderBytes);
  std::memcpy(&bad[24], &crc, 4);
  CHECK_THAT(reject(bad), Catch::Matchers::Contains(
                              "plan is malformed: invalid fusion pass flag "
                              "code 2"));
  // A count of passes beyond the bytes left.
  bad = good;
  // The payload ends with the count, the name's length, the name, the flag.
  const size_t count = good.size() - 1 - 15 - 4 - 4;
  REQUIRE(bad.substr(count + 8, 15) == "strata-fuse-qkv");
  bad[count + 3] = 0x40;
  crc = crc32(bad.data() + kPlanHeaderBytes, bad.size() - kPlanHeaderBytes);
  std::memcpy(&bad[24], &crc, 4);
  CHECK_THAT(reject(bad), Catch::Matchers::Contains(
                              "count of fusion passes (1073741825) exceeds "
                              "the remaining payload"));
}

TEST_CASE("a plan of format 3, whose launches named kernels and attributes "
          "by string, is refused") {
  std::string bytes = serializePlan(samplePlan());
  bytes[8] = 3;
  CHECK(reject(bytes) ==
        "m.splan: error: plan format version 3 is not supported; this build "
        "reads version 6 (recompile the model with this strata)");
}

namespace {

/// Parameters of kernel `k` whose fields all differ from zero and from each
/// other, so that a field dropped, swapped or misread shows.
KernelParams distinctParams(Kernel k) {
  KernelParams params = paramsOf(k);
  int64_t next = 1;
  forEachField(params, [&](const char *, auto &v) {
    using T = std::decay_t<decltype(v)>;
    ++next;
    if constexpr (std::is_same_v<T, int64_t>)
      v = next * 1000003;
    else if constexpr (std::is_same_v<T, double>)
      v = 0.5 + double(next);
    else if constexpr (std::is_same_v<T, bool>)
      v = true;
    else if constexpr (std::is_enum_v<T>)
      v = static_cast<T>(maxCode<T>());
    else
      v = {0.25 * double(next), -1.5, 1e-300};
  });
  return params;
}

} // namespace

TEST_CASE("every kernel's parameters survive the file") {
  for (size_t k = 0; k < kNumKernels; ++k) {
    const Kernel kernel = static_cast<Kernel>(k);
    INFO(kernelName(kernel));
    const KernelParams params = distinctParams(kernel);
    const std::string bytes = serializeParams(params);
    KernelParams back;
    std::string error;
    REQUIRE(deserializeParams(bytes, back, error));
    CHECK(back.index() == k);
    CHECK(paramsEqual(back, params));
    CHECK(formatParams(back) == formatParams(params));
    // Parameters of zero differ from these unless the kernel has none.
    CHECK(paramsEqual(paramsOf(kernel), params) ==
          formatParams(params).empty());
    // A cut anywhere inside them is an error, not a guess.
    for (size_t cut = 0; cut < bytes.size(); ++cut)
      CHECK_FALSE(deserializeParams(bytes.substr(0, cut), back, error));
  }
  std::string error;
  KernelParams back;
  CHECK_FALSE(
      deserializeParams(std::string(1, char(kNumKernels)), back, error));
  CHECK_THAT(error, Catch::Matchers::StartsWith("invalid kernel code 25"));
  // A flag is 0 or 1 and an enum one of its codes.
  std::string logits = serializeParams(LogitsParams{true});
  logits[1] = 2;
  CHECK_FALSE(deserializeParams(logits, back, error));
  CHECK_THAT(error, Catch::Matchers::StartsWith("invalid logits all_tokens "
                                                "code 2"));
  std::string rope = serializeParams(RopeKvWriteParams{});
  rope[1] = 3;
  CHECK_FALSE(deserializeParams(rope, back, error));
  CHECK_THAT(error, Catch::Matchers::StartsWith("invalid rope_kv_write "
                                                "variant code 3"));
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

TEST_CASE("the header's reserved bytes must be zero") {
  std::string bytes = serializePlan(samplePlan());
  bytes[29] = 1;
  CHECK(reject(bytes) == "m.splan: error: plan header is damaged: its "
                         "reserved bytes are not zero");
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
    // Every byte counts: the reserved header bytes must be zero too.
    CHECK_FALSE(deserializePlan(bytes, "m.splan", plan, error));
    CHECK_THAT(error, Catch::Matchers::StartsWith("m.splan: error: "));
  }
}

TEST_CASE("a payload with a consistent checksum but bad content is "
          "rejected") {
  // Re-sign a damaged payload so that only the decoder can catch it.
  Plan plan = samplePlan();
  plan.programs[0].launches[2].stream = 5;
  std::string bytes = serializePlan(plan);
  CHECK(reject(bytes) ==
        "m.splan: error: plan is invalid: program 'decode': launch 2 "
        "(rope_kv_write<continuous>) is on stream 5 of 2");

  plan = samplePlan();
  plan.programs[0].buffers[4].arenaOffset = 400000;
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("beyond the arena of 458752"));

  // A view (split heads) must share an earlier arena buffer's bytes
  // exactly; the sample's own views pass the round trip above.
  plan = samplePlan();
  Buffer &view = plan.programs[0].buffers[5];
  REQUIRE(view.viewOf == 4);
  view.arenaOffset = 0;
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("'qkv.heads' is a view of 'qkv' with "
                                       "another dtype, size or offset"));
  view.arenaOffset = 131072;
  view.shape[1] = Dim::constant(4);
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("another dtype, size or offset"));
  view.shape[1] = Dim::constant(12);
  view.viewOf = 7; // the KV cache
  CHECK_THAT(reject(serializePlan(plan)),
             Catch::Matchers::Contains("is a view of buffer 7, which is not "
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

TEST_CASE("only regular files are read as plans") {
  Plan plan;
  std::string error;
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  CHECK_FALSE(readPlanFile(dir.string(), plan, error));
  CHECK(error == dir.string() + ": error: is a directory, not a plan file");
  std::filesystem::path fifo = dir / "strata-plan-test.fifo";
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO would block here until a writer came.
  CHECK_FALSE(readPlanFile(fifo.string(), plan, error));
  std::filesystem::remove(fifo);
  CHECK(error == fifo.string() +
                     ": error: is a FIFO, not a regular file; give a plan "
                     "file");
  // A model file where a plan is expected says what to do with it.
  std::string yaml = (dir / "strata-plan-test.yaml").string();
  std::ofstream(yaml) << "format: strata-model/v1\n";
  CHECK_FALSE(readPlanFile(yaml, plan, error));
  std::remove(yaml.c_str());
  CHECK_THAT(error, Catch::Matchers::Contains(
                        "is a model file, not a plan; compile it with"));
}

TEST_CASE("a plan names its checkpoint relative to its own folder") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "strata-plan-ckpt";
  fs::create_directories(dir / "plans");
  Plan plan = samplePlan();
  plan.checkpoint = (dir / "ckpt" / "model.safetensors").string();
  std::string path = (dir / "plans" / "m.splan").string(), error;
  REQUIRE(writePlanFile(plan, path, error));
  // Stored relative: the plan and its checkpoint move together.
  Plan stored;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  REQUIRE(deserializePlan(bytes, path, stored, error));
  CHECK(stored.checkpoint == "../ckpt/model.safetensors");
  Plan back;
  REQUIRE(readPlanFile(path, back, error));
  CHECK(fs::path(back.checkpoint).lexically_normal() ==
        fs::path(plan.checkpoint).lexically_normal());
  fs::remove_all(dir);
}

TEST_CASE("inspect lists launches per stream, events, buffers and peak") {
  std::string text = describePlan(samplePlan());
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "program decode: 5 launches on 2 streams, 2 events, "
                       "arena peak 448.00 KiB at 256 tokens / 8 sequences"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "#2 rope_kv_write<continuous>(qkv.heads, arg1, kv, "
                       "seqs) -> (q, kv) {layer = 0, num_q_heads = 8, "
                       "num_kv_heads = 2, rotary_dim = 32, theta = 500000, "
                       "pairing = neox, scaling = none, scaling_factor = 1, "
                       "low_freq_factor = 1, high_freq_factor = 4, "
                       "original_max_positions = 0, qk_norm_eps = 0}"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "#3 paged_decode_attention(q, kv, seqs) -> (o) {layer "
                       "= 0, scale = 0.176777, sliding_window = 0, "
                       "max_splits = 8}"));
  CHECK_THAT(text, Catch::Matchers::Contains("#4 logits(o.rows, embed, seqs) "
                                             "-> (logits) {all_tokens = "
                                             "false}"));
  CHECK_THAT(text, Catch::Matchers::Contains("arg1: input i32[tokens] "
                                             "(positions)"));
  CHECK_THAT(text, Catch::Matchers::Contains("wait  event(1 -> 2)"));
  CHECK_THAT(text, Catch::Matchers::Contains("qkv: arena bf16[tokens, 384] "
                                             "@131072"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "kv cache: 2 layers x 2 kv heads x 32 head dim, "
                       "blocks of 16 tokens, bf16"));
  CHECK_THAT(text,
             Catch::Matchers::Contains("vocab 512, positions up to 4096"));
  CHECK_THAT(text, Catch::Matchers::Contains("(random: seed 42, std 0.02)"));
}

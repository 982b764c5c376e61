// validatePlan: a plan whose checksum holds but whose contents do not fit
// together is refused before anything is sized from it, with a message
// that names the program, the launch and the mismatch.
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanLimits.h"

#include "SamplePlan.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <utility>

using namespace strata::plan;
using strata::test::samplePlan;

namespace {

/// The reader's verdict on `plan` written whole (a valid checksum).
std::string loadError(const Plan &plan) {
  Plan back;
  std::string error;
  if (deserializePlan(serializePlan(plan), "m.splan", back, error))
    return "";
  return error;
}

} // namespace

TEST_CASE("the sample plan is valid") { CHECK(loadError(samplePlan()) == ""); }

TEST_CASE("a weight buffer that no longer fits its weight is refused") {
  Plan plan = samplePlan();
  plan.programs[0].buffers[3].shape[1] = Dim::constant(257);
  CHECK(loadError(plan) ==
        "m.splan: error: plan is invalid: program 'decode': buffer 'qkv_w' "
        "does not match weight 'model.layers.0.self_attn.qkv_proj.weight' "
        "(bf16, 2 dimensions, first 384)");
  plan = samplePlan();
  plan.programs[0].buffers[1].dtype = DType::F16;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("buffer 'embed' does not match weight"));
}

TEST_CASE("counts and sizes beyond the plan limits are refused before any "
          "allocation") {
  Plan plan = samplePlan();
  plan.kvCache.layers = 70000000000000000;
  CHECK(loadError(plan) == "m.splan: error: plan is invalid: KV cache layers "
                           "70000000000000000 is outside [0, 1024]");
  plan = samplePlan();
  plan.kvCache.blockSize = 65536;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("KV block size must be a power of two "
                                       "in [1, 4096], got 65536"));
  plan = samplePlan();
  plan.limits.maxTokens = int64_t(1) << 40;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("max tokens 1099511627776 is outside"));
  plan = samplePlan();
  plan.weights[0].shape = {int64_t(1) << 30, 256};
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("weight 'model.embed_tokens.weight' "
                                       "has dimension 1073741824, outside"));
  plan = samplePlan();
  plan.programs[0].arenaBytes = ~uint64_t(0);
  plan.programs[0].buffers[4].arenaOffset = ~uint64_t(0) - 10;
  CHECK_THAT(loadError(plan), Catch::Matchers::Contains(
                                  "'qkv' at arena byte 18446744073709551605 "
                                  "takes 196608 bytes, beyond the arena of "
                                  "18446744073709551615"));
  plan = samplePlan();
  plan.maxPositions = 0;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("max positions 0 is outside"));
}

TEST_CASE("each launch's operands must fit its kernel") {
  auto launchError = [](void (*change)(Plan &)) {
    Plan plan = samplePlan();
    change(plan);
    return loadError(plan);
  };
  // The projection's weight has other columns than its input.
  CHECK(launchError([](Plan &p) {
          p.weights[1].shape[1] = 128;
          p.programs[0].buffers[3].shape[1] = Dim::constant(128);
        }) == "m.splan: error: plan is invalid: program 'decode': launch 1 "
              "(linear): arena 'h0' is [tokens, 256]; dimension 1 should be "
              "128 (the weight's columns)");
  // The rope's KV heads disagree with the cache.
  CHECK_THAT(launchError([](Plan &p) {
               std::get<RopeKvWriteParams>(p.programs[0].launches[2].params)
                   .numKvHeads = 4;
             }),
             Catch::Matchers::Contains(
                 "launch 2 (rope_kv_write<continuous>): parameter "
                 "'num_kv_heads' is 4, outside [2, 2]"));
  // Attention on a layer the cache does not have.
  CHECK_THAT(launchError([](Plan &p) {
               std::get<PagedDecodeAttentionParams>(
                   p.programs[0].launches[3].params)
                   .layer = 2;
             }),
             Catch::Matchers::Contains("launch 3 (paged_decode_attention): "
                                       "parameter 'layer' is 2, outside [0, "
                                       "1]"));
  // A scale of zero, a theta that is no number.
  CHECK_THAT(launchError([](Plan &p) {
               std::get<PagedDecodeAttentionParams>(
                   p.programs[0].launches[3].params)
                   .scale = 0;
             }),
             Catch::Matchers::Contains("parameter 'scale' is 0.000000; "
                                       "expected a finite positive number"));
  CHECK_THAT(launchError([](Plan &p) {
               std::get<RopeKvWriteParams>(p.programs[0].launches[2].params)
                   .rotary.theta = std::nan("");
             }),
             Catch::Matchers::Contains("parameter 'theta' is nan; expected a "
                                       "finite number"));
  // The logits are computed for another vocabulary.
  CHECK_THAT(launchError([](Plan &p) {
               p.vocabSize = 500;
               p.programs[0].buffers[12].shape[1] = Dim::constant(500);
             }),
             Catch::Matchers::Contains("dimension 0 should be 500 (the "
                                       "vocabulary)"));
  // Operand counts, kernels and variants the runtime does not have.
  CHECK_THAT(
      launchError([](Plan &p) { p.programs[0].launches[4].inputs.pop_back(); }),
      Catch::Matchers::Contains("launch 4 (logits): takes 3 inputs, "
                                "has 2"));
  CHECK_THAT(launchError([](Plan &p) {
               p.programs[0].launches[1].params = RmsNormParams{1e-5};
             }),
             Catch::Matchers::Contains("launch 1 (rms_norm): weight 'qkv_w' "
                                       "is [384, 256]; expected a weight of "
                                       "rank 1"));
  // An enum code outside its values: the file reader refuses it, and
  // validation refuses it in a plan built in memory.
  CHECK_THAT(
      launchError([](Plan &p) {
        std::get<RopeKvWriteParams>(p.programs[0].launches[2].params).variant =
            static_cast<RopeKvVariant>(7);
      }),
      Catch::Matchers::Contains("plan is malformed: invalid rope_kv_write "
                                "variant code 7"));
  {
    Plan plan = samplePlan();
    std::get<RopeKvWriteParams>(plan.programs[0].launches[2].params).variant =
        static_cast<RopeKvVariant>(7);
    CHECK_THAT(validatePlan(plan),
               Catch::Matchers::Contains("launch 2 (rope_kv_write<?>): "
                                         "parameter 'variant' has the invalid "
                                         "code 7"));
  }
  // The QK-norm epsilon of a launch without QK-norm weights.
  CHECK_THAT(launchError([](Plan &p) {
               std::get<RopeKvWriteParams>(p.programs[0].launches[2].params)
                   .qkNormEps = 1e-6;
             }),
             Catch::Matchers::Contains("parameter 'qk_norm_eps' is 0.000001 "
                                       "but the launch has no QK-norm "
                                       "weights; expected 0"));
  // Token ids where positions belong, and a write into a weight.
  CHECK_THAT(
      launchError([](Plan &p) { p.programs[0].launches[2].inputs[1] = 0; }),
      Catch::Matchers::Contains("input 'arg0' is not the step's "
                                "positions"));
  CHECK_THAT(
      launchError([](Plan &p) { p.programs[0].launches[1].outputs[0] = 3; }),
      Catch::Matchers::Contains("launch 1 (linear) writes weight "
                                "buffer 'qkv_w'"));
  // Storage types mixed within one launch.
  CHECK_THAT(
      launchError([](Plan &p) { p.programs[0].buffers[2].dtype = DType::F16; }),
      Catch::Matchers::Contains("is f16 where the launch's other "
                                "tensors are bf16"));
}

TEST_CASE("a head slice takes a range of its input's heads") {
  // qkv.heads [tokens, 12, 32] sliced into q [tokens, 8, 32].
  auto sliceError = [](int64_t first, int64_t count) {
    Plan plan = samplePlan();
    HeadSliceParams slice;
    slice.first = first;
    slice.numHeads = count;
    plan.programs[0].launches.push_back({slice, {5}, {9}, 0});
    return validatePlan(plan);
  };
  CHECK(sliceError(4, 8) == "");
  CHECK(sliceError(-1, 8) == "program 'decode': launch 5 (head_slice): "
                             "parameter 'first' is -1, outside [0, 11]");
  CHECK(sliceError(12, 8) == "program 'decode': launch 5 (head_slice): "
                             "parameter 'first' is 12, outside [0, 11]");
  CHECK(sliceError(5, 8) == "program 'decode': launch 5 (head_slice): "
                            "parameter 'num_heads' is 8, outside [1, 7]");
  CHECK(sliceError(0, 4) == "program 'decode': launch 5 (head_slice): arena "
                            "'q' is [tokens, 8, 32]; dimension 1 should be 4 "
                            "(num_heads)");
}

TEST_CASE("program inputs are bound by the role the plan gives them") {
  // Positions where the token ids belong: the role, not the name, decides.
  Plan plan = samplePlan();
  plan.programs[0].buffers[0].role = InputRole::Positions;
  CHECK(loadError(plan) == "m.splan: error: plan is invalid: program "
                           "'decode': buffer 'arg1' is a second positions "
                           "input");
  plan = samplePlan();
  std::swap(plan.programs[0].buffers[0].role, plan.programs[0].buffers[6].role);
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("launch 0 (embedding): input 'arg0' "
                                       "is not the step's token ids"));
  // Only inputs have a role, and every input has one.
  plan = samplePlan();
  plan.programs[0].buffers[2].role = InputRole::ParentIds;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("buffer 'h0' is arena with input role "
                                       "'parent_ids'; inputs and only inputs "
                                       "have a role"));
  plan = samplePlan();
  plan.programs[0].buffers[8].role = InputRole::None;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("buffer 'seqs' is input with input "
                                       "role 'none'"));
  // The sequence table has no shape; per-token inputs count tokens.
  plan = samplePlan();
  plan.programs[0].buffers[8].role = InputRole::ParentIds;
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("buffer 'seqs' is the parent_ids input "
                                       "but not i32[tokens]"));
}

TEST_CASE("a program returns exactly one logits output") {
  Plan plan = samplePlan();
  plan.programs[0].buffers[12].kind = BufferKind::Arena;
  CHECK_THAT(loadError(plan), Catch::Matchers::Contains(
                                  "has 0 f32 outputs; a program returns its "
                                  "logits as the one f32 output"));
  plan = samplePlan();
  plan.programs[0].phase = "train";
  CHECK_THAT(loadError(plan),
             Catch::Matchers::Contains("unknown program 'train'"));
}

TEST_CASE("the fusion record names pass flags, each once, of phase programs") {
  Plan plan = samplePlan();
  plan.fusions = {{"strata-fuse-qkv", true}, {"strata-fuse-swiglu", false}};
  CHECK(loadError(plan) == "");

  plan.fusions[1].name = "strata-fuse-qkv";
  CHECK(loadError(plan) == "m.splan: error: plan is invalid: the fusion pass "
                           "'strata-fuse-qkv' is listed twice");
  // Printed by the tools: no control bytes, no empty or overlong names.
  for (std::string name : {std::string(""), std::string("fuse\x1b[2J"),
                           std::string("Strata-Fuse"), std::string(65, 'a')}) {
    plan.fusions[1].name = name;
    CHECK(loadError(plan) ==
          "m.splan: error: plan is invalid: fusion pass 1 is not named by a "
          "pass flag (1 to 64 of a-z, 0-9 and '-')");
  }
  plan.fusions.assign(size_t(kMaxFusionPasses) + 1, {"strata-fuse-qkv", true});
  CHECK(loadError(plan) == "m.splan: error: plan is invalid: the plan lists 65 "
                           "fusion passes; at most 64 are supported");

  // The generic forward is what the fusion pipeline starts from.
  plan = samplePlan();
  plan.fusions = {{"strata-fuse-qkv", true}};
  plan.programs[0].phase = "forward";
  CHECK(loadError(plan) ==
        "m.splan: error: plan is invalid: the plan lists fusion passes, but "
        "its 'forward' program is the generic forward, which no fusion pass "
        "rewrites");
}

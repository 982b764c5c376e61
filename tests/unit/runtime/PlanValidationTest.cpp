// validatePlan: a plan whose checksum holds but whose contents do not fit
// together is refused before anything is sized from it, with a message
// that names the program, the launch and the mismatch.
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanLimits.h"

#include "SamplePlan.h"

#include <catch2/catch.hpp>

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
               p.programs[0].launches[2].attrs[2].value = int64_t(4);
             }),
             Catch::Matchers::Contains(
                 "launch 2 (rope_kv_write<continuous>): attribute "
                 "'num_kv_heads' is 4, outside [2, 2]"));
  // Attention on a layer the cache does not have.
  CHECK_THAT(launchError([](Plan &p) {
               p.programs[0].launches[3].attrs[0].value = int64_t(2);
             }),
             Catch::Matchers::Contains("launch 3 (paged_decode_attention): "
                                       "attribute 'layer' is 2, outside [0, "
                                       "1]"));
  // An attribute a kernel reads is missing, or has another type.
  CHECK_THAT(
      launchError([](Plan &p) { p.programs[0].launches[3].attrs.pop_back(); }),
      Catch::Matchers::Contains("missing attribute 'scale'"));
  CHECK_THAT(launchError([](Plan &p) {
               p.programs[0].launches[2].attrs[4].value = std::string("x");
             }),
             Catch::Matchers::Contains("attribute 'theta' is not a number"));
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
  CHECK_THAT(
      launchError([](Plan &p) { p.programs[0].launches[1].kernel = "gemm"; }),
      Catch::Matchers::Contains("launch 1 (gemm): unknown kernel"));
  CHECK_THAT(launchError([](Plan &p) {
               p.programs[0].launches[2].variant = "sideways";
             }),
             Catch::Matchers::Contains("variant 'sideways' is not packed, "
                                       "continuous or tree"));
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

// Speculative decoding on the CPU engine: with a draft attached, greedy
// generation gives exactly the tokens plain greedy decoding gives, whatever
// the draft proposes: a draft that always agrees (the model itself: every
// proposal kept), one that rarely does (other weights: rollback at every
// depth of chains of 1 to 8 tokens), and the trained pair (models/kjv and
// its draft), at batch 1 and 8.
#include "runtime/Engine.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

using namespace strata;

namespace {

std::vector<GenerationRequest> requests(int batch, int64_t vocab,
                                        int64_t newTokens) {
  std::vector<GenerationRequest> out;
  for (int b = 0; b < batch; ++b) {
    GenerationRequest r;
    const int length = 3 + (b * 17) % 40;
    for (int i = 0; i < length; ++i)
      r.prompt.push_back(int32_t((i * 131 + b * 71 + 7) % vocab));
    // Different budgets, so sequences leave the batch at different rounds.
    r.maxNewTokens = newTokens - b % 3;
    out.push_back(r);
  }
  return out;
}

std::vector<GenerationResult> run(Engine &engine,
                                  const std::vector<GenerationRequest> &reqs,
                                  GenerationTimings &timings) {
  std::vector<GenerationResult> results;
  std::string error;
  const bool ok = engine.generate(reqs, results, timings, error);
  INFO(error);
  REQUIRE(ok);
  return results;
}

/// Plain greedy decoding against speculative decoding with `draftPlan`
/// proposing each of `chains` tokens per round; returns the accepted share
/// of the last.
double checkSame(const plan::Plan &target, const plan::Plan &draftPlan,
                 const std::vector<GenerationRequest> &reqs,
                 std::initializer_list<int64_t> chains) {
  auto plain = testing::makeCpuEngine(target);
  GenerationTimings timings;
  const auto want = run(*plain, reqs, timings);
  double share = 0;
  for (int64_t tokens : chains) {
    INFO(tokens << " draft tokens, batch " << reqs.size());
    {
      auto engine = testing::makeCpuEngine(target);
      std::string error;
      const bool attached = engine->attachDraft(
          testing::makeCpuEngine(draftPlan), tokens, error);
      INFO(error);
      REQUIRE(attached);
      const auto got = run(*engine, reqs, timings);
      for (size_t i = 0; i < reqs.size(); ++i) {
        INFO("sequence " << i);
        CHECK(got[i].tokens == want[i].tokens);
        CHECK(got[i].finish == want[i].finish);
      }
      CHECK(timings.verifySteps > 0);
      CHECK(timings.acceptedTokens <= timings.proposedTokens);
      share = timings.proposedTokens
                  ? double(timings.acceptedTokens) / timings.proposedTokens
                  : 0;
    }
  }
  return share;
}

} // namespace

TEST_CASE("speculative greedy decoding = plain greedy decoding, every tiny "
          "model, a draft that always agrees") {
  for (const char *model :
       {"tiny-llama.yaml", "tiny-qwen3.yaml", "tiny-gemma-sliding.yaml"}) {
    INFO(model);
    const plan::Plan plan = testing::compilePlan(model, 256, true);
    for (int batch : {1, 8}) {
      const double share = checkSame(
          plan, plan, requests(batch, plan.vocabSize, 20), {1, 4, 8});
      // The model drafting for itself: every proposal is its own argmax.
      CHECK(share == 1.0);
    }
  }
}

TEST_CASE("speculative greedy decoding = plain greedy decoding with a draft "
          "that rarely agrees") {
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 256, true);
  plan::Plan other = plan;
  other.weightSeed += 1;
  // Rollback at every depth of a chain of 1 to 8 at batch 1; batch 8
  // with chains of 3.
  double share = checkSame(plan, other, requests(1, plan.vocabSize, 20),
                           {1, 2, 3, 4, 5, 6, 7, 8});
  // Unrelated random weights: most proposals are rolled back.
  CHECK(share < 0.5);
  share = checkSame(plan, other, requests(8, plan.vocabSize, 20), {3});
  CHECK(share < 0.5);
}

TEST_CASE("speculative greedy decoding = plain greedy decoding for the "
          "trained pair") {
  const plan::Plan target = testing::compilePlan("kjv/model.yaml", 256, true);
  const plan::Plan draft =
      testing::compilePlan("kjv-draft/model.yaml", 256, true);
  for (int batch : {1, 8})
    checkSame(target, draft, requests(batch, target.vocabSize, 24), {4});
}

TEST_CASE("a draft is refused when speculative decoding cannot use it") {
  const plan::Plan llama = testing::compilePlan("tiny-llama.yaml", 256, true);
  std::string error;
  auto engine = testing::makeCpuEngine(llama);
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 0, error));
  CHECK(error == "the draft proposes 1 to 16 tokens per step, not 0");
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 17, error));

  // Another vocabulary.
  const plan::Plan kjv = testing::compilePlan("kjv-draft/model.yaml", 64, true);
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(kjv), 4, error));
  CHECK_THAT(error, Catch::Contains("speculative decoding needs the same "
                                    "vocabulary"));

  // Lightning layers: their state is not rolled back.
  const plan::Plan hybrid =
      testing::compilePlan("tiny-minimax.yaml", 256, true);
  auto lightning = testing::makeCpuEngine(hybrid);
  CHECK_FALSE(
      lightning->attachDraft(testing::makeCpuEngine(hybrid), 4, error));
  CHECK_THAT(error, Catch::Contains("lightning-attention layers"));

  // The generic forward has no verify program.
  const plan::Plan generic = testing::compilePlan("tiny-llama.yaml", 256, false);
  auto plain = testing::makeCpuEngine(generic);
  CHECK_FALSE(plain->attachDraft(testing::makeCpuEngine(llama), 4, error));
  CHECK_THAT(error, Catch::Contains("no 'verify' program"));

  // Sampling with a temperature is refused per request, before any step.
  REQUIRE(engine->attachDraft(testing::makeCpuEngine(llama), 4, error));
  GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.sampling.temperature = 0.8;
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  CHECK_FALSE(engine->generate({r}, results, timings, error));
  CHECK(error == "request 0: speculative decoding samples greedily "
                 "(temperature 0) only so far");
}

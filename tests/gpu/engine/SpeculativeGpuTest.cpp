// Speculative decoding on the CUDA backend: greedy tokens with a drafter
// equal plain greedy decoding's on the same GPU, with a draft that always
// agrees (the model itself), one that rarely does (other weights: rollback
// at every depth), and prompt lookup on prompts that repeat themselves, at
// batch 1 and 8; token trees, whose accepted paths are compacted in the
// paged cache by the kv_move kernel. Verify steps replay CUDA graphs (the
// batch's trees padded to one bucket size) and pick greedy tokens on the
// device.
//
// The verify program and the decode program round differently (a chain of
// tokens per sequence against one), so where two logits are closer than
// that rounding the picks may differ: a divergent token passes only when
// plain decoding's logits at that step show a near-tie, and the comparison
// of that sequence stops there.
#include "runtime/Engine.h"
#include "tests/gpu/engine/TestPlans.h"

#include <catch2/catch.hpp>


using namespace strata;

namespace {

constexpr double kLogitTolerance = 3e-2;

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

/// `batch` prompts of different lengths; with `copies` > 1 each is its
/// first part repeated that many times.
std::vector<GenerationRequest> requests(int batch, int64_t vocab,
                                        int copies = 1) {
  std::vector<GenerationRequest> out;
  for (int b = 0; b < batch; ++b) {
    GenerationRequest r;
    const int length = 3 + (b * 29) % 70;
    for (int copy = 0; copy < copies; ++copy)
      for (int i = 0; i < length; ++i)
        r.prompt.push_back(int32_t((i * 131 + b * 71 + 7) % vocab));
    r.maxNewTokens = 24 - b % 3;
    out.push_back(r);
  }
  return out;
}

/// Speculative decoding with `draftPlan` (prompt lookup when null) at
/// every chain length from 1 to 8 against plain decoding; returns the
/// share of proposals accepted.
double checkSame(const plan::Plan &target, const plan::Plan *draftPlan,
                 const std::vector<GenerationRequest> &reqs,
                 const std::vector<int64_t> &tree = {}) {
  auto plain = testing::cudaTestEngine(target);
  const int64_t batch = int64_t(reqs.size());
  GenerationTimings timings;
  const auto want = run(*plain, reqs, timings);
  int64_t proposed = 0, accepted = 0, verifySteps = 0, replays = 0;
  for (int64_t tokens : {1, 2, 3, 4, 5, 6, 7, 8}) {
    INFO(tokens << " draft tokens, batch " << batch);
    auto engine = testing::cudaTestEngine(target);
    std::string error;
    const bool attached =
        draftPlan ? engine->attachDraft(testing::cudaTestEngine(*draftPlan),
                                        tree.empty() ? tokens : 4 * tokens,
                                        error, tree)
                  : engine->attachLookup(tokens, error);
    INFO(error);
    REQUIRE(attached);
    const auto got = run(*engine, reqs, timings);
    proposed += timings.proposedTokens;
    accepted += timings.acceptedTokens;
    CHECK(timings.verifySteps > 0);
    const BackendCounters counters = engine->backendCounters();
    verifySteps += counters.verifySteps;
    replays += counters.verifyGraphReplays;
    for (size_t i = 0; i < reqs.size(); ++i) {
      INFO("sequence " << i);
      testing::checkSameUpToNearTie(*plain, reqs[i], want[i].tokens,
                                    got[i].tokens, kLogitTolerance);
    }
  }
  // Verify steps run as graphs: the trees of a batch padded to one size.
  CHECK(verifySteps > 0);
  CHECK(replays > 0);
  return proposed ? double(accepted) / double(proposed) : 0;
}

} // namespace

TEST_CASE("speculative decoding on the GPU = plain decoding, a draft that "
          "always agrees",
          "[gpu][engine][speculative]") {
  const plan::Plan plan = testing::loadTestPlan("tiny-llama.fused.splan");
  for (int batch : {1, 8})
    CHECK(checkSame(plan, &plan, requests(batch, plan.vocabSize)) > 0.9);
}

TEST_CASE("speculative decoding on the GPU = plain decoding, a draft that "
          "rarely agrees",
          "[gpu][engine][speculative]") {
  const plan::Plan plan = testing::loadTestPlan("tiny-llama.fused.splan");
  plan::Plan other = plan;
  other.weightSeed += 1;
  for (int batch : {1, 8})
    CHECK(checkSame(plan, &other, requests(batch, plan.vocabSize)) < 0.5);
}

TEST_CASE("speculative decoding on the GPU = plain decoding, prompt lookup",
          "[gpu][engine][speculative]") {
  for (const char *name :
       {"tiny-llama.fused.splan", "tiny-qwen3.fused.splan",
        "tiny-gemma-sliding.fused.splan", "tiny-mistral.fused.splan"}) {
    INFO(name);
    const plan::Plan plan = testing::loadTestPlan(name);
    for (int batch : {1, 8})
      checkSame(plan, nullptr, requests(batch, plan.vocabSize, 3));
  }
}

TEST_CASE("speculative decoding on the GPU = plain decoding, token trees",
          "[gpu][engine][speculative]") {
  const plan::Plan plan = testing::loadTestPlan("tiny-llama.fused.splan");
  plan::Plan other = plan;
  other.weightSeed += 1;
  for (const std::vector<int64_t> &tree :
       std::vector<std::vector<int64_t>>{{3, 2, 1}, {2, 1, 1, 1, 1, 1, 1, 1}})
    for (int batch : {1, 8}) {
      INFO("tree of depth " << tree.size());
      checkSame(plan, &plan, requests(batch, plan.vocabSize), tree);
      checkSame(plan, &other, requests(batch, plan.vocabSize), tree);
    }
  // A sliding window over tree positions.
  const plan::Plan mistral = testing::loadTestPlan("tiny-mistral.fused.splan");
  for (int batch : {1, 8})
    checkSame(mistral, &mistral, requests(batch, mistral.vocabSize),
              {2, 2, 1, 1});
}

TEST_CASE("verify graphs are captured once per bucket as sequences grow",
          "[gpu][engine][speculative]") {
  // The model as its own draft, 3 tokens a round: 4-token verify steps
  // (fewer only at the end of the token budget) over a context that grows
  // by 4 tokens a step. Each (batch, tokens) bucket runs eagerly once, is
  // captured once, and is replayed from then on.
  const plan::Plan plan = testing::loadTestPlan("tiny-llama.fused.splan");
  auto engine = testing::cudaTestEngine(plan);
  std::string error;
  REQUIRE(engine->attachDraft(testing::cudaTestEngine(plan), 3, error));
  std::vector<GenerationRequest> reqs = requests(1, plan.vocabSize);
  reqs[0].maxNewTokens = 120;
  GenerationTimings timings;
  const BackendCounters before = engine->backendCounters();
  run(*engine, reqs, timings);
  const BackendCounters after = engine->backendCounters();
  const int64_t steps = after.verifySteps - before.verifySteps;
  const int64_t captures =
      after.verifyGraphCaptures - before.verifyGraphCaptures;
  const int64_t replays = after.verifyGraphReplays - before.verifyGraphReplays;
  INFO("verify steps " << steps << ", captures " << captures << ", replays "
                       << replays);
  CHECK(steps >= 25);
  // Buckets: 4 tokens, and possibly 2 for a last round of one proposal.
  CHECK(captures <= 2);
  CHECK(steps - replays <= 2); // the first step of each bucket
}

// The serving loop on the CUDA backend: requests arriving at different
// steps, packed with others into mixed prefill/decode steps, preempted by a
// small pool and reusing cached prefixes, get the tokens the same engine
// generates for each request alone; with CUDA graphs on, as decode batches
// grow and shrink; and with a drafter, whose verify steps replay graphs too.
//
// Batch composition changes which GEMM algorithm a step uses, hence the
// order of fp32 sums, so two logits closer than the bf16 rounding noise may
// swap: a served token that differs from the alone one passes only when the
// alone run's logits at that step show a near-tie (the served pick within
// the tolerance of the best logit), and the comparison of that request
// stops there. A wrong cache slot, block table, state or position moves
// logits by far more and fails.
#include "runtime/Engine.h"
#include "tests/gpu/engine/TestPlans.h"

#include <catch2/catch.hpp>

#include <map>

using namespace strata;

namespace {

constexpr double kLogitTolerance = 3e-2;

GenerationResult alone(Engine &engine, GenerationRequest r) {
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  const bool ok = engine.generate({r}, results, timings, error);
  INFO(error);
  REQUIRE(ok);
  return results.at(0);
}

/// Requests with prompts of 1 to 90 tokens, a third of them starting with
/// the same 48 tokens.
std::vector<GenerationRequest> requests(int64_t vocab) {
  std::vector<GenerationRequest> out;
  for (int i = 0; i < 24; ++i) {
    GenerationRequest r;
    const int length = 1 + (i * 37) % 90;
    for (int t = 0; t < length; ++t)
      r.prompt.push_back(int32_t(i % 3 == 0 && t < 48
                                     ? (t * 13 + 1) % vocab
                                     : (t * 131 + i * 71 + 7) % vocab));
    r.maxNewTokens = 4 + i % 9;
    out.push_back(r);
  }
  return out;
}

enum class Drafter { None, Lookup, Draft };

void checkServed(const std::string &model, int64_t kvBlocks,
                 Drafter drafter = Drafter::None) {
  const plan::Plan plan = testing::loadTestPlan(model + ".fused.splan");
  auto engine = testing::cudaTestEngine(plan);
  const auto reqs = requests(plan.vocabSize);
  std::vector<GenerationResult> want;
  for (const GenerationRequest &r : reqs)
    want.push_back(alone(*engine, r));

  std::string error;
  // Speculative serving: decode-only steps verify proposals (the draft
  // model has other weights, so most are rejected and both caches roll
  // back).
  plan::Plan other = plan;
  other.weightSeed += 1;
  if (drafter == Drafter::Lookup)
    REQUIRE(engine->attachLookup(4, error));
  if (drafter == Drafter::Draft)
    REQUIRE(engine->attachDraft(testing::cudaTestEngine(other), 3, error));
  ServeOptions options;
  options.kvBlocks = kvBlocks;
  options.stepTokens = 64;
  REQUIRE(engine->startServing(options, error));
  const BackendCounters before = engine->backendCounters();
  std::map<uint64_t, size_t> index;
  std::vector<std::vector<int32_t>> got(reqs.size());
  size_t ended = 0;
  for (int step = 0; ended < reqs.size(); ++step) {
    REQUIRE(step < 100000);
    for (size_t i = 0; i < reqs.size(); ++i)
      if (int(i) * 2 == step) {
        uint64_t id = 0;
        const bool ok = engine->submit(reqs[i], id, error);
        INFO(error);
        REQUIRE(ok);
        index[id] = i;
      }
    std::vector<ServeResult> done;
    const bool ok = engine->serveStep(done, error);
    INFO(error);
    REQUIRE(ok);
    for (ServeResult &r : done) {
      got[index.at(r.id)] = r.result.tokens;
      ++ended;
    }
  }
  const ServeStats stats = engine->serveStats();
  CHECK(stats.freeKvBlocks == stats.kvBlocks);
  if (drafter != Drafter::None)
    CHECK(stats.verifySteps > 0);
  engine->stopServing();

  // Decode batches grew and shrank as requests joined and left; graphs
  // kept being replayed: while serving (one pool, reserved by
  // startServing), each batch-size bucket (1, 2, 4, ... the plan's
  // sequences per step) runs eagerly once and is captured once, and every
  // other decode-only step replays its graph.
  const BackendCounters after = engine->backendCounters();
  int64_t buckets = 1;
  while ((int64_t(1) << (buckets - 1)) < plan.limits.maxBatch)
    ++buckets;
  const int64_t steps = after.decodeSteps - before.decodeSteps;
  const int64_t replays = after.graphReplays - before.graphReplays;
  const int64_t captures = after.graphCaptures - before.graphCaptures;
  INFO("decode steps " << steps << ", replays " << replays << ", captures "
                       << captures);
  CHECK(captures <= buckets);
  CHECK(steps - replays <= buckets);
  if (drafter == Drafter::None)
    CHECK(replays > 0);
  else
    CHECK(after.verifyGraphReplays > before.verifyGraphReplays);

  for (size_t i = 0; i < reqs.size(); ++i) {
    INFO("request " << i);
    testing::checkSameUpToNearTie(*engine, reqs[i], want[i].tokens, got[i],
                                  kLogitTolerance);
  }
}

} // namespace

TEST_CASE("served on the GPU = alone on the GPU: Llama-like",
          "[gpu][engine][serve]") {
  checkServed("tiny-llama", 256);
}

TEST_CASE("served on the GPU = alone on the GPU: preempting pool",
          "[gpu][engine][serve]") {
  // Each request needs at most 7 blocks of 16; 12 hold a few at a time.
  checkServed("tiny-llama", 12);
}

TEST_CASE("served on the GPU = alone on the GPU: sliding window",
          "[gpu][engine][serve]") {
  checkServed("tiny-gemma-sliding", 256);
}

TEST_CASE("served on the GPU = alone on the GPU: lightning hybrid",
          "[gpu][engine][serve]") {
  checkServed("tiny-minimax", 256);
}

TEST_CASE("served on the GPU = alone on the GPU: prompt lookup",
          "[gpu][engine][serve][speculative]") {
  checkServed("tiny-llama", 256, Drafter::Lookup);
}

TEST_CASE("served on the GPU = alone on the GPU: a draft model",
          "[gpu][engine][serve][speculative]") {
  checkServed("tiny-llama", 256, Drafter::Draft);
  checkServed("tiny-llama", 12, Drafter::Draft);
}

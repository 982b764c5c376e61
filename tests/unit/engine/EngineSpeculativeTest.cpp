// Speculative decoding on the CPU engine: with a drafter attached, greedy
// generation gives exactly the tokens plain greedy decoding gives, whatever
// the drafter proposes: a draft that always agrees (the model itself: every
// proposal kept), one that rarely does (other weights: rollback at every
// depth of chains of 1 to 8 tokens), the trained pair (models/kjv and its
// draft), and prompt lookup, at batch 1 and 8. With a temperature, the
// tokens are distributed as plain sampling's (chi-square tests over many
// seeds).
#include "runtime/Engine.h"
#include "tests/unit/ChiSquare.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

#include <map>

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
/// (prompt lookup when null) proposing each of `chains` tokens per round;
/// returns the accepted share of the last.
double checkSame(const plan::Plan &target, const plan::Plan *draftPlan,
                 const std::vector<GenerationRequest> &reqs,
                 std::initializer_list<int64_t> chains,
                 const std::vector<int64_t> &tree = {}) {
  auto plain = testing::makeCpuEngine(target);
  GenerationTimings timings;
  const auto want = run(*plain, reqs, timings);
  double share = 0;
  for (int64_t tokens : chains) {
    INFO(tokens << " draft tokens, batch " << reqs.size());
    {
      auto engine = testing::makeCpuEngine(target);
      std::string error;
      const bool attached =
          draftPlan ? engine->attachDraft(testing::makeCpuEngine(*draftPlan),
                                          tokens, error, tree)
                    : engine->attachLookup(tokens, error);
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
       {"tiny-llama.yaml", "tiny-qwen3.yaml", "tiny-gemma-sliding.yaml",
        "tiny-mistral.yaml"}) {
    INFO(model);
    const plan::Plan plan = testing::compilePlan(model, 256, true);
    for (int batch : {1, 8}) {
      const double share = checkSame(
          plan, &plan, requests(batch, plan.vocabSize, 20), {1, 4, 8});
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
  double share = checkSame(plan, &other, requests(1, plan.vocabSize, 20),
                           {1, 2, 3, 4, 5, 6, 7, 8});
  // Unrelated random weights: most proposals are rolled back.
  CHECK(share < 0.5);
  share = checkSame(plan, &other, requests(8, plan.vocabSize, 20), {3});
  CHECK(share < 0.5);
}

TEST_CASE("speculative greedy decoding = plain greedy decoding for the "
          "trained pair") {
  const plan::Plan target = testing::compilePlan("kjv/model.yaml", 256, true);
  const plan::Plan draft =
      testing::compilePlan("kjv-draft/model.yaml", 256, true);
  for (int batch : {1, 8})
    checkSame(target, &draft, requests(batch, target.vocabSize, 24), {4});
}

TEST_CASE("speculative greedy decoding with prompt lookup = plain greedy "
          "decoding") {
  // Prompts that repeat themselves, so that lookups match; the models'
  // continuations then confirm or refute them.
  auto repeating = [](int batch, int64_t vocab, int64_t newTokens) {
    std::vector<GenerationRequest> out = requests(batch, vocab, newTokens);
    for (GenerationRequest &r : out) {
      const std::vector<int32_t> once = r.prompt;
      for (int copy = 0; copy < 2; ++copy)
        r.prompt.insert(r.prompt.end(), once.begin(), once.end());
    }
    return out;
  };
  for (const char *model :
       {"tiny-llama.yaml", "tiny-qwen3.yaml", "tiny-gemma-sliding.yaml",
        "tiny-mistral.yaml"}) {
    INFO(model);
    const plan::Plan plan = testing::compilePlan(model, 256, true);
    for (int batch : {1, 8})
      checkSame(plan, nullptr, repeating(batch, plan.vocabSize, 20),
                {1, 4, 8});
  }
  // The trained model reciting a verse it was given once.
  const plan::Plan kjv = testing::compilePlan("kjv/model.yaml", 256, true);
  const double share =
      checkSame(kjv, nullptr, repeating(1, kjv.vocabSize, 24), {4});
  CHECK(share > 0.0);
}

TEST_CASE("speculative greedy decoding with token trees = plain greedy "
          "decoding") {
  // Each round's accepted path is moved down in the KV cache to follow
  // the cached prefix (compaction) and the rest rolled back: a draft that
  // agrees (the model itself: its argmax path is accepted, away from the
  // first slots whenever a level has more than one node), and one that
  // rarely does, with trees of depth 1 to 8.
  const plan::Plan llama = testing::compilePlan("tiny-llama.yaml", 256, true);
  plan::Plan other = llama;
  other.weightSeed += 1;
  const std::vector<std::vector<int64_t>> shapes{
      {3},          {2, 2},          {3, 1, 1},          {2, 2, 2, 1},
      {2, 1, 2, 1, 1}, {2, 1, 1, 1, 1, 2}, {3, 2, 1, 1, 1, 1, 1},
      {2, 1, 1, 1, 1, 1, 1, 1}};
  for (const std::vector<int64_t> &shape : shapes) {
    INFO("tree of depth " << shape.size());
    checkSame(llama, &llama, requests(1, llama.vocabSize, 20), {12}, shape);
    const double share =
        checkSame(llama, &other, requests(1, llama.vocabSize, 20), {12}, shape);
    CHECK(share < 0.5);
  }
  checkSame(llama, &other, requests(8, llama.vocabSize, 20), {10}, {3, 2, 1});
  for (const char *model :
       {"tiny-qwen3.yaml", "tiny-gemma-sliding.yaml", "tiny-mistral.yaml"}) {
    INFO(model);
    const plan::Plan plan = testing::compilePlan(model, 256, true);
    for (int batch : {1, 8})
      checkSame(plan, &plan, requests(batch, plan.vocabSize, 20), {8},
                {2, 2, 1, 1});
  }
  const plan::Plan kjv = testing::compilePlan("kjv/model.yaml", 256, true);
  const plan::Plan kjvDraft =
      testing::compilePlan("kjv-draft/model.yaml", 256, true);
  for (int batch : {1, 8})
    checkSame(kjv, &kjvDraft, requests(batch, kjv.vocabSize, 24), {10},
              {3, 2, 1, 1});
}

TEST_CASE("a draft is refused when speculative decoding cannot use it") {
  const plan::Plan llama = testing::compilePlan("tiny-llama.yaml", 256, true);
  std::string error;
  auto engine = testing::makeCpuEngine(llama);
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 0, error));
  CHECK(error == "the drafter proposes 1 to 16 tokens per step, not 0");
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

  CHECK_FALSE(engine->attachLookup(0, error));
  CHECK_FALSE(lightning->attachLookup(4, error));
  CHECK_THAT(error, Catch::Contains("lightning-attention layers"));
  CHECK_FALSE(plain->attachLookup(4, error));
  CHECK_THAT(error, Catch::Contains("no 'verify' program"));
  // Tree shapes.
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 8, error,
                                  {2, 0}));
  CHECK(error == "a token tree branches into 1 to 8 tokens per node, not 0");
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 64, error,
                                  {2}));
  CHECK(error == "a token tree has 1 to 63 tokens, not 64");
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 8, error,
                                  std::vector<int64_t>(17, 1)));
  CHECK(error == "a token tree has 1 to 16 levels, not 17");
  CHECK_FALSE(
      engine->attachDraft(testing::makeCpuEngine(generic), 8, error, {2, 2}));
  CHECK_THAT(error, Catch::Contains("which a token tree of more than one "
                                    "level needs"));
  // One drafter at a time.
  REQUIRE(engine->attachLookup(4, error));
  CHECK_FALSE(engine->attachDraft(testing::makeCpuEngine(llama), 4, error));
  CHECK_THAT(error, Catch::Contains("already has a drafter attached"));
}

namespace {

/// Tokens `index` of the results, counted.
std::map<int32_t, int64_t> histogram(const std::vector<GenerationResult> &r,
                                     size_t index) {
  std::map<int32_t, int64_t> out;
  for (const GenerationResult &g : r)
    if (g.tokens.size() > index)
      ++out[g.tokens[index]];
  return out;
}

} // namespace

TEST_CASE("speculative sampling keeps the model's distribution") {
  // Many requests of one prompt, each with its own seed, sampled plainly
  // and speculatively: at every generated position after the first (which
  // the prompt's step samples, the same in both), the tokens of the two
  // runs must look like draws of one distribution. A draft of other
  // weights (tiny-qwen3) has most of its proposals rejected, so the
  // residual draws decide; prompt lookup proposes for certain where the
  // model repeats the pairs of tokens it tends to write (its random
  // weights double tokens), and about 40% of those are kept; a token tree
  // tests a node's children one after the other.
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 256, true, 64);
  const plan::Plan qwen = testing::compilePlan("tiny-qwen3.yaml", 256, true, 64);
  struct Case {
    double temperature;
    int64_t topK;
    const plan::Plan *draft; // null: prompt lookup
    std::vector<int32_t> prompt;
    int64_t newTokens;
    std::vector<int64_t> tree;
  };
  const int64_t count = 600;
  // The tree's draft is the model itself: its top children hold most of
  // the mass, so the children are tested in turn and often kept.
  for (const Case &c :
       {Case{0.7, 40, &qwen, {5, 6, 5, 6, 5}, 4, {}},
        Case{0.7, 3, nullptr, {409, 409, 107, 107}, 8, {}},
        Case{0.7, 4, &plan, {5, 6, 5, 6, 5}, 4, {3, 2, 1}}}) {
    INFO("temperature " << c.temperature << ", top-k " << c.topK
                        << (c.draft ? ", draft" : ", prompt lookup")
                        << (c.tree.empty() ? "" : ", a tree"));
    std::vector<GenerationRequest> reqs(static_cast<size_t>(count));
    for (int64_t r = 0; r < count; ++r) {
      GenerationRequest &req = reqs[size_t(r)];
      req.prompt = c.prompt;
      req.maxNewTokens = c.newTokens;
      req.sampling.temperature = c.temperature;
      req.sampling.topK = c.topK;
      req.sampling.seed = uint64_t(1000 + r);
    }
    GenerationTimings timings;
    auto plainEngine = testing::makeCpuEngine(plan);
    const auto plain = run(*plainEngine, reqs, timings);
    auto engine = testing::makeCpuEngine(plan);
    std::string error;
    REQUIRE((c.draft ? engine->attachDraft(testing::makeCpuEngine(*c.draft),
                                           c.tree.empty() ? 3 : 8, error,
                                           c.tree)
                     : engine->attachLookup(3, error)));
    const auto spec = run(*engine, reqs, timings);
    // Proposals were made, and some but not all were accepted.
    INFO(timings.acceptedTokens << " of " << timings.proposedTokens
                                << " proposals accepted");
    CHECK(timings.acceptedTokens > 0);
    CHECK(timings.acceptedTokens < timings.proposedTokens);
    for (size_t r = 0; r < reqs.size(); ++r)
      REQUIRE(spec[r].tokens.size() == plain[r].tokens.size());
    CHECK(histogram(spec, 0) == histogram(plain, 0));
    for (size_t index = 1; index < size_t(c.newTokens); ++index) {
      const testing::ChiSquare test = testing::chiSquareTwoSample(
          histogram(plain, index), histogram(spec, index));
      INFO("token " << index << ": chi-square " << test.statistic << ", df "
                    << test.df << ", p " << test.pValue);
      CHECK(test.df >= 3);
      CHECK(test.pValue > 1e-3);
    }
  }
}

TEST_CASE("timing verify steps measures both steps and leaves the engine "
          "as it was") {
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 256, true);
  auto engine = testing::makeCpuEngine(plan);
  std::string error;
  VerifyTiming t;
  const std::vector<std::vector<int32_t>> prompts{{5, 6, 7, 8, 9},
                                                  {10, 11, 12}};
  REQUIRE(engine->timeVerifySteps(prompts, 8, 2, t, error));
  CHECK(t.decodeSeconds > 0);
  CHECK(t.verifySeconds > 0);
  CHECK(t.verifyLogitsSeconds > 0);
  // A generation afterwards equals one on a fresh engine.
  GenerationTimings timings;
  const auto reqs = requests(2, plan.vocabSize, 10);
  auto fresh = testing::makeCpuEngine(plan);
  const auto want = run(*fresh, reqs, timings);
  const auto got = run(*engine, reqs, timings);
  for (size_t i = 0; i < reqs.size(); ++i)
    CHECK(got[i].tokens == want[i].tokens);
  // Refusals: no verify program, a tree over the step's token limit.
  const plan::Plan generic = testing::compilePlan("tiny-llama.yaml", 256, false);
  auto plain = testing::makeCpuEngine(generic);
  CHECK_FALSE(plain->timeVerifySteps(prompts, 8, 2, t, error));
  CHECK_THAT(error, Catch::Contains("no 'verify' program"));
  CHECK_FALSE(engine->timeVerifySteps(prompts, 200, 2, t, error));
  CHECK_THAT(error, Catch::Contains("exceeds the plan's 256 tokens per step"));
}

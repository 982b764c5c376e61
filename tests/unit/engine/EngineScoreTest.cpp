// Engine::score against an independent reference: the log-softmax of the
// last logits row that greedy generation keeps when it is given each prefix
// of the same sequence. Scoring computes every row in one prefill (or in
// chunks: prefill, extend, decode) of a plan with all-token logits; the
// reference computes one row per run of a generation plan, so the two agree
// only if the all-token logits, the chunking and the log-softmax are right.
#include "runtime/Engine.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace strata;

namespace {

/// log softmax(row)[target], computed plainly in double.
double referenceLogProb(const std::vector<float> &row, int32_t target) {
  double sum = 0.0;
  for (float v : row)
    sum += std::exp(double(v));
  return double(row[size_t(target)]) - std::log(sum);
}

/// A prompt and its greedy continuation, then for each token after the
/// first the reference log-probability from generating one token after
/// the prefix before it.
void reference(Engine &gen, std::vector<int32_t> &sequence,
               std::vector<double> &logprobs) {
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  GenerationRequest r;
  r.prompt = {5, 17, 301, 44, 2, 9};
  r.maxNewTokens = 8;
  INFO(error);
  REQUIRE(gen.generate({r}, results, timings, error));
  sequence = r.prompt;
  sequence.insert(sequence.end(), results[0].tokens.begin(),
                  results[0].tokens.end());
  logprobs.clear();
  for (size_t i = 1; i < sequence.size(); ++i) {
    r.prompt.assign(sequence.begin(), sequence.begin() + int64_t(i));
    r.maxNewTokens = 1;
    REQUIRE(gen.generate({r}, results, timings, error));
    REQUIRE(results[0].lastLogits.size() == size_t(gen.plan().vocabSize));
    logprobs.push_back(referenceLogProb(results[0].lastLogits, sequence[i]));
  }
}

} // namespace

TEST_CASE("score() gives each token's log-probability given the ones before "
          "it") {
  for (const char *model : {"tiny-llama.yaml", "tiny-minimax.yaml"})
    for (bool fused : {false, true}) {
      INFO(model << (fused ? " fused" : " generic"));
      auto gen = testing::makeCpuEngine(testing::compilePlan(model, 16, fused));
      std::vector<int32_t> sequence;
      std::vector<double> expected;
      reference(*gen, sequence, expected);
      // One step for the whole sequence, then steps of 4 tokens (prefill,
      // extend, and a last chunk of one token: decode).
      for (int64_t maxTokens : {16, 4}) {
        INFO("steps of " << maxTokens << " tokens");
        auto scorer = testing::makeCpuEngine(testing::compilePlan(
            model, maxTokens, fused, 1, std::nullopt, true));
        REQUIRE(scorer->scoresEveryToken());
        std::vector<double> got;
        std::string error;
        INFO(error);
        REQUIRE(scorer->score(sequence, got, error));
        REQUIRE(got.size() == expected.size());
        for (size_t i = 0; i < got.size(); ++i) {
          INFO("token " << i + 1);
          CHECK(got[i] <= 0.0);
          CHECK(std::abs(got[i] - expected[i]) < 1e-3);
        }
        // Scoring leaves nothing behind: a second run gives the same.
        std::vector<double> again;
        REQUIRE(scorer->score(sequence, again, error));
        CHECK(again == got);
      }
    }
}

TEST_CASE("score() refuses what it cannot score") {
  std::string error;
  std::vector<double> out;
  auto gen = testing::makeCpuEngine(
      testing::compilePlan("tiny-llama.yaml", 16, false));
  CHECK_FALSE(gen->scoresEveryToken());
  CHECK_FALSE(gen->score({1, 2, 3}, out, error));
  CHECK(error == "the plan's logits are one row per sequence; scoring needs "
                 "a plan built with all-token logits");
  auto scorer = testing::makeCpuEngine(testing::compilePlan(
      "tiny-llama.yaml", 16, false, 1, std::nullopt, true));
  CHECK_FALSE(scorer->score({7}, out, error));
  CHECK(error == "score() takes 2 to 2048 tokens (the model's positions), got "
                 "1");
  CHECK_FALSE(scorer->score({7, 512}, out, error));
  CHECK(error == "token id 512 is outside the vocabulary of 512");
  CHECK(out.empty());
}

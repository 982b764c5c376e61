// How sequences end and how a conversation continues, on the CPU engine
// with tiny-llama's fused programs: a stop token ends a sequence after it,
// the token callback ends it where it says, and a conversation that keeps
// its cache between turns generates exactly what one generation over the
// whole conversation does.
#include "runtime/Engine.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace strata;

namespace {

GenerationResult generateOne(Engine &engine, const GenerationRequest &r) {
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  INFO(error);
  REQUIRE(engine.generate({r}, results, timings, error));
  REQUIRE(results.size() == 1);
  return results[0];
}

GenerationRequest greedy(std::vector<int32_t> prompt, int64_t newTokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.maxNewTokens = newTokens;
  return r;
}

const plan::Plan &tinyLlama() {
  static const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true);
  return plan;
}

} // namespace

TEST_CASE("a stop token ends the sequence after it") {
  auto engine = testing::makeCpuEngine(tinyLlama());
  const GenerationResult free =
      generateOne(*engine, greedy({5, 17, 301, 44}, 10));
  REQUIRE(free.tokens.size() == 10);
  CHECK(free.finish == FinishReason::Length);
  // The first token that did not come before it: generation must stop
  // exactly there.
  size_t at = 1;
  while (at < free.tokens.size() &&
         std::find(free.tokens.begin(), free.tokens.begin() + at,
                   free.tokens[at]) != free.tokens.begin() + at)
    ++at;
  if (at == free.tokens.size())
    at = 0;
  GenerationRequest stopped = greedy({5, 17, 301, 44}, 10);
  stopped.stopTokens = {free.tokens[at], 511};
  const GenerationResult r = generateOne(*engine, stopped);
  CHECK(r.finish == FinishReason::StopToken);
  CHECK(r.tokens == std::vector<int32_t>(free.tokens.begin(),
                                         free.tokens.begin() + at + 1));
}

TEST_CASE("the token callback sees every token in order and can end the "
          "sequence") {
  auto engine = testing::makeCpuEngine(tinyLlama());
  GenerationRequest r = greedy({9, 8, 7}, 12);
  std::vector<int32_t> seen;
  r.onToken = [&](int32_t id) {
    seen.push_back(id);
    return seen.size() < 4;
  };
  const GenerationResult result = generateOne(*engine, r);
  CHECK(result.finish == FinishReason::Callback);
  CHECK(result.tokens.size() == 4);
  CHECK(seen == result.tokens);

  // Only the sequence whose callback says stop ends; the other runs on.
  std::vector<GenerationRequest> two(2, greedy({9, 8, 7}, 6));
  two[0].onToken = [](int32_t) { return false; };
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  REQUIRE(engine->generate(two, results, timings, error));
  CHECK(results[0].tokens.size() == 1);
  CHECK(results[0].finish == FinishReason::Callback);
  CHECK(results[1].tokens.size() == 6);
  CHECK(results[1].finish == FinishReason::Length);
}

TEST_CASE("a conversation kept in the cache generates what one generation "
          "over the whole conversation does") {
  const plan::Plan &plan = tinyLlama();
  const std::vector<int32_t> first = {1,  40, 41, 42, 43, 44, 45, 46, 47, 48,
                                      49, 50, 51, 52, 53, 54, 55, 56, 57, 58};
  const std::vector<int32_t> second = {60, 61, 62};
  const std::vector<int32_t> third = {70};

  auto session = testing::makeCpuEngine(plan);
  std::string error;
  REQUIRE(session->openSession(128, error));
  GenerationResult turn1, turn2, turn3;
  GenerationTimings timings;
  REQUIRE(session->continueSession(greedy(first, 5), turn1, timings, error));
  REQUIRE(session->continueSession(greedy(second, 4), turn2, timings, error));
  // An empty turn continues the reply.
  REQUIRE(session->continueSession(greedy(third, 3), turn3, timings, error));
  CHECK(session->sessionLength() ==
        int64_t(first.size() + 5 + second.size() + 4 + third.size() + 3));

  // The same conversation as one prompt each time, on a fresh engine.
  auto oneShot = testing::makeCpuEngine(plan);
  std::vector<int32_t> all = first;
  CHECK(generateOne(*oneShot, greedy(all, 5)).tokens == turn1.tokens);
  all.insert(all.end(), turn1.tokens.begin(), turn1.tokens.end());
  all.insert(all.end(), second.begin(), second.end());
  CHECK(generateOne(*oneShot, greedy(all, 4)).tokens == turn2.tokens);
  all.insert(all.end(), turn2.tokens.begin(), turn2.tokens.end());
  all.insert(all.end(), third.begin(), third.end());
  CHECK(generateOne(*oneShot, greedy(all, 3)).tokens == turn3.tokens);
}

TEST_CASE("a conversation refuses a turn beyond its length and stays usable") {
  auto engine = testing::makeCpuEngine(tinyLlama());
  std::string error;
  REQUIRE(engine->openSession(16, error));
  GenerationResult result;
  GenerationTimings timings;
  REQUIRE(engine->continueSession(greedy({1, 2, 3, 4, 5, 6}, 4), result,
                                  timings, error));
  CHECK_FALSE(engine->continueSession(greedy({7, 8, 9, 10}, 4), result, timings,
                                      error));
  CHECK(error == "request 0: 10 tokens held, a prompt of 4 tokens and 4 new "
                 "tokens exceed the 16 positions of the session");
  CHECK(engine->sessionLength() == 10);
  REQUIRE(engine->continueSession(greedy({7, 8}, 4), result, timings, error));
  CHECK(engine->sessionLength() == 16);

  // generate() is refused while a conversation is open, and works after.
  std::vector<GenerationResult> results;
  CHECK_FALSE(engine->generate({greedy({1}, 1)}, results, timings, error));
  engine->closeSession();
  CHECK(engine->generate({greedy({1}, 1)}, results, timings, error));
  CHECK_FALSE(engine->openSession(0, error));
  CHECK_FALSE(engine->openSession(1 << 20, error));
}

TEST_CASE("stop token ids outside the vocabulary are refused") {
  auto engine = testing::makeCpuEngine(tinyLlama());
  GenerationRequest r = greedy({1, 2}, 2);
  r.stopTokens = {512};
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  CHECK_FALSE(engine->generate({r}, results, timings, error));
  CHECK(error == "request 0: stop token id 512 is outside the vocabulary of "
                 "512");
}

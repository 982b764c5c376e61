// The continuous-batching loop (Engine::startServing, submit, serveStep,
// cancel) on the CPU engine: greedy requests get exactly the tokens a
// generation of the request alone gives, whatever arrives when and however
// steps are packed (chunked prompts mixed with decode tokens); a pool too
// small for everyone preempts and recomputes without changing any token;
// cancelled requests free what they held; bad requests are refused.
#include "runtime/Engine.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <random>

using namespace strata;

namespace {

GenerationRequest request(std::vector<int32_t> prompt, int64_t newTokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.maxNewTokens = newTokens;
  return r;
}

std::vector<int32_t> aloneTokens(Engine &engine, const GenerationRequest &r) {
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  std::string error;
  const bool ok = engine.generate({r}, results, timings, error);
  INFO(error);
  REQUIRE(ok);
  return results.at(0).tokens;
}

/// Prompts of several lengths: some fit a step, some are chunked over
/// several (the plans take 16 tokens per step).
std::vector<GenerationRequest> mixedRequests(int64_t vocab, int count,
                                             uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<GenerationRequest> out;
  for (int i = 0; i < count; ++i) {
    const int length = 1 + int(rng() % 40);
    std::vector<int32_t> prompt;
    for (int t = 0; t < length; ++t)
      prompt.push_back(int32_t(rng() % uint32_t(vocab)));
    out.push_back(request(prompt, 3 + int64_t(rng() % 10)));
  }
  return out;
}

/// Submits requests[i] before step arrivals[i] and steps until all end;
/// returns the tokens by request index.
std::vector<std::vector<int32_t>>
serveAll(Engine &engine, const std::vector<GenerationRequest> &requests,
         const std::vector<int> &arrivals, const ServeOptions &options,
         ServeStats *statsOut = nullptr) {
  std::string error;
  REQUIRE(engine.startServing(options, error));
  std::map<uint64_t, size_t> index;
  std::vector<std::vector<int32_t>> tokens(requests.size());
  size_t ended = 0;
  for (int step = 0; ended < requests.size(); ++step) {
    REQUIRE(step < 10000);
    for (size_t i = 0; i < requests.size(); ++i)
      if (arrivals[i] == step) {
        uint64_t id = 0;
        const bool ok = engine.submit(requests[i], id, error);
        INFO(error);
        REQUIRE(ok);
        index[id] = i;
      }
    std::vector<ServeResult> done;
    const bool ok = engine.serveStep(done, error);
    INFO(error);
    REQUIRE(ok);
    for (ServeResult &r : done) {
      CHECK_FALSE(r.cancelled);
      tokens[index.at(r.id)] = r.result.tokens;
      ++ended;
    }
  }
  const ServeStats stats = engine.serveStats();
  CHECK(stats.running == 0);
  CHECK(stats.waiting == 0);
  CHECK(stats.freeKvBlocks == stats.kvBlocks);
  if (statsOut)
    *statsOut = stats;
  engine.stopServing();
  return tokens;
}

void checkEqualToAlone(const std::string &model) {
  const plan::Plan plan = testing::compilePlan(model, 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  const auto requests = mixedRequests(plan.vocabSize, 10, 7);
  std::vector<std::vector<int32_t>> alone;
  for (const GenerationRequest &r : requests)
    alone.push_back(aloneTokens(*engine, r));

  ServeOptions options;
  options.kvBlocks = 64;
  SECTION("all at once") {
    ServeStats stats;
    const auto got =
        serveAll(*engine, requests, std::vector<int>(requests.size(), 0),
                 options, &stats);
    CHECK(got == alone);
    CHECK(stats.preemptions == 0);
  }
  SECTION("arriving while others decode") {
    std::vector<int> arrivals;
    for (size_t i = 0; i < requests.size(); ++i)
      arrivals.push_back(int(i) * 3);
    ServeStats stats;
    const auto got = serveAll(*engine, requests, arrivals, options, &stats);
    CHECK(got == alone);
    CHECK(stats.mixedSteps > 0);
  }
  SECTION("in reverse, with a small step budget") {
    std::vector<int> arrivals;
    for (size_t i = 0; i < requests.size(); ++i)
      arrivals.push_back(int(requests.size() - i));
    options.stepTokens = 5;
    options.maxRunning = 3;
    const auto got = serveAll(*engine, requests, arrivals, options);
    CHECK(got == alone);
  }
  SECTION("a pool too small for everyone preempts and recomputes") {
    // Each request needs at most 4 blocks of 16; 6 blocks hold one or two.
    options.kvBlocks = 6;
    ServeStats stats;
    const auto got =
        serveAll(*engine, requests, std::vector<int>(requests.size(), 0),
                 options, &stats);
    CHECK(got == alone);
    CHECK(stats.preemptions > 0);
  }
}

} // namespace

TEST_CASE("served greedy tokens equal a generation alone: tiny-llama") {
  checkEqualToAlone("tiny-llama.yaml");
}

TEST_CASE("served greedy tokens equal a generation alone: hybrid") {
  // Lightning layers keep a state per slot: slots are reused by later
  // requests and by preempted ones, and must start from zero each time.
  checkEqualToAlone("tiny-minimax.yaml");
}

TEST_CASE("served greedy tokens equal a generation alone: sliding window") {
  checkEqualToAlone("tiny-mistral.yaml");
}

/// Serves prompts that repeat themselves (so that lookups propose too),
/// arriving while others decode and in a pool too small for everyone,
/// with the drafter `attach` gives: decode-only steps verify the
/// proposals, the others run plainly, and the tokens are plain decoding's.
void checkServedSpeculation(
    const plan::Plan &plan,
    const std::function<bool(Engine &, std::string &)> &attach) {
  auto plain = testing::makeCpuEngine(plan);
  std::vector<GenerationRequest> requests = mixedRequests(plan.vocabSize, 8, 11);
  for (GenerationRequest &r : requests) {
    const std::vector<int32_t> once(r.prompt.begin(),
                                    r.prompt.begin() +
                                        std::min<size_t>(r.prompt.size(), 6));
    r.prompt = once;
    for (int copy = 0; copy < 2; ++copy)
      r.prompt.insert(r.prompt.end(), once.begin(), once.end());
    r.maxNewTokens = 12;
  }
  std::vector<std::vector<int32_t>> alone;
  for (const GenerationRequest &r : requests)
    alone.push_back(aloneTokens(*plain, r));
  auto engine = testing::makeCpuEngine(plan);
  std::string error;
  REQUIRE(attach(*engine, error));
  ServeOptions options;
  options.kvBlocks = 64;
  SECTION("arriving while others decode") {
    std::vector<int> arrivals;
    for (size_t i = 0; i < requests.size(); ++i)
      arrivals.push_back(int(i) * 2);
    ServeStats stats;
    const auto got = serveAll(*engine, requests, arrivals, options, &stats);
    CHECK(got == alone);
    CHECK(stats.verifySteps > 0);
    CHECK(stats.proposedTokens > 0);
    CHECK(stats.acceptedTokens <= stats.proposedTokens);
  }
  SECTION("a pool too small for everyone, without prefix caching") {
    options.kvBlocks = 4;
    options.prefixCache = false;
    ServeStats stats;
    const auto got =
        serveAll(*engine, requests, std::vector<int>(requests.size(), 0),
                 options, &stats);
    CHECK(got == alone);
    CHECK(stats.preemptions > 0);
  }
}

TEST_CASE("served greedy tokens with prompt lookup equal plain decoding "
          "alone") {
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 16, true, 8);
  checkServedSpeculation(plan, [](Engine &engine, std::string &error) {
    return engine.attachLookup(4, error);
  });
}

TEST_CASE("served greedy tokens with a draft model equal plain decoding "
          "alone") {
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 16, true, 8);
  // The model itself (every proposal kept) and other weights (most
  // rejected: the draft's cache is cut back every step).
  plan::Plan other = plan;
  other.weightSeed += 1;
  for (const plan::Plan *draft :
       std::vector<const plan::Plan *>{&plan, &other}) {
    INFO((draft == &plan ? "the model as its own draft" : "another draft"));
    checkServedSpeculation(plan, [&](Engine &engine, std::string &error) {
      return engine.attachDraft(testing::makeCpuEngine(*draft), 3, error);
    });
  }
}

TEST_CASE("served sampled requests with a draft model repeat for a seed") {
  // Which steps verify proposals depends on what a request is served with
  // (a step with a prompt in it runs plainly), so the tokens do too; for
  // the same arrivals they are the same (lossless speculative sampling
  // itself is tested on generation: EngineSpeculativeTest.cpp).
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 16, true, 8);
  plan::Plan other = plan;
  other.weightSeed += 1;
  auto requests = mixedRequests(plan.vocabSize, 6, 11);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].sampling.temperature = 0.8;
    requests[i].sampling.topK = 20;
    requests[i].sampling.seed = 7 + i;
    requests[i].maxNewTokens = 10;
  }
  ServeOptions options;
  options.kvBlocks = 64;
  std::vector<int> arrivals;
  for (size_t i = 0; i < requests.size(); ++i)
    arrivals.push_back(int(i) * 3);
  auto served = [&] {
    auto engine = testing::makeCpuEngine(plan);
    std::string error;
    REQUIRE(engine->attachDraft(testing::makeCpuEngine(other), 3, error));
    ServeStats stats;
    auto got = serveAll(*engine, requests, arrivals, options, &stats);
    CHECK(stats.verifySteps > 0);
    return got;
  };
  const auto first = served();
  CHECK(served() == first);
  for (const auto &tokens : first) {
    CHECK((!tokens.empty() && tokens.size() <= 10));
    for (int32_t t : tokens)
      CHECK((t >= 0 && t < plan.vocabSize));
  }
}

TEST_CASE("serving refuses a draft model's token tree") {
  const plan::Plan plan = testing::compilePlan("tiny-llama.yaml", 16, true, 8);
  auto engine = testing::makeCpuEngine(plan);
  std::string error;
  REQUIRE(engine->attachDraft(testing::makeCpuEngine(plan), 6, error, {2, 2}));
  ServeOptions options;
  options.kvBlocks = 64;
  CHECK_FALSE(engine->startServing(options, error));
  CHECK(error.find("token tree") != std::string::npos);
}

TEST_CASE("sampled requests draw what they draw alone") {
  // Draws depend on the request's seed and token index only: served with
  // others, a sampled request gets the tokens `strata run --seed` gives.
  const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  auto requests = mixedRequests(plan.vocabSize, 6, 11);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].sampling.temperature = 1.5;
    requests[i].sampling.topK = 50;
    requests[i].sampling.seed = 100 + i % 2;
    requests[i].maxNewTokens = 12;
  }
  std::vector<std::vector<int32_t>> alone;
  for (const GenerationRequest &r : requests)
    alone.push_back(aloneTokens(*engine, r));
  ServeOptions options;
  options.kvBlocks = 64;
  std::vector<int> arrivals;
  for (size_t i = 0; i < requests.size(); ++i)
    arrivals.push_back(int(i) * 2);
  CHECK(serveAll(*engine, requests, arrivals, options) == alone);
}

TEST_CASE("prompts that start alike reuse the cached blocks") {
  const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  // A shared prefix of 40 tokens: two full blocks of 16 and a partial one.
  std::vector<int32_t> shared;
  for (int i = 0; i < 40; ++i)
    shared.push_back(int32_t((i * 37 + 5) % plan.vocabSize));
  std::vector<GenerationRequest> requests;
  for (int k = 0; k < 5; ++k) {
    std::vector<int32_t> prompt = shared;
    for (int i = 0; i <= k; ++i)
      prompt.push_back(int32_t(100 + 7 * k + i));
    requests.push_back(request(prompt, 6));
  }
  requests.push_back(request(shared, 6)); // all of it cached but the last
  std::vector<std::vector<int32_t>> alone;
  for (const GenerationRequest &r : requests)
    alone.push_back(aloneTokens(*engine, r));

  ServeOptions options;
  options.kvBlocks = 32;
  std::vector<int> arrivals;
  for (size_t i = 0; i < requests.size(); ++i)
    arrivals.push_back(int(i) * 8); // each after the first one's prompt
  ServeStats stats;
  CHECK(serveAll(*engine, requests, arrivals, options, &stats) == alone);
  CHECK(stats.prefixCache);
  // Every request after the first finds the two full shared blocks.
  CHECK(stats.prefixHitTokens == 32 * int64_t(requests.size() - 1));
  CHECK(stats.prefixQueryTokens > stats.prefixHitTokens);

  options.prefixCache = false;
  CHECK(serveAll(*engine, requests, arrivals, options, &stats) == alone);
  CHECK_FALSE(stats.prefixCache);
  CHECK(stats.prefixHitTokens == 0);
}

TEST_CASE("preempting a request that shares cached blocks frees only its "
          "own") {
  // Identical greedy requests produce identical tokens, so a twin that
  // arrives (or is recomputed) later finds the other's full blocks in the
  // prefix cache and shares them; preempting it must not count those as
  // freed, or the step that counted on them fails for want of blocks.
  const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  std::vector<GenerationRequest> requests;
  for (int k = 0; k < 3; ++k) {
    std::vector<int32_t> prompt;
    for (int i = 0; i < 20; ++i)
      prompt.push_back(int32_t((i * 29 + 11 * k + 3) % plan.vocabSize));
    requests.push_back(request(prompt, 40)); // 60 tokens: 4 blocks
    requests.push_back(request(prompt, 40));
  }
  std::vector<std::vector<int32_t>> alone;
  for (const GenerationRequest &r : requests)
    alone.push_back(aloneTokens(*engine, r));
  ServeOptions options;
  options.kvBlocks = 6;
  int64_t preemptions = 0;
  for (int gap : {0, 5, 13, 21}) {
    INFO("arrivals " << gap << " steps apart");
    std::vector<int> arrivals;
    for (size_t i = 0; i < requests.size(); ++i)
      arrivals.push_back(int(i) * gap);
    ServeStats stats;
    CHECK(serveAll(*engine, requests, arrivals, options, &stats) == alone);
    CHECK(stats.prefixHitTokens > 0);
    preemptions += stats.preemptions;
  }
  CHECK(preemptions > 0);
}

TEST_CASE("a cancelled request frees its blocks and is reported") {
  const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  const GenerationRequest keep = request({3, 4, 5, 6, 7}, 12);
  const std::vector<int32_t> alone = aloneTokens(*engine, keep);

  std::string error;
  ServeOptions options;
  options.kvBlocks = 16;
  REQUIRE(engine->startServing(options, error));
  uint64_t a = 0, b = 0, c = 0;
  REQUIRE(engine->submit(keep, a, error));
  REQUIRE(engine->submit(request({9, 8, 7}, 50), b, error));
  REQUIRE(engine->submit(request({1, 2}, 50), c, error));
  std::vector<ServeResult> done;
  for (int i = 0; i < 3; ++i)
    REQUIRE(engine->serveStep(done, error));
  CHECK(done.empty());
  CHECK(engine->serveStats().running == 3);
  const int64_t freeBefore = engine->serveStats().freeKvBlocks;
  REQUIRE(engine->cancel(b));
  CHECK(engine->serveStats().freeKvBlocks > freeBefore);
  CHECK_FALSE(engine->cancel(b));
  CHECK_FALSE(engine->cancel(12345));
  REQUIRE(engine->serveStep(done, error));
  REQUIRE(done.size() == 1);
  CHECK(done[0].id == b);
  CHECK(done[0].cancelled);
  CHECK(done[0].result.tokens.size() == 3);
  REQUIRE(engine->cancel(c));
  std::vector<int32_t> kept;
  while (engine->serveBusy()) {
    done.clear();
    REQUIRE(engine->serveStep(done, error));
    for (const ServeResult &r : done)
      if (r.id == a)
        kept = r.result.tokens;
  }
  CHECK(kept == alone);
  CHECK(engine->serveStats().freeKvBlocks == 16);
}

TEST_CASE("streamed tokens and stop conditions while serving") {
  const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  const std::vector<int32_t> alone =
      aloneTokens(*engine, request({11, 12, 13}, 8));
  std::string error;
  ServeOptions options;
  options.kvBlocks = 8;
  REQUIRE(engine->startServing(options, error));
  std::vector<int32_t> streamed;
  GenerationRequest r = request({11, 12, 13}, 8);
  r.onToken = [&](int32_t t) {
    streamed.push_back(t);
    return streamed.size() < 5; // a stop string seen after the fifth
  };
  uint64_t id = 0, stopId = 0;
  REQUIRE(engine->submit(r, id, error));
  GenerationRequest s = request({11, 12, 13}, 8);
  s.stopTokens = {alone[2]};
  REQUIRE(engine->submit(s, stopId, error));
  std::map<uint64_t, GenerationResult> results;
  while (engine->serveBusy()) {
    std::vector<ServeResult> done;
    REQUIRE(engine->serveStep(done, error));
    for (ServeResult &d : done)
      results[d.id] = d.result;
  }
  CHECK(streamed == std::vector<int32_t>(alone.begin(), alone.begin() + 5));
  CHECK(results.at(id).finish == FinishReason::Callback);
  CHECK(results.at(id).tokens == streamed);
  // The stop token ends the sequence at its first occurrence.
  const auto first = std::find(alone.begin(), alone.end(), alone[2]);
  CHECK(results.at(stopId).finish == FinishReason::StopToken);
  CHECK(results.at(stopId).tokens ==
        std::vector<int32_t>(alone.begin(), first + 1));
}

TEST_CASE("bad requests are refused at submit") {
  const plan::Plan plan =
      testing::compilePlan("tiny-llama.yaml", 16, /*fused=*/true, 8);
  auto engine = testing::makeCpuEngine(plan);
  std::string error;
  uint64_t id = 0;
  CHECK_FALSE(engine->submit(request({1, 2}, 4), id, error));
  CHECK(error.find("startServing") != std::string::npos);

  ServeOptions options;
  CHECK_FALSE(engine->startServing(options, error));
  CHECK(error.find("at least one block") != std::string::npos);
  options.kvBlocks = 2; // 32 tokens
  REQUIRE(engine->startServing(options, error));
  CHECK_FALSE(engine->submit(request({}, 4), id, error));
  CHECK(error.find("empty prompt") != std::string::npos);
  CHECK_FALSE(
      engine->submit(request({1, int32_t(plan.vocabSize)}, 4), id, error));
  CHECK(error.find("outside the vocabulary") != std::string::npos);
  CHECK_FALSE(
      engine->submit(request(std::vector<int32_t>(30, 1), 4), id, error));
  CHECK(error.find("the pool has 2") != std::string::npos);
  CHECK_FALSE(engine->submit(
      request(std::vector<int32_t>(10, 1), plan.maxPositions), id, error));
  CHECK(error.find("positions") != std::string::npos);
  CHECK_FALSE(engine->serveBusy());
  // A request for no tokens ends at the next step, untouched.
  REQUIRE(engine->submit(request({1, 2}, 0), id, error));
  std::vector<ServeResult> done;
  REQUIRE(engine->serveStep(done, error));
  REQUIRE(done.size() == 1);
  CHECK(done[0].result.tokens.empty());
}

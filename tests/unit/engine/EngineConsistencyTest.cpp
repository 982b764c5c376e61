// Consistency of the CPU engine on the tiny model of every family, with the
// generic forward and with the fused phase programs (prefill, extend,
// decode: packed/continuous rope_kv_write, prefill/extend/paged-decode
// attention, lightning prefill/decode): the phases must agree with each
// other. Decoding after a prefill equals prefilling the whole sequence;
// chunked prefill equals one prefill; a batch equals its sequences run
// alone; the fused programs compute what the generic forward computes. The
// hybrid model's lightning layers are covered too (prefill state then
// decode against one long prefill).
#include "runtime/Engine.h"
#include "runtime/cpu/CpuExecutor.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace strata;

namespace {

plan::Plan compile(const std::string &model, int64_t maxTokens,
                   bool fused = false) {
  return testing::compilePlan(model, maxTokens, fused);
}

std::vector<GenerationResult> generate(const plan::Plan &plan,
                                       std::vector<GenerationRequest> reqs) {
  std::string error;
  auto engine = Engine::create(plan, EngineOptions{}, error);
  INFO(error);
  REQUIRE(engine);
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  REQUIRE(engine->generate(reqs, results, timings, error));
  return results;
}

GenerationRequest greedy(std::vector<int32_t> prompt, int64_t newTokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.maxNewTokens = newTokens;
  return r;
}

std::vector<int32_t> prompt(int n, int salt) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i)
    ids.push_back((i * 37 + salt * 11 + 3) % 500);
  return ids;
}

/// Largest |a - b| relative to the largest |b|.
double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  REQUIRE(a.size() == b.size());
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, double(std::abs(a[i] - b[i])));
    scale = std::max(scale, double(std::abs(b[i])));
  }
  return worst / scale;
}

const char *kModels[] = {"tiny-llama.yaml", "tiny-qwen3.yaml",
                         "tiny-mistral.yaml", "tiny-gemma-sliding.yaml",
                         "tiny-minimax.yaml"};

// The reference kernels compute each token's row independently of how many
// tokens share the step, so the phases agree to fp32 rounding; 1e-5 of the
// logits' range leaves room for nothing else, an off-by-one in a position,
// a cache slot or a decay step moves logits by far more.
constexpr double kTolerance = 1e-5;

} // namespace

TEST_CASE("decoding after a prefill equals prefilling the whole sequence") {
  for (bool fused : {false, true})
    for (const char *model : kModels) {
      INFO(model << (fused ? " (fused)" : " (generic)"));
      plan::Plan plan = compile(model, 256, fused);
      // Longer than the sliding windows (16) of the sliding models.
      std::vector<int32_t> p = prompt(21, 1);
      auto decoded = generate(plan, {greedy(p, 6)});
      REQUIRE(decoded[0].tokens.size() == 6);
      // Re-run prompt + the first five generated tokens as one prefill: its
      // next token and logits must be those of the sixth decode step.
      std::vector<int32_t> whole = p;
      whole.insert(whole.end(), decoded[0].tokens.begin(),
                   decoded[0].tokens.end() - 1);
      auto prefilled = generate(plan, {greedy(whole, 1)});
      CHECK(prefilled[0].tokens[0] == decoded[0].tokens.back());
      CHECK(relativeError(decoded[0].lastLogits, prefilled[0].lastLogits) <
            kTolerance);
    }
}

TEST_CASE("chunked prefill equals one prefill") {
  for (bool fused : {false, true})
    for (const char *model : kModels) {
      INFO(model << (fused ? " (fused)" : " (generic)"));
      std::vector<int32_t> p = prompt(45, 2);
      auto whole = generate(compile(model, 256, fused), {greedy(p, 3)});
      // A 7-token step limit splits the prompt into 7 chunks of at most 7:
      // a prefill onto the empty cache, then extends.
      auto chunked = generate(compile(model, 7, fused), {greedy(p, 3)});
      CHECK(chunked[0].tokens == whole[0].tokens);
      CHECK(relativeError(chunked[0].lastLogits, whole[0].lastLogits) <
            kTolerance);
    }
}

TEST_CASE("a batch of sequences equals each sequence alone") {
  // Prompts share prefill steps: with 256 tokens per step all start in one
  // prefill; with 16, steps mix a prompt's last chunk, fresh prompts and
  // continued ones (extend), and the 30-token prompt spans three steps.
  for (int64_t maxTokens : {256, 16})
    for (bool fused : {false, true})
      for (const char *model : kModels) {
        INFO(model << (fused ? " (fused)" : " (generic)") << ", " << maxTokens
                   << " tokens per step");
        plan::Plan plan = compile(model, maxTokens, fused);
        std::vector<GenerationRequest> reqs = {
            greedy(prompt(5, 3), 4), greedy(prompt(19, 4), 4),
            greedy(prompt(2, 5), 4), greedy(prompt(30, 6), 3)};
        auto together = generate(plan, reqs);
        for (size_t i = 0; i < reqs.size(); ++i) {
          INFO("sequence " << i);
          auto alone = generate(plan, {reqs[i]});
          CHECK(together[i].tokens == alone[0].tokens);
          CHECK(relativeError(together[i].lastLogits, alone[0].lastLogits) <
                kTolerance);
        }
      }
}

TEST_CASE("the fused phase programs compute what the generic forward "
          "computes") {
  // The fusions move storage roundings (QK-norm and rotation in one fp32
  // pass; no bf16 round trip between them), so logits agree to bf16
  // precision rather than bit for bit.
  for (const char *model : kModels) {
    INFO(model);
    std::vector<int32_t> p = prompt(23, 7);
    auto generic = generate(compile(model, 256), {greedy(p, 1)});
    auto fused = generate(compile(model, 256, true), {greedy(p, 1)});
    CHECK(relativeError(fused[0].lastLogits, generic[0].lastLogits) < 2e-2);
  }
}

TEST_CASE("sampling under a seed is reproducible and seed-dependent") {
  plan::Plan plan = compile("tiny-llama.yaml", 256);
  GenerationRequest r = greedy(prompt(4, 6), 12);
  r.sampling.temperature = 1.5;
  r.sampling.topK = 50;
  r.sampling.seed = 7;
  auto a = generate(plan, {r});
  auto b = generate(plan, {r});
  CHECK(a[0].tokens == b[0].tokens);
  r.sampling.seed = 8;
  auto c = generate(plan, {r});
  CHECK(c[0].tokens != a[0].tokens);
}

TEST_CASE("generation errors are named") {
  plan::Plan plan = compile("tiny-llama.yaml", 256);
  std::string error;
  auto engine = Engine::create(plan, EngineOptions{}, error);
  REQUIRE(engine);
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  CHECK_FALSE(engine->generate({greedy({1, 999}, 2)}, results, timings, error));
  CHECK(error == "request 0: token id 999 is outside the vocabulary of 512");
  CHECK_FALSE(engine->generate({greedy({}, 2)}, results, timings, error));
  CHECK(error == "request 0 has an empty prompt");
  EngineOptions small;
  small.kvBlocks = 1; // 16 tokens
  auto tight = Engine::create(plan, small, error);
  REQUIRE(tight);
  CHECK_FALSE(
      tight->generate({greedy(prompt(10, 1), 10)}, results, timings, error));
  CHECK(error == "the KV pool has 1 block but 1 request needs 2 blocks of "
                 "16 tokens (prompt and new tokens)");
  // Positions beyond the model's max_position_embeddings (2048).
  CHECK_FALSE(
      engine->generate({greedy(prompt(2000, 1), 49)}, results, timings, error));
  CHECK(error == "request 0: a prompt of 2000 tokens and 49 new tokens exceed "
                 "the model's 2048 positions");
}

namespace {

/// Runs `program` of `plan` for one sequence feeding `tokens` after the
/// `cached` tokens already in `pool`/`caches`.
std::vector<float> runStep(const plan::Plan &plan, const std::string &phase,
                           const WeightStore &weights, KvBlockPool &pool,
                           CpuCaches &caches, int64_t cached,
                           const std::vector<int32_t> &tokens,
                           std::vector<int32_t> parents = {}) {
  const plan::Program *program = nullptr;
  for (const plan::Program &p : plan.programs)
    if (p.phase == phase)
      program = &p;
  REQUIRE(program);
  StepInputs in;
  in.tokenIds = tokens;
  for (size_t t = 0; t < tokens.size(); ++t)
    in.positions.push_back(int32_t(cached + t));
  if (!parents.empty()) {
    // A tree token's position is the prefix length plus its depth.
    for (size_t t = 0; t < tokens.size(); ++t) {
      int depth = 0;
      for (int32_t a = parents[t]; a >= 0; a = parents[a])
        ++depth;
      in.positions[t] = int32_t(cached + depth);
    }
  }
  in.cuQLens = {0, int32_t(tokens.size())};
  in.kvLens = {int32_t(cached + tokens.size())};
  std::string error;
  REQUIRE(pool.append(0, int64_t(tokens.size()), in.slotMapping, error));
  in.blockTables = pool.blockTable(0);
  in.maxBlocksPerSeq = int64_t(in.blockTables.size());
  in.stateSlots = {0};
  in.parentIds = std::move(parents);
  CpuExecutor executor(plan, *program, weights);
  std::vector<float> logits;
  kernels::Status status = executor.run(in, caches, logits);
  INFO(status.message());
  REQUIRE(status.ok());
  return logits;
}

} // namespace

TEST_CASE("verifying a chain-shaped draft equals decoding it token by "
          "token") {
  for (const char *model : kModels) {
    INFO(model);
    plan::Plan plan = compile(model, 256, /*fused=*/true);
    WeightStore weights = WeightStore::random(plan);
    const std::vector<int32_t> p = prompt(19, 8), draft = {17, 250, 3, 99};
    const int64_t vocab = plan.vocabSize;

    // Verify: prefill the prompt, then score the whole chain in one step.
    KvBlockPool poolA(
        64, int32_t(plan.kvCache.blockSize ? plan.kvCache.blockSize : 16));
    poolA.addSequence(0);
    CpuCaches cachesA = CpuCaches::create(plan, 64, 1);
    runStep(plan, "prefill", weights, poolA, cachesA, 0, p);
    std::vector<float> verified =
        runStep(plan, "verify", weights, poolA, cachesA, int64_t(p.size()),
                draft, {-1, 0, 1, 2});
    REQUIRE(int64_t(verified.size()) == int64_t(draft.size()) * vocab);

    // Decode: the same prompt, then the draft one token per step.
    KvBlockPool poolB(
        64, int32_t(plan.kvCache.blockSize ? plan.kvCache.blockSize : 16));
    poolB.addSequence(0);
    CpuCaches cachesB = CpuCaches::create(plan, 64, 1);
    runStep(plan, "prefill", weights, poolB, cachesB, 0, p);
    for (size_t i = 0; i < draft.size(); ++i) {
      INFO("draft token " << i);
      std::vector<float> decoded =
          runStep(plan, "decode", weights, poolB, cachesB,
                  int64_t(p.size() + i), {draft[i]});
      std::vector<float> row(verified.begin() + i * vocab,
                             verified.begin() + (i + 1) * vocab);
      CHECK(relativeError(row, decoded) < kTolerance);
    }
  }
}

TEST_CASE("phase programs share one copy of each weight") {
  plan::Plan plan = compile("tiny-qwen3.yaml", 256, /*fused=*/true);
  REQUIRE(plan.programs.size() == 4);
  std::set<std::string> names;
  for (const plan::Weight &w : plan.weights)
    CHECK(names.insert(w.name).second);
  // Every program refers to the same weights by index.
  for (const plan::Program &p : plan.programs)
    for (const plan::Buffer &b : p.buffers)
      if (b.kind == plan::BufferKind::Weight)
        CHECK(plan.weights[b.weight].name == b.name);
  CHECK(plan.weightInitStd == 0.02);
}

TEST_CASE("the engine materialises only the weights a launch reads") {
  // The fused plan lists q/k/v and gate/up both unpacked (the checkpoint's
  // tensors) and packed (what the launches read).
  plan::Plan plan = compile("tiny-llama.yaml", 256, /*fused=*/true);
  const std::vector<bool> read = plan::weightsRead(plan);
  WeightStore all = WeightStore::random(plan);
  WeightStore some = WeightStore::random(plan, WeightSubset::ReadByLaunches);
  int unread = 0;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    INFO(plan.weights[i].name);
    if (read[i]) {
      CHECK(some.bytes(int32_t(i)) == all.bytes(int32_t(i)));
    } else {
      ++unread;
      CHECK(some.bytes(int32_t(i)).empty());
      CHECK(plan.weights[i].packedFrom.empty());
    }
  }
  // q, k, v, gate and up of every layer.
  CHECK(unread == 5 * int(plan.kvCache.layers));
  CHECK(some.totalBytes() < all.totalBytes());
}

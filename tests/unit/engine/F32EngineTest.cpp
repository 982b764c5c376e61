// Models with `dtype: f32` on the CPU backend: the tiny model of every family
// compiled in f32 and in bf16 from the same file and seed, run greedily with
// the generic forward and with the fused phase programs.
//
// The two dtypes do not compute the same numbers: the f32 model's random
// weights are drawn at full precision where the bf16 ones are rounded, and
// every stored activation and cache entry is rounded in bf16 only. So:
//  - logits, teacher-forced: both dtypes are fed the bf16 run's greedy
//    tokens, so every step sees the same context, and each step's f32 logits
//    must be finite and within kBf16Tolerance of the bf16 ones (relative to
//    the bf16 row's largest |logit|);
//  - greedy tokens, free-running: each engine generates on its own. While
//    the two have picked the same tokens their contexts are equal, so the
//    steps are the teacher-forced ones, and a different pick is accepted
//    only at a near-tie: the bf16 logits of the two tokens must be closer
//    than twice the largest deviation between the dtypes at that step (only
//    then can the rounding reorder them). After a different pick the
//    contexts differ and later tokens prove nothing, so at least
//    kMinAgreedSteps steps must agree before it;
//  - generic against fused f32 plans: both are fp32 references, and fusions
//    only move the storage roundings, which f32 does not have; their logits
//    agree to kF32Tolerance.
#include "runtime/Engine.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cuda/CudaPlanCheck.h"
#include "tests/unit/engine/CompilePlan.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace strata;

namespace {

const char *kModels[] = {"tiny-llama.yaml", "tiny-qwen3.yaml",
                         "tiny-mistral.yaml", "tiny-gemma-sliding.yaml",
                         "tiny-minimax.yaml"};

// Measured on these models and prompt: the f32 logits differ from the bf16
// ones by at most 1.9% of the row's largest |logit| (tiny-minimax; 0.7-1.3%
// for the others). bf16 keeps 8 significant bits, so each weight and stored
// activation is off by up to 2^-9 (0.2%), and a few layers add that up. 3%
// is also what the GPU tests allow between two bf16 backends. A wrong
// element width reads garbage (NaN, or logits tens of percent off), but the
// random tiny models' logits depend little on attention: copying only half
// of each V row into the cache stays within 3%. The generic-against-fused
// check below and the reference kernels' unit tests catch such slips.
constexpr double kBf16Tolerance = 3e-2;
// The same fp32 arithmetic in the same order, stored unrounded: measured
// bit-identical. 1e-6 leaves room for a fused kernel that sums in another
// order, not for a different computation.
constexpr double kF32Tolerance = 1e-6;
constexpr int kSteps = 24;
// Half the steps: on these prompts the free runs agree for 23 or 24 of 24.
constexpr int kMinAgreedSteps = 12;

/// Longer than the sliding windows (16) of the sliding models, so that the
/// windows cut in during the prompt and the generation.
std::vector<int32_t> prompt() {
  std::vector<int32_t> ids;
  for (int i = 0; i < 21; ++i)
    ids.push_back((i * 53 + 7) % 500);
  return ids;
}

plan::Plan compile(const std::string &model, bool fused, DType dtype) {
  return testing::compilePlan(model, 256, fused, 0, dtype);
}

int64_t argmax(const std::vector<float> &row) {
  return std::max_element(row.begin(), row.end()) - row.begin();
}

/// Largest |logit| of a row.
double scaleOf(const std::vector<float> &row) {
  double scale = 1e-30;
  for (float x : row)
    scale = std::max(scale, double(std::abs(x)));
  return scale;
}

/// Largest |a - b|.
double largestDifference(const std::vector<float> &a,
                         const std::vector<float> &b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

/// Largest |a - b| relative to the largest |b|.
double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  return largestDifference(a, b) / scaleOf(b);
}

bool allFinite(const std::vector<float> &row) {
  return std::all_of(row.begin(), row.end(),
                     [](float x) { return std::isfinite(x); });
}

/// The engine's greedy generation of kSteps tokens after the prompt.
std::vector<int32_t> engineGreedy(const plan::Plan &plan) {
  std::string error;
  auto engine = Engine::create(plan, EngineOptions{}, error);
  INFO(error);
  REQUIRE(engine);
  GenerationRequest request;
  request.prompt = prompt();
  request.maxNewTokens = kSteps;
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  REQUIRE(engine->generate({request}, results, timings, error));
  CHECK(allFinite(results[0].lastLogits));
  return results[0].tokens;
}

/// The logits of every step of one sequence: the prompt in one step, then
/// one token per step, fed from `tokens` (teacher forcing; the last one is
/// not fed). Steps run the plan's `forward` program, or `prefill` and then
/// `decode`, on the CPU executor over a paged cache.
std::vector<std::vector<float>> stepLogits(const plan::Plan &plan,
                                           const std::vector<int32_t> &tokens) {
  auto program = [&](const char *phase) {
    for (const plan::Program &p : plan.programs)
      if (p.phase == "forward" || p.phase == phase)
        return &p;
    FAIL("the plan has no '" << phase << "' program");
    return static_cast<const plan::Program *>(nullptr);
  };
  WeightStore weights = WeightStore::random(plan);
  const int32_t blockSize =
      int32_t(plan.kvCache.blockSize ? plan.kvCache.blockSize : 16);
  KvBlockPool pool(64, blockSize);
  pool.addSequence(0);
  CpuCaches caches = CpuCaches::create(plan, 64, 1);
  CpuExecutor prefill(plan, *program("prefill"), weights);
  CpuExecutor decode(plan, *program("decode"), weights);

  std::vector<std::vector<float>> rows;
  std::vector<int32_t> feed = prompt();
  int64_t cached = 0;
  for (size_t step = 0; step < tokens.size(); ++step) {
    StepInputs in;
    in.tokenIds = feed;
    for (size_t t = 0; t < feed.size(); ++t)
      in.positions.push_back(int32_t(cached + t));
    in.cuQLens = {0, int32_t(feed.size())};
    in.kvLens = {int32_t(cached + feed.size())};
    std::string error;
    REQUIRE(pool.append(0, int64_t(feed.size()), in.slotMapping, error));
    in.blockTables = pool.blockTable(0);
    in.maxBlocksPerSeq = int64_t(in.blockTables.size());
    in.stateSlots = {0};
    std::vector<float> logits;
    kernels::Status status =
        (step == 0 ? prefill : decode).run(in, caches, logits);
    INFO(status.message());
    REQUIRE(status.ok());
    REQUIRE(int64_t(logits.size()) == plan.vocabSize);
    rows.push_back(std::move(logits));
    cached += int64_t(feed.size());
    feed = {tokens[step]};
  }
  return rows;
}

} // namespace

TEST_CASE("f32 models generate what their bf16 versions generate to bf16 "
          "precision") {
  for (bool fused : {false, true})
    for (const char *model : kModels) {
      INFO(model << (fused ? " (fused)" : " (generic)"));
      plan::Plan f32 = compile(model, fused, DType::F32);
      plan::Plan bf16 = compile(model, fused, DType::BF16);
      REQUIRE(f32.weights.front().dtype == plan::DType::F32);
      REQUIRE(bf16.weights.front().dtype == plan::DType::BF16);

      const std::vector<int32_t> tokens16 = engineGreedy(bf16);
      const std::vector<int32_t> tokens32 = engineGreedy(f32);
      REQUIRE(tokens16.size() == size_t(kSteps));
      REQUIRE(tokens32.size() == size_t(kSteps));
      const auto rows16 = stepLogits(bf16, tokens16);
      const auto rows32 = stepLogits(f32, tokens16);

      int agreed = 0;
      bool sameContext = true; // both engines have been fed the same tokens
      for (int k = 0; k < kSteps; ++k) {
        INFO("step " << k);
        REQUIRE(allFinite(rows32[k]));
        REQUIRE(allFinite(rows16[k]));
        CHECK(relativeError(rows32[k], rows16[k]) < kBf16Tolerance);
        // The step-by-step runs are the engines' own computations.
        CHECK(argmax(rows16[k]) == tokens16[k]);
        if (!sameContext)
          continue;
        CHECK(argmax(rows32[k]) == tokens32[k]);
        if (tokens32[k] == tokens16[k]) {
          ++agreed;
          continue;
        }
        // A different pick is a near-tie: the step's own deviation between
        // the dtypes must be large enough to reorder the two tokens.
        const double gap = double(rows16[k][size_t(tokens16[k])]) -
                           double(rows16[k][size_t(tokens32[k])]);
        const double deviation = largestDifference(rows32[k], rows16[k]);
        INFO("bf16 picks " << tokens16[k] << ", f32 " << tokens32[k]
                           << "; bf16 gap " << gap << ", deviation "
                           << deviation);
        CHECK(gap <= 2 * deviation);
        sameContext = false;
      }
      CHECK(agreed >= kMinAgreedSteps);
    }
}

TEST_CASE("generic and fused f32 plans agree to fp32 precision") {
  for (const char *model : kModels) {
    INFO(model);
    plan::Plan generic = compile(model, false, DType::F32);
    plan::Plan fused = compile(model, true, DType::F32);
    const std::vector<int32_t> tokens = engineGreedy(generic);
    CHECK(engineGreedy(fused) == tokens);
    const auto rowsGeneric = stepLogits(generic, tokens);
    const auto rowsFused = stepLogits(fused, tokens);
    for (int k = 0; k < kSteps; ++k) {
      INFO("step " << k);
      CHECK(relativeError(rowsFused[k], rowsGeneric[k]) <= kF32Tolerance);
    }
  }
}

TEST_CASE("the CUDA backend refuses f32 plans before touching a device") {
  plan::Plan bf16 = compile("tiny-llama.yaml", true, DType::BF16);
  CHECK(cudaDTypeRefusal(bf16).empty());
  plan::Plan f16 = compile("tiny-minimax.yaml", true, DType::F16);
  CHECK(cudaDTypeRefusal(f16).empty());
  const std::string expected =
      "model 'tiny-llama' stores its activations in f32; the CUDA backend "
      "runs bf16 and f16 models: run it on the CPU backend (--device cpu), "
      "or set 'dtype: bf16' in its model file and compile it again";
  plan::Plan f32 = compile("tiny-llama.yaml", true, DType::F32);
  CHECK(cudaDTypeRefusal(f32) == expected);
  // A linear-attention layer's fp32 state is not what makes a plan f32.
  plan::Plan hybrid = compile("tiny-minimax.yaml", true, DType::F32);
  CHECK_THAT(cudaDTypeRefusal(hybrid),
             Catch::Matchers::StartsWith("model 'tiny-minimax' stores its "
                                         "activations in f32"));

  EngineOptions options;
  options.device = Device::Cuda;
  std::string error;
  CHECK_FALSE(Engine::create(f32, options, error));
#ifdef STRATA_HAVE_CUDA
  // The same message with or without a GPU: no device is queried first.
  CHECK(error == "cuda: " + expected);
#else
  CHECK_THAT(error, Catch::Matchers::Contains("no CUDA support"));
#endif
}

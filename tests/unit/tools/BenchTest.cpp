// The figures `strata bench` derives from its timings: the bytes a decode
// step must move (checked against a hand count on a tiny plan), the
// activations its launches move, the roofline fraction, the repetitions'
// statistics, the prompts, and the fusion ablation's token comparison.
#include "tools/common/Ablation.h"
#include "tools/common/BenchCommand.h"
#include "tools/common/BenchReport.h"
#include "tools/common/DecodeRoofline.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace strata;
using namespace strata::tools;

namespace {

/// Three weights of three dtypes, two softmax layers and one linear layer.
plan::Plan tinyPlan() {
  plan::Plan p;
  p.weights.push_back({"embed", plan::DType::BF16, {512, 64}, {}, {}});
  p.weights.push_back({"proj", plan::DType::F32, {64, 64}, {}, {}});
  p.weights.push_back({"norm", plan::DType::F16, {64}, {}, {}});
  p.kvCache.layers = 2;
  p.kvCache.kvHeads = 2;
  p.kvCache.headDim = 16;
  p.kvCache.blockSize = 16;
  p.kvCache.dtype = plan::DType::BF16;
  p.linearState.layers = 1;
  p.linearState.heads = 4;
  p.linearState.keyDim = 8;
  p.linearState.valueDim = 8;
  return p;
}

} // namespace

TEST_CASE("decode step bytes of a tiny plan match a hand count") {
  // Weights: 512*64*2 + 64*64*4 + 64*2 = 65536 + 16384 + 128 = 82048.
  // KV: 2 layers * (K, V) * 2 heads * 16 dims * 2 bytes = 256 bytes per
  // cached token; 3 sequences at a mean context of 10.5: 8064.
  // Linear state: 4 heads * 8 * 8 * 4 bytes, read and written: 2048 per
  // sequence; 3 sequences: 6144.
  DecodeStepBytes b = decodeStepBytes(tinyPlan(), 3, 10.5);
  CHECK(b.weights == 82048.0);
  CHECK(b.kvCache == 8064.0);
  CHECK(b.linearState == 6144.0);
  CHECK(b.total() == 96256.0);
  CHECK(weightBytes(tinyPlan()) == 82048.0);
  // No program to look into: every weight counts.
  CHECK(decodeWeightBytes(tinyPlan()) == 82048.0);
  CHECK(idealSeconds(96256.0, 4140.0) == Approx(96256.0 / 4.14e12));
}

TEST_CASE("a decode step counts only the weights its launches read") {
  // A decode program whose buffers list all three weights, but whose one
  // launch reads "embed" twice (tied) and "norm": "proj" stands for the
  // unpacked sources a fused plan keeps, which no launch reads.
  plan::Plan p = tinyPlan();
  plan::Program decode;
  decode.phase = "decode";
  for (int32_t w = 0; w < 3; ++w) {
    plan::Buffer b;
    b.name = p.weights[size_t(w)].name;
    b.kind = plan::BufferKind::Weight;
    b.weight = w;
    decode.buffers.push_back(b);
  }
  plan::Launch l;
  l.params = plan::LinearParams{};
  l.inputs = {0, 2, 0};
  decode.launches.push_back(l);
  p.programs.push_back(decode);
  // 65536 (embed) + 128 (norm); the plan still lists 82048 bytes.
  CHECK(decodeWeightBytes(p) == 65664.0);
  CHECK(weightBytes(p) == 82048.0);
  CHECK(decodeStepBytes(p, 1, 1.0).weights == 65664.0);
  // Only the decode program counts when there is one.
  plan::Program prefill = decode;
  prefill.phase = "prefill";
  prefill.launches[0].inputs = {1};
  p.programs.insert(p.programs.begin(), prefill);
  CHECK(decodeWeightBytes(p) == 65664.0);
}

TEST_CASE("a plan without softmax or linear layers reads weights only") {
  plan::Plan p = tinyPlan();
  p.kvCache = {};
  p.linearState = {};
  DecodeStepBytes b = decodeStepBytes(p, 8, 100.0);
  CHECK(b.kvCache == 0.0);
  CHECK(b.linearState == 0.0);
  CHECK(b.total() == 82048.0);
}

TEST_CASE("repetitions give the mean and the sample standard deviation") {
  Stats s = meanAndStddev({2, 4, 4, 4, 5, 5, 7, 9});
  CHECK(s.mean == 5.0);
  CHECK(s.stddev == Approx(std::sqrt(32.0 / 7.0)));
  Stats one = meanAndStddev({3.5});
  CHECK(one.mean == 3.5);
  CHECK(one.stddev == 0.0);
}

TEST_CASE("the roofline fraction is the ideal over the measured step time") {
  BenchResult r;
  r.decode = true;
  r.batch = 2;
  r.stepsPerRun = 4;
  r.tokensPerRun = 8;
  r.seconds = {0.4, 0.6}; // 0.125 s per step on average
  r.stepBytes.weights = 0.0625e9;
  // At 1 GB/s the step needs 0.0625 s: half the measured time.
  CHECK(r.stepSeconds() == Approx(0.125));
  CHECK(r.rooflineFraction(1.0) == Approx(0.5));
  std::vector<double> tps = r.tokensPerSecond();
  REQUIRE(tps.size() == 2);
  CHECK(tps[0] == Approx(20.0));
  CHECK(tps[1] == Approx(8.0 / 0.6));
}

TEST_CASE("bench prompts stay in the vocabulary and differ per sequence") {
  std::set<std::vector<int32_t>> seen;
  for (int64_t seq = 0; seq < 32; ++seq) {
    std::vector<int32_t> ids = benchPrompt(seq, 64, 512);
    REQUIRE(ids.size() == 64);
    for (int32_t id : ids) {
      CHECK(id >= 1);
      CHECK(id < 512);
    }
    CHECK(ids == benchPrompt(seq, 64, 512));
    seen.insert(ids);
  }
  CHECK(seen.size() == 32);
}

TEST_CASE("a decode step's activations are the operands its launches move") {
  // tokens = batch = 3 at decode: an input of token ids [tokens] i32 (12
  // bytes), an arena tensor [tokens, 64] bf16 (384 bytes) written by the
  // first launch and read by the second, and the logits [batch, 512] f32
  // (6144 bytes) the second writes. The weight and the sequence table
  // (a handle) are left out.
  plan::Plan p = tinyPlan();
  plan::Program decode;
  decode.phase = "decode";
  auto buffer = [&](plan::BufferKind kind, plan::DType dtype,
                    std::vector<plan::Dim> shape) {
    plan::Buffer b;
    b.name = "b" + std::to_string(decode.buffers.size());
    b.kind = kind;
    b.dtype = dtype;
    b.shape = std::move(shape);
    decode.buffers.push_back(b);
    return int32_t(decode.buffers.size() - 1);
  };
  int32_t ids =
      buffer(plan::BufferKind::Input, plan::DType::I32, {plan::Dim::tokens()});
  decode.buffers[size_t(ids)].role = plan::InputRole::TokenIds;
  int32_t seqs = buffer(plan::BufferKind::Input, plan::DType::I32, {});
  decode.buffers[size_t(seqs)].role = plan::InputRole::Sequences;
  int32_t weight = buffer(plan::BufferKind::Weight, plan::DType::BF16,
                          {plan::Dim::constant(512), plan::Dim::constant(64)});
  decode.buffers[size_t(weight)].weight = 0;
  int32_t hidden = buffer(plan::BufferKind::Arena, plan::DType::BF16,
                          {plan::Dim::tokens(), plan::Dim::constant(64)});
  int32_t logits = buffer(plan::BufferKind::Output, plan::DType::F32,
                          {plan::Dim::batch(), plan::Dim::constant(512)});
  plan::Launch embed;
  embed.params = plan::EmbeddingParams{};
  embed.inputs = {ids, weight};
  embed.outputs = {hidden};
  plan::Launch head;
  head.params = plan::LogitsParams{};
  head.inputs = {hidden, weight, seqs};
  head.outputs = {logits};
  decode.launches = {embed, head};
  p.programs.push_back(decode);
  // ids 12 + hidden 384 (written) + hidden 384 (read) + logits 6144.
  CHECK(decodeActivationBytes(p, 3) == 12.0 + 384.0 * 2 + 6144.0);
  CHECK(decodeLaunches(p) == 2);
  // Without a decode or forward program there is nothing to count.
  CHECK(decodeActivationBytes(tinyPlan(), 3) == 0.0);
  CHECK(decodeLaunches(tinyPlan()) == 0);
}

namespace {

/// A run whose results are `batches` tests of one token list per sequence.
PlanRun runOf(
    std::vector<std::pair<int64_t, std::vector<std::vector<int32_t>>>> tests) {
  PlanRun run;
  for (auto &[batch, tokens] : tests) {
    BenchResult r;
    r.test = "tg4";
    r.decode = true;
    r.batch = batch;
    run.results.push_back(r);
    run.tokens.push_back(tokens);
  }
  return run;
}

} // namespace

TEST_CASE("greedy tokens are compared test by test, sequence by sequence") {
  PlanRun reference = runOf({{1, {{5, 6, 7}}}, {2, {{5, 6, 7}, {9, 9, 9}}}});
  CHECK_FALSE(firstDifference(reference, reference).differs);

  // One token of the second sequence of the batch-2 test.
  PlanRun other = runOf({{1, {{5, 6, 7}}}, {2, {{5, 6, 7}, {9, 8, 9}}}});
  TokenDifference d = firstDifference(other, reference);
  REQUIRE(d.differs);
  CHECK(d.result == 1);
  CHECK(d.sequence == 1);
  CHECK(d.position == 1);
  CHECK(d.token == 8);
  CHECK(d.reference == 9);
  // Per batch size: batch 1 agrees, batch 2 does not.
  CHECK_FALSE(firstDifference(other, reference, 1).differs);
  CHECK(firstDifference(other, reference, 2).differs);

  // A sequence that stopped earlier differs where it ended.
  PlanRun shorter = runOf({{1, {{5, 6}}}, {2, {{5, 6, 7}, {9, 9, 9}}}});
  d = firstDifference(shorter, reference);
  REQUIRE(d.differs);
  CHECK(d.result == 0);
  CHECK(d.position == 2);
  CHECK(d.token == -1);
  CHECK(d.reference == 7);
  // So does a run that lacks a test or a sequence.
  CHECK(firstDifference(runOf({{1, {{5, 6, 7}}}}), reference).differs);
  CHECK(firstDifference(runOf({{1, {{5, 6, 7}}}, {2, {{5, 6, 7}}}}), reference)
            .differs);
}

TEST_CASE("the logit gap of a token is its distance below the best, over "
          "the largest magnitude") {
  const std::vector<float> logits{1.0f, -4.0f, 3.9f, 4.0f, 0.0f};
  CHECK(logitGap(logits, 3) == 0.0);
  CHECK(logitGap(logits, 2) == Approx(0.1 / 4.0));
  CHECK(logitGap(logits, 1) == Approx(2.0));
  // 3.9 is within kNearTieGap of 4.0; 1.0 is not.
  CHECK(logitGap(logits, 2) <= kNearTieGap);
  CHECK(logitGap(logits, 0) > kNearTieGap);
  CHECK(logitGap(std::vector<float>(3, 0.0f), 1) == 0.0);
}

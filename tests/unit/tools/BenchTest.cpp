// The figures `strata bench` derives from its timings: the bytes a decode
// step must move (checked against a hand count on a tiny plan), the
// roofline fraction, the repetitions' statistics, and the prompts.
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

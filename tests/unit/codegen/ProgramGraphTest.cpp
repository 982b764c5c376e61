// The schedule check of a finished program (`strata inspect`) on programs
// that pass validatePlan but could not come from the compiler: it must
// answer with a violation, never overflow, wrap or allocate per declared
// stream. Each case was found by fuzz-plan (tests/fuzz).
#include "codegen/ProgramGraph.h"

#include <catch2/catch.hpp>

#include <cstdint>

using namespace strata;
using namespace strata::sched;

namespace {

plan::Buffer buffer(const std::string &name, plan::BufferKind kind,
                    std::vector<plan::Dim> shape) {
  plan::Buffer b;
  b.name = name;
  b.kind = kind;
  b.dtype = plan::DType::F32;
  b.shape = std::move(shape);
  return b;
}

/// Two launches on one stream: `embed` writes the arena buffer `x` (16
/// floats per token), `attention` reads it and updates layer 0's KV cache.
plan::Program twoLaunches() {
  plan::Program p;
  p.phase = "decode";
  p.numStreams = 1;
  p.arenaBytes = 4096;
  p.buffers = {buffer("ids", plan::BufferKind::Input, {plan::Dim::tokens()}),
               buffer("x", plan::BufferKind::Arena,
                      {plan::Dim::tokens(), plan::Dim::constant(16)}),
               buffer("kv", plan::BufferKind::KvCache, {})};
  plan::Launch embed;
  embed.params = plan::EmbeddingParams{};
  embed.inputs = {0};
  embed.outputs = {1};
  plan::Launch attention;
  attention.params = plan::AttentionParams{};
  attention.inputs = {1, 2};
  attention.outputs = {2};
  p.launches = {embed, attention};
  return p;
}

const plan::Limits kLimits{/*maxTokens=*/8, /*maxBatch=*/1};

} // namespace

TEST_CASE("the two-launch program passes the check") {
  CHECK(checkProgram(twoLaunches(), kLimits) == "");
}

TEST_CASE("a layer that is not a layer index is a violation") {
  for (int64_t layer : {INT64_MAX, int64_t(-1), int64_t(1) << 40}) {
    plan::Program p = twoLaunches();
    plan::AttentionParams params;
    params.layer = layer;
    p.launches[1].params = params;
    CHECK(checkProgram(p, kLimits) ==
          "program 'decode': launch 1 (attention<softmax>) names layer " +
              std::to_string(layer) + ", which is not a layer index");
  }
}

TEST_CASE("a program declaring two billion streams is checked over the "
          "streams its launches use") {
  plan::Program p = twoLaunches();
  p.numStreams = 2000000000;
  p.launches[1].stream = 1999999999;
  CHECK(checkProgram(p, kLimits)
            .find("is not ordered by the streams and "
                  "events") != std::string::npos);
  p.events = {{0, 1}};
  CHECK(checkProgram(p, kLimits) == "");
}

TEST_CASE("launches over more streams than the check follows are reported") {
  plan::Program p = twoLaunches();
  p.numStreams = 65;
  p.launches.resize(65, p.launches[0]);
  for (int i = 0; i < 65; ++i)
    p.launches[i].stream = i;
  CHECK(checkProgram(p, kLimits) ==
        "program 'decode': its launches use 65 streams; the check handles "
        "at most 64");
}

TEST_CASE("an arena offset near 2^64 does not wrap past the arena's end") {
  plan::Program p = twoLaunches();
  p.buffers[1].arenaOffset = UINT64_MAX - 255;
  CHECK(checkProgram(p, kLimits) ==
        "program 'decode': buffer 'x' ends beyond the arena");
}

TEST_CASE("a buffer whose byte count overflows is beyond the arena") {
  plan::Program p = twoLaunches();
  p.buffers[1].shape = {plan::Dim::constant(int64_t(1) << 62),
                        plan::Dim::constant(4)};
  CHECK(checkProgram(p, kLimits) ==
        "program 'decode': buffer 'x' ends beyond the arena");
}

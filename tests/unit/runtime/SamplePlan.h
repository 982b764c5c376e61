// A small, valid decode program for the plan tests: token embedding, a
// packed QKV projection, rope + KV write on a second stream, paged decode
// attention and the logits, with the views a compiled plan has.
#ifndef STRATA_TESTS_UNIT_RUNTIME_SAMPLEPLAN_H
#define STRATA_TESTS_UNIT_RUNTIME_SAMPLEPLAN_H

#include "runtime/plan/Plan.h"

namespace strata::test {

inline plan::Plan samplePlan() {
  using namespace strata::plan;
  Plan plan;
  plan.modelName = "tiny";
  plan.weightSeed = 42;
  plan.vocabSize = 512;
  plan.maxPositions = 4096;
  plan.limits = {256, 8};
  plan.kvCache = {2, 2, 32, 16, DType::BF16};
  plan.linearState = {};
  plan.weights = {
      {"model.embed_tokens.weight", DType::BF16, {512, 256}, {}, {}},
      {"model.layers.0.self_attn.qkv_proj.weight",
       DType::BF16,
       {384, 256},
       {"model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.self_attn.v_proj.weight"},
       {256, 64, 64}}};
  auto dims = [](std::initializer_list<int64_t> rest) {
    std::vector<Dim> d = {Dim::tokens()};
    for (int64_t v : rest)
      d.push_back(Dim::constant(v));
    return d;
  };
  Program p;
  p.phase = "decode";
  p.numStreams = 2;
  p.buffers = {
      {"arg0",
       BufferKind::Input,
       DType::I32,
       {Dim::tokens()},
       0,
       -1,
       -1,
       InputRole::TokenIds},
      {"embed",
       BufferKind::Weight,
       DType::BF16,
       {Dim::constant(512), Dim::constant(256)},
       0,
       0},
      {"h0", BufferKind::Arena, DType::BF16, dims({256}), 0, -1},
      {"qkv_w",
       BufferKind::Weight,
       DType::BF16,
       {Dim::constant(384), Dim::constant(256)},
       0,
       1},
      {"qkv", BufferKind::Arena, DType::BF16, dims({384}), 131072, -1},
      {"qkv.heads", BufferKind::Arena, DType::BF16, dims({12, 32}), 131072, -1,
       4},
      {"arg1",
       BufferKind::Input,
       DType::I32,
       {Dim::tokens()},
       0,
       -1,
       -1,
       InputRole::Positions},
      {"kv", BufferKind::KvCache, DType::BF16, {}, 0, -1},
      {"seqs",
       BufferKind::Input,
       DType::I32,
       {},
       0,
       -1,
       -1,
       InputRole::Sequences},
      {"q", BufferKind::Arena, DType::BF16, dims({8, 32}), 327680, -1},
      {"o", BufferKind::Arena, DType::BF16, dims({8, 32}), 0, -1},
      {"o.rows", BufferKind::Arena, DType::BF16, dims({256}), 0, -1, 10},
      {"logits",
       BufferKind::Output,
       DType::F32,
       {Dim::batch(), Dim::constant(512)},
       0,
       -1}};
  p.arenaBytes = 458752;
  RopeKvWriteParams rope;
  rope.variant = RopeKvVariant::Continuous;
  rope.layer = 0;
  rope.numQHeads = 8;
  rope.numKvHeads = 2;
  rope.rotary.rotaryDim = 32;
  rope.rotary.theta = 500000.0;
  rope.rotary.pairing = RopePairing::Neox;
  rope.rotary.scaling = RopeScaling::None;
  rope.rotary.scalingFactor = 1.0;
  rope.rotary.lowFreqFactor = 1.0;
  rope.rotary.highFreqFactor = 4.0;
  PagedDecodeAttentionParams attention;
  attention.layer = 0;
  attention.scale = 0.17677669529663687;
  attention.maxSplits = 8;
  p.launches = {{EmbeddingParams{}, {0, 1}, {2}, 0},
                {LinearParams{}, {2, 3}, {4}, 0},
                {rope, {5, 6, 7, 8}, {9, 7}, 1},
                {attention, {9, 7, 8}, {10}, 0},
                {LogitsParams{}, {11, 1, 8}, {12}, 0}};
  p.events = {{1, 2}, {2, 3}};
  plan.programs = {p};
  return plan;
}

} // namespace strata::test

#endif // STRATA_TESTS_UNIT_RUNTIME_SAMPLEPLAN_H

// RUN: strata-opt %s -split-input-file -strata-select-attention | FileCheck %s
// RUN: strata-opt %s -split-input-file -strata-select-attention --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Statistics over the cases below: each kernel as often as a case selects
// it, and the two attention ops left generic (not causal; a linear layer
// under a tree of drafts).
// STATS: (S) 12 attentions
// STATS: (S)  2 attentions-left
// STATS: (S)  2 extend-attention
// STATS: (S)  1 lightning-decode
// STATS: (S)  3 lightning-prefill
// STATS: (S)  2 paged-decode-attention
// STATS: (S)  1 prefill-attention
// STATS: (S)  1 tree-attention
// RUN: strata-opt %s -split-input-file -strata-select-attention=max-splits=4 | FileCheck %s --check-prefix=SPLITS
// RUN: strata-opt %s -split-input-file -strata-select-attention=required-only | FileCheck %s --check-prefix=REQUIRED
// RUN: not strata-opt %s -split-input-file -strata-select-attention=split-tokens=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADOPTION

// A bad option is reported once per run, before any function is rewritten.
// BADOPTION: error: strata-select-attention: max-splits and chunk-size must be >= 0, split-tokens > 0; got max-splits=0, chunk-size=0, split-tokens=0
// BADOPTION-NOT: see current operation

// prefill after rope_kv_write packed: k and v are read from the packed
// rotated buffer, not the cache; the q slice goes away.
// CHECK-LABEL: func.func @prefill_packed
// CHECK: %[[R:.*]], %{{.*}} = strata.rope_kv_write packed
// CHECK-NOT: strata.head_slice
// CHECK: strata.prefill_attention %[[R]], %arg2 {num_kv_heads = 1 : i64, num_q_heads = 2 : i64, scale = 1.250000e-01 : f64, sliding_window = 8 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
// REQUIRED-LABEL: func.func @prefill_packed
// REQUIRED: strata.attention softmax
func.func @prefill_packed(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs, %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase prefill>, strata.cache_empty = true} {
  %r, %c1 = strata.rope_kv_write packed %qkv, %pos, %c0, %seqs pairing neox scaling none {layer = 0 : i64, num_kv_heads = 1 : i64, num_q_heads = 2 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x4x32xf16>, tensor<?xi32>, !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %q = strata.head_slice %r {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %o = strata.attention softmax(%q), %c1, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64, sliding_window = 8 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// -----

// prefill without the packed buffer (rope-kv fusion off): attention over
// the cache as an extend of an empty prefix, which is also correct.
// CHECK-LABEL: func.func @prefill_unpacked
// CHECK: strata.extend_attention %arg0, %arg2, %arg1 {layer = 0 : i64, scale = 1.250000e-01 : f64, sliding_window = 8 : i64}
func.func @prefill_unpacked(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase prefill>, strata.cache_empty = true} {
  %o = strata.attention softmax(%q), %c, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64, sliding_window = 8 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// -----

// extend: new tokens over the paged cache and causally among themselves.
// CHECK-LABEL: func.func @extend
// CHECK: strata.extend_attention %arg0, %arg2, %arg1 {layer = 0 : i64, scale = 1.250000e-01 : f64, sliding_window = 8 : i64}
// CHECK-NOT: strata.attention
func.func @extend(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase extend>, strata.cache_empty = false} {
  %o = strata.attention softmax(%q), %c, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64, sliding_window = 8 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// -----

// decode: paged decode attention; max_splits from the function's context
// length (8192 / 512 = 16, copied from the module by
// strata-specialize-phase) unless the option sets it.
// CHECK-LABEL: func.func @decode
// CHECK: strata.paged_decode_attention %arg0, %arg2, %arg1 {layer = 0 : i64, max_splits = 16 : i64, scale = 1.250000e-01 : f64}
// SPLITS-LABEL: func.func @decode
// SPLITS: max_splits = 4 : i64
// REQUIRED-LABEL: func.func @decode
// REQUIRED: strata.attention softmax
func.func @decode(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false, strata.tokens_per_seq = 1, strata.max_positions = 8192 : i64} {
  %o = strata.attention softmax(%q), %c, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// -----

// The pass reads only the function it runs on: a context length stated on
// the module alone (2048 would give 4 splits) leaves the default of 16.
// CHECK-LABEL: func.func @decode_module_fact
// CHECK: max_splits = 16 : i64
module attributes {strata.max_positions = 2048 : i64} {
func.func @decode_module_fact(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false, strata.tokens_per_seq = 1} {
  %o = strata.attention softmax(%q), %c, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}
}

// -----

// verify: tree attention with the function's parent ids. required-only
// selects it too: the generic op has no tree mask.
// CHECK-LABEL: func.func @verify
// CHECK: strata.tree_attention %arg0, %arg3, %arg1, %arg2 {layer = 0 : i64, scale = 1.250000e-01 : f64, sliding_window = 8 : i64}
// REQUIRED-LABEL: func.func @verify
// REQUIRED: strata.tree_attention
func.func @verify(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %parents: tensor<?xi32> {strata.parent_ids}, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase verify>, strata.cache_empty = false, strata.draft = "tree"} {
  %o = strata.attention softmax(%q), %c, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64, sliding_window = 8 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// -----

// Linear attention, prefill and extend: lightning prefill with the model's
// chunk size (the function's strata.linear_chunk_size); decode: lightning
// decode.
// CHECK-LABEL: func.func @linear_prefill
// CHECK: strata.lightning_prefill %arg0, %arg0, %arg0, %arg2, %arg1 {chunk_size = 32 : i64, decay_slopes = array<f64: 5.000000e-01, 2.500000e-01>, layer = 0 : i64}
// CHECK-LABEL: func.func @linear_extend
// CHECK: strata.lightning_prefill
// CHECK-LABEL: func.func @linear_decode
// CHECK: strata.lightning_decode %arg0, %arg0, %arg0, %arg2, %arg1 {decay_slopes = array<f64: 5.000000e-01, 2.500000e-01>, layer = 0 : i64}
// REQUIRED-LABEL: func.func @linear_prefill
// REQUIRED: strata.attention linear
func.func @linear_prefill(%q: tensor<?x2x16xf16>, %seqs: !strata.seqs, %s0: !strata.linear_state<1, 2, 16, 16, f32>) -> (tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>)
    attributes {strata.phase = #strata<phase prefill>, strata.cache_empty = true, strata.linear_chunk_size = 32 : i64} {
  %o, %s1 = strata.attention linear(%q, %q, %q), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
  return %o, %s1 : tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
}
func.func @linear_extend(%q: tensor<?x2x16xf16>, %seqs: !strata.seqs, %s0: !strata.linear_state<1, 2, 16, 16, f32>) -> (tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>)
    attributes {strata.phase = #strata<phase extend>, strata.cache_empty = false, strata.linear_chunk_size = 32 : i64} {
  %o, %s1 = strata.attention linear(%q, %q, %q), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
  return %o, %s1 : tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
}
func.func @linear_decode(%q: tensor<?x2x16xf16>, %seqs: !strata.seqs, %s0: !strata.linear_state<1, 2, 16, 16, f32>) -> (tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>)
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false, strata.tokens_per_seq = 1, strata.linear_chunk_size = 32 : i64} {
  %o, %s1 = strata.attention linear(%q, %q, %q), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
  return %o, %s1 : tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
}

// -----

// verify on a hybrid model: drafts form a chain, which lightning prefill
// processes like any new tokens (default chunk 64 without the fact).
// CHECK-LABEL: func.func @linear_verify_chain
// CHECK: strata.lightning_prefill {{.*}}chunk_size = 64 : i64
func.func @linear_verify_chain(%q: tensor<?x2x16xf16>, %seqs: !strata.seqs, %s0: !strata.linear_state<1, 2, 16, 16, f32>) -> (tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>)
    attributes {strata.phase = #strata<phase verify>, strata.cache_empty = false, strata.draft = "chain"} {
  %o, %s1 = strata.attention linear(%q, %q, %q), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
  return %o, %s1 : tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
}

// -----

// Must not fire: linear attention cannot follow a tree of drafts.
// CHECK-LABEL: func.func @linear_verify_tree
// CHECK: strata.attention linear
func.func @linear_verify_tree(%q: tensor<?x2x16xf16>, %seqs: !strata.seqs, %s0: !strata.linear_state<1, 2, 16, 16, f32>) -> (tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>)
    attributes {strata.phase = #strata<phase verify>, strata.cache_empty = false, strata.draft = "tree"} {
  %o, %s1 = strata.attention linear(%q, %q, %q), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
  return %o, %s1 : tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
}

// -----

// Must not fire: no kernel computes non-causal attention.
// CHECK-LABEL: func.func @not_causal
// CHECK: strata.attention softmax
func.func @not_causal(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.phase = #strata<phase extend>, strata.cache_empty = false} {
  %o = strata.attention softmax(%q), %c, %seqs {layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// -----

// Must not fire: no phase facts.
// CHECK-LABEL: func.func @forward
// CHECK: strata.attention softmax
func.func @forward(%q: tensor<?x2x32xf16>, %seqs: !strata.seqs, %c: !strata.kv_cache<1, 1, 32, 16, f16>) -> tensor<?x2x32xf16>
    attributes {strata.note = 0 : i64} {
  %o = strata.attention softmax(%q), %c, %seqs {causal, layer = 0 : i64, scale = 0.125 : f64, sliding_window = 8 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o : tensor<?x2x32xf16>
}

// RUN: strata-opt %s -split-input-file -strata-fuse-rope-kv | FileCheck %s
// RUN: strata-opt %s -split-input-file -strata-fuse-rope-kv --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Statistics over the cases below: five layers fused (packed in prefill;
// continuous in extend, decode and the QK-norm case; tree in verify), two
// left alone (a norm after the rotation; separate projections, so no
// packed buffer); the function without phase facts is not looked at.
// STATS: (S)  7 kv-appends
// STATS: (S)  2 kv-appends-left
// STATS: (S)  1 qk-norm-folded
// STATS: (S)  3 rope-kv-write-continuous
// STATS: (S)  1 rope-kv-write-packed
// STATS: (S)  1 rope-kv-write-tree
// Input: softmax layers after strata-fuse-qkv (Hq = 2, Hkv = 1, D = 32), q, k
// and v sliced from the packed buffer %qkv.

// prefill (cache empty): the packed variant rotates q and k in place and
// returns the whole buffer; q for the unfused attention is sliced from it.
// CHECK-LABEL: func.func @prefill
// CHECK: %[[R:.*]], %[[C:.*]] = strata.rope_kv_write packed %arg0, %arg1, %arg3, %arg2 pairing neox scaling none {layer = 0 : i64, num_kv_heads = 1 : i64, num_q_heads = 2 : i64, rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x4x32xf16>, tensor<?xi32>, !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
// CHECK: %[[Q:.*]] = strata.head_slice %[[R]] {first = 0 : i64, num_heads = 2 : i64}
// CHECK: strata.attention softmax(%[[Q]]), %[[C]]
// CHECK-NOT: strata.rope
// CHECK-NOT: strata.kv_append
func.func @prefill(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase prefill>, strata.cache_empty = true} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// extend: the continuous variant writes q to its own buffer.
// CHECK-LABEL: func.func @extend
// CHECK: %[[Q:.*]], %[[C:.*]] = strata.rope_kv_write continuous %arg0, {{.*}} -> tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
// CHECK: strata.attention softmax(%[[Q]]), %[[C]]
// CHECK-NOT: strata.kv_append
func.func @extend(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase extend>, strata.cache_empty = false} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// decode: continuous as well (one token per sequence, KV at its end).
// CHECK-LABEL: func.func @decode
// CHECK: strata.rope_kv_write continuous
// CHECK-NOT: strata.rope {{.*}}pairing
func.func @decode(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false, strata.tokens_per_seq = 1} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// verify: the tree variant; positions are the tree nodes' position ids.
// CHECK-LABEL: func.func @verify
// CHECK: %[[Q:.*]], %{{.*}} = strata.rope_kv_write tree %arg0, %arg1, {{.*}} -> tensor<?x2x32xf16>
// CHECK: strata.attention softmax(%[[Q]])
func.func @verify(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs, %parents: tensor<?xi32> {strata.parent_ids},
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase verify>, strata.cache_empty = false, strata.draft = "tree"} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// QK-norm before the rotation (Qwen3) is folded in as the op's q_norm and
// k_norm operands, which the kernel applies before rotating.
// CHECK-LABEL: func.func @qk_norm
// CHECK-DAG: %[[QN:.*]] = strata.weight "q_norm"
// CHECK-DAG: %[[KN:.*]] = strata.weight "k_norm"
// CHECK: strata.rope_kv_write continuous {{.*}} q_norm(%[[QN]] : tensor<32xf16>) k_norm(%[[KN]] : tensor<32xf16>) {{{.*}}qk_norm_eps = 9.9999999999999995E-7 : f64
// CHECK-NOT: strata.head_norm
func.func @qk_norm(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false, strata.tokens_per_seq = 1} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %wqn = strata.weight "q_norm" : tensor<32xf16>
  %wkn = strata.weight "k_norm" : tensor<32xf16>
  %qn = strata.head_norm %q, %wqn {eps = 1.0e-06 : f64} : tensor<?x2x32xf16>, tensor<32xf16>
  %kn = strata.head_norm %k, %wkn {eps = 1.0e-06 : f64} : tensor<?x1x32xf16>, tensor<32xf16>
  %qr = strata.rope %qn, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %kn, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Must not fire: a norm after the rotation. The op would normalize before
// rotating, so fusing would change the order; everything stays as written.
// CHECK-LABEL: func.func @norm_after_rope
// CHECK-NOT: strata.rope_kv_write
// CHECK: %[[QR:.*]] = strata.rope %{{.*}}, %arg1
// CHECK: %[[KR:.*]] = strata.rope %{{.*}}, %arg1
// CHECK: strata.head_norm %[[QR]]
// CHECK: strata.head_norm %[[KR]]
// CHECK: strata.kv_append
func.func @norm_after_rope(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false, strata.tokens_per_seq = 1} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %wqn = strata.weight "q_norm" : tensor<32xf16>
  %wkn = strata.weight "k_norm" : tensor<32xf16>
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %qn = strata.head_norm %qr, %wqn {eps = 1.0e-06 : f64} : tensor<?x2x32xf16>, tensor<32xf16>
  %kn = strata.head_norm %kr, %wkn {eps = 1.0e-06 : f64} : tensor<?x1x32xf16>, tensor<32xf16>
  %c1 = strata.kv_append %kn, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qn), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Must not fire: no phase facts (the generic forward).
// CHECK-LABEL: func.func @forward
// CHECK-NOT: strata.rope_kv_write
func.func @forward(%qkv: tensor<?x4x32xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
    %c0: !strata.kv_cache<1, 1, 32, 16, f16>) -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.note = 0 : i64} {
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x4x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 2 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %v = strata.head_slice %qkv {first = 3 : i64, num_heads = 1 : i64} : tensor<?x4x32xf16> -> tensor<?x1x32xf16>
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Must not fire: q, k and v come from separate projections
// (strata-fuse-qkv disabled), so there is no packed buffer to read.
// CHECK-LABEL: func.func @unpacked
// CHECK-NOT: strata.rope_kv_write
// CHECK: strata.kv_append
func.func @unpacked(%q: tensor<?x2x32xf16>, %k: tensor<?x1x32xf16>, %v: tensor<?x1x32xf16>,
    %pos: tensor<?xi32>, %seqs: !strata.seqs, %c0: !strata.kv_cache<1, 1, 32, 16, f16>)
    -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase extend>, strata.cache_empty = false} {
  %qr = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %k, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

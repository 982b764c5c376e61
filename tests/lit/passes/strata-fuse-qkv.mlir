// RUN: strata-opt %s -split-input-file -strata-fuse-qkv | FileCheck %s
// RUN: strata-opt %s -split-input-file -strata-fuse-qkv --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Statistics over the cases below: three softmax layers with phase facts
// (the function without them is not looked at), two packed; the
// different-input case is seen and left alone.
// STATS: (S) 3 kv-appends
// STATS: (S) 1 ops-added
// STATS: (S) 0 ops-removed
// STATS: (S) 2 qkv-packed

// One softmax layer (Hq = 2, Hkv = 1, D = 32): the three projections of %x
// become one GEMM onto the load-time concatenation q, k, v (the operand
// order records the packing); the packed [T, 4, 32] buffer is sliced back
// into q, k and v for the consumers, which are unchanged.
// CHECK-LABEL: func.func @decode
// CHECK-DAG: %[[WQ:.*]] = strata.weight "q"
// CHECK-DAG: %[[WK:.*]] = strata.weight "k"
// CHECK-DAG: %[[WV:.*]] = strata.weight "v"
// CHECK: %[[W:.*]] = strata.concat_weights %[[WQ]], %[[WK]], %[[WV]] {axis = 0 : i64} : tensor<64x64xf16>, tensor<32x64xf16>, tensor<32x64xf16> -> tensor<128x64xf16>
// CHECK: %[[P:.*]] = strata.linear %{{.*}}, %[[W]] : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
// CHECK: %[[QKV:.*]] = strata.split_heads %[[P]] {num_heads = 4 : i64} : tensor<?x128xf16> -> tensor<?x4x32xf16>
// CHECK: %[[Q:.*]] = strata.head_slice %[[QKV]] {first = 0 : i64, num_heads = 2 : i64}
// CHECK: %[[K:.*]] = strata.head_slice %[[QKV]] {first = 2 : i64, num_heads = 1 : i64}
// CHECK: %[[V:.*]] = strata.head_slice %[[QKV]] {first = 3 : i64, num_heads = 1 : i64}
// CHECK: %[[QR:.*]] = strata.rope %[[Q]]
// CHECK: %[[KR:.*]] = strata.rope %[[K]]
// CHECK: strata.kv_append %[[KR]], %[[V]]
// CHECK: strata.attention softmax(%[[QR]])
func.func @decode(%x: tensor<?x64xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
                  %c0: !strata.kv_cache<1, 1, 32, 16, f16>)
    -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false} {
  %wq = strata.weight "q" : tensor<64x64xf16>
  %q = strata.linear %x, %wq : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  %wk = strata.weight "k" : tensor<32x64xf16>
  %k = strata.linear %x, %wk : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
  %wv = strata.weight "v" : tensor<32x64xf16>
  %v = strata.linear %x, %wv : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
  %qh = strata.split_heads %q {num_heads = 2 : i64} : tensor<?x64xf16> -> tensor<?x2x32xf16>
  %kh = strata.split_heads %k {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %vh = strata.split_heads %v {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %qr = strata.rope %qh, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %kh, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %vh, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Projections with biases (Qwen2-style qkv_bias) and QK-norm between the
// split and the rotation: the biases are packed like the weights, and the
// norms read the slices.
// CHECK-LABEL: func.func @prefill
// CHECK: %[[W:.*]] = strata.concat_weights {{.*}} -> tensor<128x64xf16>
// CHECK: %[[B:.*]] = strata.concat_weights %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<64xf16>, tensor<32xf16>, tensor<32xf16> -> tensor<128xf16>
// CHECK: strata.linear %{{.*}}, %[[W]], %[[B]]
// CHECK: %[[Q:.*]] = strata.head_slice {{.*}} {first = 0 : i64, num_heads = 2 : i64}
// CHECK: %[[K:.*]] = strata.head_slice {{.*}} {first = 2 : i64, num_heads = 1 : i64}
// CHECK: strata.head_norm %[[Q]]
// CHECK: strata.head_norm %[[K]]
func.func @prefill(%x: tensor<?x64xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
                   %c0: !strata.kv_cache<1, 1, 32, 16, f16>)
    -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase prefill>, strata.cache_empty = true} {
  %wq = strata.weight "q" : tensor<64x64xf16>
  %bq = strata.weight "q.bias" : tensor<64xf16>
  %q = strata.linear %x, %wq, %bq : tensor<?x64xf16>, tensor<64x64xf16>, tensor<64xf16> -> tensor<?x64xf16>
  %wk = strata.weight "k" : tensor<32x64xf16>
  %bk = strata.weight "k.bias" : tensor<32xf16>
  %k = strata.linear %x, %wk, %bk : tensor<?x64xf16>, tensor<32x64xf16>, tensor<32xf16> -> tensor<?x32xf16>
  %wv = strata.weight "v" : tensor<32x64xf16>
  %bv = strata.weight "v.bias" : tensor<32xf16>
  %v = strata.linear %x, %wv, %bv : tensor<?x64xf16>, tensor<32x64xf16>, tensor<32xf16> -> tensor<?x32xf16>
  %qh = strata.split_heads %q {num_heads = 2 : i64} : tensor<?x64xf16> -> tensor<?x2x32xf16>
  %kh = strata.split_heads %k {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %vh = strata.split_heads %v {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %nw = strata.weight "norm" : tensor<32xf16>
  %qn = strata.head_norm %qh, %nw {eps = 1.0e-06 : f64} : tensor<?x2x32xf16>, tensor<32xf16>
  %kn = strata.head_norm %kh, %nw {eps = 1.0e-06 : f64} : tensor<?x1x32xf16>, tensor<32xf16>
  %qr = strata.rope %qn, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x2x32xf16>, tensor<?xi32>
  %kr = strata.rope %kn, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x1x32xf16>, tensor<?xi32>
  %c1 = strata.kv_append %kr, %vh, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qr), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Must not fire: q projects a different input than k and v.
// CHECK-LABEL: func.func @other_input
// CHECK-NOT: strata.concat_weights
// CHECK-NOT: strata.head_slice
func.func @other_input(%x: tensor<?x64xf16>, %y: tensor<?x64xf16>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
                       %c0: !strata.kv_cache<1, 1, 32, 16, f16>)
    -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>)
    attributes {strata.phase = #strata<phase extend>, strata.cache_empty = false} {
  %wq = strata.weight "q" : tensor<64x64xf16>
  %q = strata.linear %y, %wq : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  %wk = strata.weight "k" : tensor<32x64xf16>
  %k = strata.linear %x, %wk : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
  %wv = strata.weight "v" : tensor<32x64xf16>
  %v = strata.linear %x, %wv : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
  %qh = strata.split_heads %q {num_heads = 2 : i64} : tensor<?x64xf16> -> tensor<?x2x32xf16>
  %kh = strata.split_heads %k {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %vh = strata.split_heads %v {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %c1 = strata.kv_append %kh, %vh, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qh), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Must not fire: the generic forward has no phase facts.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: strata.concat_weights
func.func @forward(%x: tensor<?x64xf16>, %seqs: !strata.seqs,
                   %c0: !strata.kv_cache<1, 1, 32, 16, f16>)
    -> (tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>) {
  %wq = strata.weight "q" : tensor<64x64xf16>
  %q = strata.linear %x, %wq : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  %wk = strata.weight "k" : tensor<32x64xf16>
  %k = strata.linear %x, %wk : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
  %wv = strata.weight "v" : tensor<32x64xf16>
  %v = strata.linear %x, %wv : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
  %qh = strata.split_heads %q {num_heads = 2 : i64} : tensor<?x64xf16> -> tensor<?x2x32xf16>
  %kh = strata.split_heads %k {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %vh = strata.split_heads %v {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
  %c1 = strata.kv_append %kh, %vh, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
  %o = strata.attention softmax(%qh), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x2x32xf16>), !strata.kv_cache<1, 1, 32, 16, f16> -> tensor<?x2x32xf16>
  return %o, %c1 : tensor<?x2x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
}

// -----

// Must not fire: a linear-attention layer (SiLU on each projection before
// the head split, no KV append).
// CHECK-LABEL: func.func @linear_layer
// CHECK-NOT: strata.concat_weights
// CHECK-COUNT-3: strata.silu
func.func @linear_layer(%x: tensor<?x32xf16>, %seqs: !strata.seqs,
                        %s0: !strata.linear_state<1, 2, 16, 16, f32>)
    -> (tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>)
    attributes {strata.phase = #strata<phase decode>, strata.cache_empty = false} {
  %wq = strata.weight "q" : tensor<32x32xf16>
  %q = strata.linear %x, %wq : tensor<?x32xf16>, tensor<32x32xf16> -> tensor<?x32xf16>
  %wk = strata.weight "k" : tensor<32x32xf16>
  %k = strata.linear %x, %wk : tensor<?x32xf16>, tensor<32x32xf16> -> tensor<?x32xf16>
  %wv = strata.weight "v" : tensor<32x32xf16>
  %v = strata.linear %x, %wv : tensor<?x32xf16>, tensor<32x32xf16> -> tensor<?x32xf16>
  %qs = strata.silu %q : tensor<?x32xf16>
  %ks = strata.silu %k : tensor<?x32xf16>
  %vs = strata.silu %v : tensor<?x32xf16>
  %qh = strata.split_heads %qs {num_heads = 2 : i64} : tensor<?x32xf16> -> tensor<?x2x16xf16>
  %kh = strata.split_heads %ks {num_heads = 2 : i64} : tensor<?x32xf16> -> tensor<?x2x16xf16>
  %vh = strata.split_heads %vs {num_heads = 2 : i64} : tensor<?x32xf16> -> tensor<?x2x16xf16>
  %o, %s1 = strata.attention linear(%qh, %kh, %vh), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
  return %o, %s1 : tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
}

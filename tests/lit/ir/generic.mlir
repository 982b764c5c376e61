// RUN: strata-opt %s | strata-opt | FileCheck %s
// Round trip of every generic op through the custom assembly: printing and
// re-parsing must give back the same IR.

// CHECK-LABEL: func @params_and_embedding
func.func @params_and_embedding(%ids: tensor<?xi32>) -> tensor<?x64xf16> {
  // CHECK: %[[T:.*]] = strata.weight "model.embed_tokens.weight" : tensor<1000x64xf16>
  %table = strata.weight "model.embed_tokens.weight" : tensor<1000x64xf16>
  // CHECK: strata.embedding %{{.*}}, %[[T]] : tensor<?xi32>, tensor<1000x64xf16> -> tensor<?x64xf16>
  %h = strata.embedding %ids, %table : tensor<?xi32>, tensor<1000x64xf16> -> tensor<?x64xf16>
  return %h : tensor<?x64xf16>
}

// CHECK-LABEL: func @norms_and_projections
func.func @norms_and_projections(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>,
    %wq: tensor<128x64xbf16>, %wk: tensor<32x64xbf16>, %bk: tensor<32xbf16>,
    %qn: tensor<32xbf16>) -> (tensor<?x64xbf16>, tensor<?x128xbf16>, tensor<?x32xbf16>, tensor<?x4x32xbf16>) {
  // CHECK: strata.rms_norm %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : tensor<?x64xbf16>, tensor<64xbf16>
  %n = strata.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xbf16>, tensor<64xbf16>
  // CHECK: strata.linear %{{.*}}, %{{.*}} : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16>
  %q = strata.linear %n, %wq : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xbf16>
  // CHECK: strata.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16> -> tensor<?x32xbf16>
  %k = strata.linear %n, %wk, %bk : tensor<?x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16> -> tensor<?x32xbf16>
  // CHECK: strata.split_heads %{{.*}} {num_heads = 4 : i64} : tensor<?x128xbf16> -> tensor<?x4x32xbf16>
  %qh = strata.split_heads %q {num_heads = 4 : i64} : tensor<?x128xbf16> -> tensor<?x4x32xbf16>
  // CHECK: strata.head_norm %{{.*}}, %{{.*}} {eps = 9.9999999999999995E-7 : f64} : tensor<?x4x32xbf16>, tensor<32xbf16>
  %qhn = strata.head_norm %qh, %qn {eps = 1.0e-06 : f64} : tensor<?x4x32xbf16>, tensor<32xbf16>
  // CHECK: strata.merge_heads %{{.*}} : tensor<?x4x32xbf16> -> tensor<?x128xbf16>
  %qm = strata.merge_heads %qhn : tensor<?x4x32xbf16> -> tensor<?x128xbf16>
  return %n, %qm, %k, %qhn : tensor<?x64xbf16>, tensor<?x128xbf16>, tensor<?x32xbf16>, tensor<?x4x32xbf16>
}

// CHECK-LABEL: func @rope
func.func @rope(%q: tensor<?x4x32xf16>, %pos: tensor<?xi32>) -> (tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>) {
  // CHECK: strata.rope %{{.*}}, %{{.*}} pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x4x32xf16>, tensor<?xi32>
  %a = strata.rope %q, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x4x32xf16>, tensor<?xi32>
  // CHECK: strata.rope %{{.*}}, %{{.*}} pairing gptj scaling linear {rotary_dim = 16 : i64, scaling_factor = 2.000000e+00 : f64, theta = 1.000000e+04 : f64}
  %b = strata.rope %q, %pos pairing gptj scaling linear {rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling_factor = 2.0 : f64} : tensor<?x4x32xf16>, tensor<?xi32>
  // Default-valued attributes (low_freq_factor 1, high_freq_factor 4) are elided.
  // CHECK: strata.rope %{{.*}}, %{{.*}} pairing neox scaling llama3 {original_max_positions = 8192 : i64, rotary_dim = 32 : i64, scaling_factor = 8.000000e+00 : f64, theta = 5.000000e+05 : f64}
  %c = strata.rope %q, %pos pairing neox scaling llama3 {rotary_dim = 32 : i64, theta = 5.0e+05 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_positions = 8192 : i64} : tensor<?x4x32xf16>, tensor<?xi32>
  return %a, %b, %c : tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>
}

// CHECK-LABEL: func @softmax_attention
func.func @softmax_attention(%q: tensor<?x4x32xf16>, %k: tensor<?x2x32xf16>,
    %v: tensor<?x2x32xf16>, %c0: !strata.kv_cache<2, 2, 32, 16, f16>,
    %seqs: !strata.seqs) -> (tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>) {
  // CHECK: %[[C1:.*]] = strata.kv_append %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {layer = 1 : i64} : tensor<?x2x32xf16>, tensor<?x2x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  %c1 = strata.kv_append %k, %v, %c0, %seqs {layer = 1 : i64} : tensor<?x2x32xf16>, tensor<?x2x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  // CHECK: strata.attention softmax(%{{.*}}), %[[C1]], %{{.*}} {causal, layer = 1 : i64, scale = 0.17677669529663687 : f64, sliding_window = 4096 : i64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  %o = strata.attention softmax(%q), %c1, %seqs {causal, layer = 1 : i64, scale = 0.17677669529663687 : f64, sliding_window = 4096 : i64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return %o, %c1 : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
}

// CHECK-LABEL: func @linear_attention
func.func @linear_attention(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>,
    %v: tensor<?x2x8xf16>, %s0: !strata.linear_state<1, 2, 16, 8, f32>,
    %seqs: !strata.seqs) -> (tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>) {
  // CHECK: strata.attention linear(%{{.*}}, %{{.*}}, %{{.*}}), %{{.*}}, %{{.*}} {decay_slopes = array<f64: 5.000000e-01, 2.500000e-01>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  %o, %s1 = strata.attention linear(%q, %k, %v), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return %o, %s1 : tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<?x128xf32>, %b: tensor<?x128xf32>) -> tensor<?x128xf32> {
  // CHECK: strata.silu_mul %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %0 = strata.silu_mul %a, %b : tensor<?x128xf32>
  // CHECK: strata.silu %{{.*}} : tensor<?x128xf32>
  %1 = strata.silu %0 : tensor<?x128xf32>
  // CHECK: strata.sigmoid_mul %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %2 = strata.sigmoid_mul %a, %1 : tensor<?x128xf32>
  // CHECK: strata.add %{{.*}}, %{{.*}} : tensor<?x128xf32>
  %3 = strata.add %2, %b : tensor<?x128xf32>
  return %3 : tensor<?x128xf32>
}

// CHECK-LABEL: func @output
func.func @output(%h: tensor<?x64xf16>, %w: tensor<1000x64xf16>, %seqs: !strata.seqs) -> (tensor<?xi32>, tensor<?x1000xf32>) {
  // CHECK: strata.logits %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xf16>, tensor<1000x64xf16> -> tensor<?x1000xf32>
  %l = strata.logits %h, %w, %seqs : tensor<?x64xf16>, tensor<1000x64xf16> -> tensor<?x1000xf32>
  // CHECK: strata.logits %{{.*}}, %{{.*}}, %{{.*}} {all_tokens} : tensor<?x64xf16>, tensor<1000x64xf16> -> tensor<?x1000xf32>
  %all = strata.logits %h, %w, %seqs {all_tokens} : tensor<?x64xf16>, tensor<1000x64xf16> -> tensor<?x1000xf32>
  // CHECK: strata.sample %{{.*}}, %{{.*}} : tensor<?x1000xf32> -> tensor<?xi32>
  %next = strata.sample %l, %seqs : tensor<?x1000xf32> -> tensor<?xi32>
  return %next, %all : tensor<?xi32>, tensor<?x1000xf32>
}

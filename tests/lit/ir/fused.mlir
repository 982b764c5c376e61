// RUN: strata-opt %s | strata-opt | FileCheck %s
// Round trip of every fused op through the custom assembly.

// CHECK-LABEL: func @concat_weights
func.func @concat_weights(%wq: tensor<128x64xf16>, %wk: tensor<64x64xf16>, %wv: tensor<64x64xf16>) -> tensor<256x64xf16> {
  // CHECK: strata.concat_weights %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<128x64xf16>, tensor<64x64xf16>, tensor<64x64xf16> -> tensor<256x64xf16>
  %w = strata.concat_weights %wq, %wk, %wv {axis = 0 : i64} : tensor<128x64xf16>, tensor<64x64xf16>, tensor<64x64xf16> -> tensor<256x64xf16>
  return %w : tensor<256x64xf16>
}

// The three rope_kv_write variants, with and without QK-norm weights.
// CHECK-LABEL: func @rope_kv_write
func.func @rope_kv_write(%qkv: tensor<?x8x32xf16>, %pos: tensor<?xi32>,
    %c0: !strata.kv_cache<2, 2, 32, 16, f16>, %seqs: !strata.seqs,
    %qn: tensor<32xf16>, %kn: tensor<32xf16>) -> (tensor<?x8x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>) {
  // CHECK: strata.rope_kv_write packed %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  %r, %c1 = strata.rope_kv_write packed %qkv, %pos, %c0, %seqs pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  // CHECK: strata.rope_kv_write continuous %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} pairing neox scaling llama3 q_norm(%{{.*}} : tensor<32xf16>) k_norm(%{{.*}} : tensor<32xf16>) {layer = 1 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, original_max_positions = 8192 : i64, qk_norm_eps = 9.9999999999999995E-7 : f64, rotary_dim = 32 : i64, scaling_factor = 8.000000e+00 : f64, theta = 5.000000e+05 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  %q, %c2 = strata.rope_kv_write continuous %qkv, %pos, %c1, %seqs pairing neox scaling llama3 q_norm(%qn : tensor<32xf16>) k_norm(%kn : tensor<32xf16>) {layer = 1 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_norm_eps = 1.0e-06 : f64, rotary_dim = 32 : i64, theta = 5.0e+05 : f64, scaling_factor = 8.0 : f64, original_max_positions = 8192 : i64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  // CHECK: strata.rope_kv_write tree %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} pairing gptj scaling linear {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 16 : i64, scaling_factor = 2.000000e+00 : f64, theta = 1.000000e+04 : f64}
  %t, %c3 = strata.rope_kv_write tree %qkv, %pos, %c2, %seqs pairing gptj scaling linear {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, scaling_factor = 2.0 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return %r, %q, %t, %c3 : tensor<?x8x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
}

// CHECK-LABEL: func @softmax_kernels
func.func @softmax_kernels(%qkv: tensor<?x8x32xf16>, %q: tensor<?x4x32xf16>,
    %c: !strata.kv_cache<2, 2, 32, 16, f16>, %seqs: !strata.seqs,
    %parents: tensor<?xi32>) -> (tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>) {
  // CHECK: strata.prefill_attention %{{.*}}, %{{.*}} {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 0.17677669529663687 : f64, sliding_window = 128 : i64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
  %p = strata.prefill_attention %qkv, %seqs {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 0.17677669529663687 : f64, sliding_window = 128 : i64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
  // CHECK: strata.extend_attention %{{.*}}, %{{.*}}, %{{.*}} {layer = 1 : i64, scale = 0.17677669529663687 : f64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  %e = strata.extend_attention %q, %c, %seqs {layer = 1 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  // CHECK: strata.paged_decode_attention %{{.*}}, %{{.*}}, %{{.*}} {layer = 0 : i64, max_splits = 8 : i64, scale = 0.17677669529663687 : f64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  %d = strata.paged_decode_attention %q, %c, %seqs {layer = 0 : i64, max_splits = 8 : i64, scale = 0.17677669529663687 : f64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  // CHECK: strata.tree_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 64 : i64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>, tensor<?xi32>
  %t = strata.tree_attention %q, %c, %seqs, %parents {layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 64 : i64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>, tensor<?xi32>
  return %p, %e, %d, %t : tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>
}

// CHECK-LABEL: func @lightning
func.func @lightning(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>,
    %s0: !strata.linear_state<1, 2, 16, 8, f32>, %seqs: !strata.seqs) -> (tensor<?x2x8xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>) {
  // CHECK: strata.lightning_prefill %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {chunk_size = 256 : i64, decay_slopes = array<f64: 5.000000e-01, 2.500000e-01>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  %o1, %s1 = strata.lightning_prefill %q, %k, %v, %s0, %seqs {chunk_size = 256 : i64, decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  // CHECK: strata.lightning_decode %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decay_slopes = array<f64: 5.000000e-01, 2.500000e-01>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  %o2, %s2 = strata.lightning_decode %q, %k, %v, %s1, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  return %o1, %o2, %s2 : tensor<?x2x8xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
}

// CHECK-LABEL: func @norm_and_mlp
func.func @norm_and_mlp(%x: tensor<?x64xbf16>, %res: tensor<?x64xbf16>, %w: tensor<64xbf16>, %gu: tensor<?x512xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x256xbf16>) {
  // CHECK: strata.add_rms_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : tensor<?x64xbf16>, tensor<64xbf16>
  %n, %sum = strata.add_rms_norm %x, %res, %w {eps = 1.0e-05 : f64} : tensor<?x64xbf16>, tensor<64xbf16>
  // CHECK: strata.swiglu %{{.*}} : tensor<?x512xbf16> -> tensor<?x256xbf16>
  %a = strata.swiglu %gu : tensor<?x512xbf16> -> tensor<?x256xbf16>
  return %n, %sum, %a : tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<?x256xbf16>
}

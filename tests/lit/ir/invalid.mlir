// RUN: strata-opt %s -split-input-file -verify-diagnostics
// Every verifier message of the strata types and generic ops, one case
// each; fused ops are in invalid-fused.mlir. Each function holds the one
// bad op of its case.

// A KV cache needs at least one layer.
// expected-error @+1 {{kv_cache layers must be positive, got 0}}
func.func @f(%a: !strata.kv_cache<0, 2, 32, 16, f16>) {
  return
}

// -----

// KV heads must be positive.
// expected-error @+1 {{kv_cache kv_heads must be positive, got -1}}
func.func @f(%a: !strata.kv_cache<2, -1, 32, 16, f16>) {
  return
}

// -----

// Block tables index with shifts: block_size is a power of two.
// expected-error @+1 {{kv_cache block_size must be a power of two, got 12}}
func.func @f(%a: !strata.kv_cache<2, 2, 32, 12, f16>) {
  return
}

// -----

// The cache stores f16, bf16 or f32 only.
// expected-error @+1 {{kv_cache element type must be f16, bf16 or f32, got 'i8'}}
func.func @f(%a: !strata.kv_cache<2, 2, 32, 16, i8>) {
  return
}

// -----

// Linear-state dimensions must be positive.
// expected-error @+1 {{linear_state value_dim must be positive, got 0}}
func.func @f(%a: !strata.linear_state<1, 2, 16, 0, f32>) {
  return
}

// -----

// The linear state accumulates the whole history: f32 only.
// expected-error @+1 {{linear_state element type must be f32, got 'bf16'}}
func.func @f(%a: !strata.linear_state<1, 2, 16, 8, bf16>) {
  return
}

// -----

// A weight needs a name to be bound to a buffer.
func.func @case6() {
  // expected-error @+1 {{name must not be empty}}
  strata.weight "" : tensor<4x4xf32>
  return
}

// -----

// Weights are allocated before the first step: shapes are static.
func.func @case7() {
  // expected-error @+1 {{weight 'w' must have a static shape, got 'tensor<?x4xf32>'}}
  strata.weight "w" : tensor<?x4xf32>
  return
}

// -----

// The embedding result has the table's hidden size.
func.func @case8(%ids: tensor<?xi32>, %t: tensor<100x64xf16>) {
  // expected-error @+1 {{result type 'tensor<?x32xf16>' != expected 'tensor<?x64xf16>'}}
  strata.embedding %ids, %t : tensor<?xi32>, tensor<100x64xf16> -> tensor<?x32xf16>
  return
}

// -----

// rms_norm: one weight per hidden feature.
func.func @case9(%x: tensor<?x64xf16>, %w: tensor<32xf16>) {
  // expected-error @+1 {{weight size 32 != x hidden size 64}}
  strata.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<32xf16>
  return
}

// -----

// rms_norm: weight and activation share the element type.
func.func @case10(%x: tensor<?x64xf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{weight element type 'f32' != x element type 'f16'}}
  strata.rms_norm %x, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<64xf32>
  return
}

// -----

// rms_norm: eps must be positive.
func.func @case11(%x: tensor<?x64xf16>, %w: tensor<64xf16>) {
  // expected-error @+1 {{eps must be positive, got 0}}
  strata.rms_norm %x, %w {eps = 0.0 : f64} : tensor<?x64xf16>, tensor<64xf16>
  return
}

// -----

// head_norm normalizes over head_dim: one weight per element of a head.
func.func @case12(%x: tensor<?x4x32xf16>, %w: tensor<16xf16>) {
  // expected-error @+1 {{weight size 16 != x head_dim 32}}
  strata.head_norm %x, %w {eps = 1.0e-06 : f64} : tensor<?x4x32xf16>, tensor<16xf16>
  return
}

// -----

// linear: x's features are the weight's in_features ([out, in] layout).
func.func @case13(%x: tensor<?x64xf16>, %w: tensor<128x32xf16>) {
  // expected-error @+1 {{x in_features 64 != weight in_features 32}}
  strata.linear %x, %w : tensor<?x64xf16>, tensor<128x32xf16> -> tensor<?x128xf16>
  return
}

// -----

// linear: weight and activation share the element type.
func.func @case14(%x: tensor<?x64xf16>, %w: tensor<128x64xbf16>) {
  // expected-error @+1 {{weight element type 'bf16' != x element type 'f16'}}
  strata.linear %x, %w : tensor<?x64xf16>, tensor<128x64xbf16> -> tensor<?x128xf16>
  return
}

// -----

// linear: one bias per output feature.
func.func @case15(%x: tensor<?x64xf16>, %w: tensor<128x64xf16>, %b: tensor<64xf16>) {
  // expected-error @+1 {{bias size 64 != weight out_features 128}}
  strata.linear %x, %w, %b : tensor<?x64xf16>, tensor<128x64xf16>, tensor<64xf16> -> tensor<?x128xf16>
  return
}

// -----

// linear: the bias has the activation's element type.
func.func @case16(%x: tensor<?x64xf16>, %w: tensor<128x64xf16>, %b: tensor<128xf32>) {
  // expected-error @+1 {{bias element type 'f32' != x element type 'f16'}}
  strata.linear %x, %w, %b : tensor<?x64xf16>, tensor<128x64xf16>, tensor<128xf32> -> tensor<?x128xf16>
  return
}

// -----

// linear: the result has out_features columns.
func.func @case17(%x: tensor<?x64xf16>, %w: tensor<128x64xf16>) {
  // expected-error @+1 {{result type 'tensor<?x64xf16>' != expected 'tensor<?x128xf16>'}}
  strata.linear %x, %w : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x64xf16>
  return
}

// -----

// split_heads needs at least one head.
func.func @case18(%x: tensor<?x128xf16>) {
  // expected-error @+1 {{num_heads must be positive, got 0}}
  strata.split_heads %x {num_heads = 0 : i64} : tensor<?x128xf16> -> tensor<?x0x32xf16>
  return
}

// -----

// split_heads: the features divide evenly into heads.
func.func @case19(%x: tensor<?x130xf16>) {
  // expected-error @+1 {{x features 130 is not a multiple of num_heads 4}}
  strata.split_heads %x {num_heads = 4 : i64} : tensor<?x130xf16> -> tensor<?x4x32xf16>
  return
}

// -----

// split_heads: head_dim is features / num_heads.
func.func @case20(%x: tensor<?x128xf16>) {
  // expected-error @+1 {{result type 'tensor<?x4x16xf16>' != expected 'tensor<?x4x32xf16>'}}
  strata.split_heads %x {num_heads = 4 : i64} : tensor<?x128xf16> -> tensor<?x4x16xf16>
  return
}

// -----

// merge_heads: the result has heads * head_dim features.
func.func @case21(%x: tensor<?x4x32xf16>) {
  // expected-error @+1 {{result type 'tensor<?x64xf16>' != expected 'tensor<?x128xf16>'}}
  strata.merge_heads %x : tensor<?x4x32xf16> -> tensor<?x64xf16>
  return
}

// -----

// rope: one position per token.
func.func @case22(%x: tensor<5x4x128xf16>, %p: tensor<3xi32>) {
  // expected-error @+1 {{positions tokens 3 != x tokens 5}}
  strata.rope %x, %p pairing neox scaling none {rotary_dim = 128 : i64, theta = 1.0e+04 : f64} : tensor<5x4x128xf16>, tensor<3xi32>
  return
}

// -----

// rope: rotary_dim must be positive.
func.func @case23(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rotary_dim must be positive, got 0}}
  strata.rope %x, %p pairing neox scaling none {rotary_dim = 0 : i64, theta = 1.0e+04 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: elements rotate in pairs, so rotary_dim is even.
func.func @case24(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{rotary_dim 31 must be even}}
  strata.rope %x, %p pairing neox scaling none {rotary_dim = 31 : i64, theta = 1.0e+04 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: at most the whole head rotates.
func.func @case25(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'strata.rope' op rotary_dim 130 exceeds head_dim 128}}
  strata.rope %x, %p pairing neox scaling none {rotary_dim = 130 : i64, theta = 1.0e+04 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: theta must be positive.
func.func @case26(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{theta must be positive, got -1}}
  strata.rope %x, %p pairing neox scaling none {rotary_dim = 64 : i64, theta = -1.0 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: a scaling factor without a scaling kind would be ignored.
func.func @case27(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{scaling_factor 8 given with scaling none}}
  strata.rope %x, %p pairing neox scaling none {rotary_dim = 64 : i64, theta = 1.0e+04 : f64, scaling_factor = 8.0 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: linear scaling needs a positive factor.
func.func @case28(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{scaling_factor must be positive, got 0}}
  strata.rope %x, %p pairing neox scaling linear {rotary_dim = 64 : i64, theta = 1.0e+04 : f64, scaling_factor = 0.0 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: llama3 scaling needs a positive low_freq_factor.
func.func @case29(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{low_freq_factor must be positive, got 0}}
  strata.rope %x, %p pairing neox scaling llama3 {rotary_dim = 64 : i64, theta = 1.0e+04 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 0.0 : f64, original_max_positions = 8192 : i64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: llama3 scaling needs the original context length.
func.func @case30(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{original_max_positions must be positive, got 0}}
  strata.rope %x, %p pairing neox scaling llama3 {rotary_dim = 64 : i64, theta = 1.0e+04 : f64, scaling_factor = 8.0 : f64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// rope: llama3 interpolates between two wavelengths; the band must not be empty.
func.func @case31(%x: tensor<5x4x128xf16>, %p: tensor<?xi32>) {
  // expected-error @+1 {{high_freq_factor 1 must exceed low_freq_factor 4}}
  strata.rope %x, %p pairing neox scaling llama3 {rotary_dim = 64 : i64, theta = 1.0e+04 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 4.0 : f64, high_freq_factor = 1.0 : f64, original_max_positions = 8192 : i64} : tensor<5x4x128xf16>, tensor<?xi32>
  return
}

// -----

// kv_append: k and v come from the same tokens.
func.func @case32(%k: tensor<4x2x32xf16>, %v: tensor<3x2x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{v tokens 3 != k tokens 4}}
  strata.kv_append %k, %v, %c, %s {layer = 0 : i64} : tensor<4x2x32xf16>, tensor<3x2x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// kv_append: k has the cache's KV heads.
func.func @case33(%k: tensor<?x4x32xf16>, %v: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{k heads 4 != kv cache kv_heads 2}}
  strata.kv_append %k, %v, %c, %s {layer = 0 : i64} : tensor<?x4x32xf16>, tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// kv_append: k has the cache's head_dim.
func.func @case34(%k: tensor<?x2x64xf16>, %v: tensor<?x2x64xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{k head_dim 64 != kv cache head_dim 32}}
  strata.kv_append %k, %v, %c, %s {layer = 0 : i64} : tensor<?x2x64xf16>, tensor<?x2x64xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// kv_append: v is stored in the cache's element type.
func.func @case35(%k: tensor<?x2x32xf16>, %v: tensor<?x2x32xf32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{v element type 'f32' != kv cache element type 'f16'}}
  strata.kv_append %k, %v, %c, %s {layer = 0 : i64} : tensor<?x2x32xf16>, tensor<?x2x32xf32>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// kv_append: the layer exists in the cache.
func.func @case36(%k: tensor<?x2x32xf16>, %v: tensor<?x2x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{layer 2 >= kv cache layers 2}}
  strata.kv_append %k, %v, %c, %s {layer = 2 : i64} : tensor<?x2x32xf16>, tensor<?x2x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// kv_append: layers count from 0.
func.func @case37(%k: tensor<?x2x32xf16>, %v: tensor<?x2x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{layer must be non-negative, got -1}}
  strata.kv_append %k, %v, %c, %s {layer = -1 : i64} : tensor<?x2x32xf16>, tensor<?x2x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// softmax attention reads q only; k and v come from the cache.
func.func @case38(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{softmax attention takes 1 input (q), got 3}}
  strata.attention softmax(%q, %q, %q), %c, %s {layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x4x32xf16>, tensor<?x4x32xf16>, tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return
}

// -----

// softmax attention reads a KV cache, not a linear state.
func.func @case39(%q: tensor<?x4x32xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{softmax attention needs a !strata.kv_cache state, got '!strata.linear_state<1, 2, 16, 8, f32>'}}
  strata.attention softmax(%q), %st, %s {layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x4x32xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x4x32xf16>
  return
}

// -----

// softmax attention returns no state: the cache was updated by kv_append.
func.func @case40(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{softmax attention has 1 result, got 2}}
  %r:2 = strata.attention softmax(%q), %c, %s {layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// decay slopes belong to linear attention.
func.func @case41(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{decay_slopes is only valid for linear attention}}
  strata.attention softmax(%q), %c, %s {layer = 0 : i64, scale = 0.125 : f64, decay_slopes = array<f64: 0.5>} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return
}

// -----

// softmax attention needs its scale.
func.func @case42(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{softmax attention needs a scale}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return
}

// -----

// GQA: q heads form whole groups over the KV heads.
func.func @case43(%q: tensor<?x6x32xf16>, %c: !strata.kv_cache<2, 4, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{q heads 6 is not a multiple of kv cache kv_heads 4}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x6x32xf16>), !strata.kv_cache<2, 4, 32, 16, f16> -> tensor<?x6x32xf16>
  return
}

// -----

// q and the cache agree on head_dim.
func.func @case44(%q: tensor<?x4x128xf16>, %c: !strata.kv_cache<2, 2, 64, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{q head_dim 128 != kv cache head_dim 64}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x4x128xf16>), !strata.kv_cache<2, 2, 64, 16, f16> -> tensor<?x4x128xf16>
  return
}

// -----

// q and the cache share the element type.
func.func @case45(%q: tensor<?x4x32xf32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{q element type 'f32' != kv cache element type 'f16'}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x4x32xf32>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf32>
  return
}

// -----

// softmax attention: layer is an index into the cache.
func.func @case46(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{layer 5 >= kv cache layers 2}}
  strata.attention softmax(%q), %c, %s {causal, layer = 5 : i64, scale = 0.125 : f64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return
}

// -----

// softmax attention: scale must be positive.
func.func @case47(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{scale must be positive, got 0}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.0 : f64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return
}

// -----

// sliding_window is a count of positions (0 = unlimited).
func.func @case48(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{sliding_window must be >= 0 (0 = unlimited), got -1}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.125 : f64, sliding_window = -1 : i64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
  return
}

// -----

// softmax attention: the output has q's shape.
func.func @case49(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{out type 'tensor<?x2x32xf16>' != expected 'tensor<?x4x32xf16>'}}
  strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x2x32xf16>
  return
}

// -----

// linear attention reads q, k and v.
func.func @case50(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{linear attention takes 3 inputs (q, k, v), got 1}}
  %r:2 = strata.attention linear(%q), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// linear attention reads a linear state, not a KV cache.
func.func @case51(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{linear attention needs a !strata.linear_state state, got '!strata.kv_cache<2, 2, 32, 16, f16>'}}
  strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x2x8xf16>
  return
}

// -----

// linear attention returns the updated state.
func.func @case52(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{linear attention has 2 results (out, new state), got 1}}
  strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  return
}

// -----

// linear attention has no softmax scale.
func.func @case53(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{scale is only valid for softmax attention}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, scale = 0.5 : f64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// linear attention is causal by construction.
func.func @case54(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{causal is only valid for softmax attention}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {causal, layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// linear attention has no window.
func.func @case55(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{sliding_window is only valid for softmax attention}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, sliding_window = 4 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// linear attention needs its decay slopes.
func.func @case56(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{linear attention needs decay_slopes}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// the new state has the type of the old one.
func.func @case57(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{new state type '!strata.linear_state<2, 2, 16, 8, f32>' != expected '!strata.linear_state<1, 2, 16, 8, f32>'}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<2, 2, 16, 8, f32>
  return
}

// -----

// q, k and v come from the same tokens.
func.func @case58(%q: tensor<4x2x16xf16>, %k: tensor<3x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{k tokens 3 != q tokens 4}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<4x2x16xf16>, tensor<3x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// q, k and v share the element type.
func.func @case59(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xbf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{k element type 'bf16' != q element type 'f16'}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xbf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// q has the state's heads.
func.func @case60(%q: tensor<?x4x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{q heads 4 != linear state heads 2}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x4x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// q's head_dim is the state's key_dim.
func.func @case61(%q: tensor<?x2x32xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{q head_dim 32 != linear state key_dim 16}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x32xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// v's head_dim is the state's value_dim.
func.func @case62(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x16xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{v head_dim 16 != linear state value_dim 8}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// the output has v's shape.
func.func @case63(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{out type 'tensor<?x2x16xf16>' != expected 'tensor<?x2x8xf16>'}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// linear attention: layer is an index into the state.
func.func @case64(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{layer 1 >= linear state layers 1}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 1 : i64, decay_slopes = array<f64: 0.5, 0.25>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// one decay slope per head.
func.func @case65(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{decay_slopes has 3 entries != linear state heads 2}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.25, 0.125>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// a slope <= 0 would let the state grow without bound.
func.func @case66(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{decay_slopes[1] must be positive, got 0}}
  %r:2 = strata.attention linear(%q, %k, %v), %st, %s {layer = 0 : i64, decay_slopes = array<f64: 0.5, 0.0>} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>), !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32>
  return
}

// -----

// elementwise ops keep one type for operands and result (trait).
func.func @case67(%a: tensor<?x128xf32>, %b: tensor<?x64xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  "strata.silu_mul"(%a, %b) : (tensor<?x128xf32>, tensor<?x64xf32>) -> tensor<?x128xf32>
  return
}

// -----

// elementwise ops take float tensors of rank 2 (operand constraint).
func.func @case68(%a: tensor<?x128xi32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<?x128xi32>'}}
  strata.silu %a : tensor<?x128xi32>
  return
}

// -----

// logits: hidden states and the output matrix share the hidden size.
func.func @case69(%h: tensor<?x32xf16>, %w: tensor<1000x64xf16>, %s: !strata.seqs) {
  // expected-error @+1 {{hidden size 32 != weight hidden size 64}}
  strata.logits %h, %w, %s : tensor<?x32xf16>, tensor<1000x64xf16> -> tensor<?x1000xf32>
  return
}

// -----

// logits: the output matrix has the activations' element type.
func.func @case70(%h: tensor<?x64xf16>, %w: tensor<1000x64xf32>, %s: !strata.seqs) {
  // expected-error @+1 {{weight element type 'f32' != hidden element type 'f16'}}
  strata.logits %h, %w, %s : tensor<?x64xf16>, tensor<1000x64xf32> -> tensor<?x1000xf32>
  return
}

// -----

// logits: one column per vocabulary entry.
func.func @case71(%h: tensor<?x64xf16>, %w: tensor<1000x64xf16>, %s: !strata.seqs) {
  // expected-error @+1 {{result vocab size 999 != weight vocab size 1000}}
  strata.logits %h, %w, %s : tensor<?x64xf16>, tensor<1000x64xf16> -> tensor<?x999xf32>
  return
}

// -----

// sample: one token per row of logits.
func.func @case72(%l: tensor<8x1000xf32>, %s: !strata.seqs) {
  // expected-error @+1 {{result rows 4 != logits rows 8}}
  strata.sample %l, %s : tensor<8x1000xf32> -> tensor<4xi32>
  return
}

// -----

// add: a residual scale is a finite number.
func.func @case73(%a: tensor<?x64xf16>, %b: tensor<?x64xf16>) {
  // expected-error @+1 {{lhs_scale must be finite, got inf}}
  %s = strata.add %a, %b {lhs_scale = 0x7FF0000000000000 : f64} : tensor<?x64xf16>
  return
}

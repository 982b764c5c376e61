// RUN: strata-opt %s -split-input-file -verify-diagnostics
// Every verifier message of the strata fused ops, one case each. Each
// function holds the one bad op of its case.

// concat_weights packs at least two weights.
func.func @case73(%a: tensor<4x8xf16>) {
  // expected-error @+1 {{needs at least 2 inputs, got 1}}
  strata.concat_weights %a {axis = 0 : i64} : tensor<4x8xf16> -> tensor<4x8xf16>
  return
}

// -----

// concat_weights: weights are matrices, axis is 0 or 1.
func.func @case74(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  strata.concat_weights %a, %b {axis = 2 : i64} : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<8x8xf16>
  return
}

// -----

// concat_weights: all inputs share the element type.
func.func @case75(%a: tensor<4x8xf16>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{input 1 element type 'f32' != input 0 element type 'f16'}}
  strata.concat_weights %a, %b {axis = 0 : i64} : tensor<4x8xf16>, tensor<4x8xf32> -> tensor<8x8xf16>
  return
}

// -----

// concat_weights: the other dimension must agree.
func.func @case76(%a: tensor<4x64xf16>, %b: tensor<4x32xf16>) {
  // expected-error @+1 {{input 1 dim 1 size 32 != input 0 dim 1 size 64}}
  strata.concat_weights %a, %b {axis = 0 : i64} : tensor<4x64xf16>, tensor<4x32xf16> -> tensor<8x64xf16>
  return
}

// -----

// concat_weights: the result's axis is the sum of the inputs'.
func.func @case77(%a: tensor<4x8xf16>, %b: tensor<2x8xf16>) {
  // expected-error @+1 {{result type 'tensor<8x8xf16>' != expected 'tensor<6x8xf16>'}}
  strata.concat_weights %a, %b {axis = 0 : i64} : tensor<4x8xf16>, tensor<2x8xf16> -> tensor<8x8xf16>
  return
}

// -----

// rope_kv_write: head counts are positive.
func.func @case78(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{num_q_heads must be positive, got 0}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 0 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: q heads form whole groups over the KV heads.
func.func @case79(%qkv: tensor<?x14x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 4, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{num_q_heads 6 is not a multiple of num_kv_heads 4}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 4 : i64, num_q_heads = 6 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x14x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 4, 32, 16, f16> -> tensor<?x14x32xf16>, !strata.kv_cache<2, 4, 32, 16, f16>
  return
}

// -----

// rope_kv_write: the packed buffer holds q, k and v heads.
func.func @case80(%qkv: tensor<?x10x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{qkv heads 10 != num_q_heads + 2 * num_kv_heads = 8}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x10x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x10x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: KV heads match the cache.
func.func @case81(%qkv: tensor<?x6x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{num_kv_heads 1 != kv cache kv_heads 2}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 1 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x6x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x6x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: head_dim matches the cache.
func.func @case82(%qkv: tensor<?x8x64xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{qkv head_dim 64 != kv cache head_dim 32}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x64xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x64xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: element type matches the cache.
func.func @case83(%qkv: tensor<?x8x32xbf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{qkv element type 'bf16' != kv cache element type 'f16'}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xbf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xbf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: the layer exists in the cache.
func.func @case84(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{layer 3 >= kv cache layers 2}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 3 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: one position per token.
func.func @case85(%qkv: tensor<4x8x32xf16>, %p: tensor<5xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{positions tokens 5 != qkv tokens 4}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<4x8x32xf16>, tensor<5xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<4x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: rotary parameters are checked as for strata.rope.
func.func @case86(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{rotary_dim 64 exceeds head_dim 32}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 64 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: QK-norm weights come in pairs.
func.func @case87(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs, %qn: tensor<32xf16>, %kn: tensor<16xf16>) {
  // expected-error @+1 {{q_norm and k_norm weights must be given together (got only q_norm)}}
  %r:2 = strata.rope_kv_write continuous %qkv, %p, %c, %s pairing neox scaling none q_norm(%qn : tensor<32xf16>) {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64, qk_norm_eps = 1.0e-06 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: QK-norm needs its eps.
func.func @case88(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs, %qn: tensor<32xf16>, %kn: tensor<16xf16>) {
  // expected-error @+1 {{qk_norm_eps is required with q_norm/k_norm weights}}
  %r:2 = strata.rope_kv_write continuous %qkv, %p, %c, %s pairing neox scaling none q_norm(%qn : tensor<32xf16>) k_norm(%qn : tensor<32xf16>) {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: an eps without norm weights would be ignored.
func.func @case89(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{qk_norm_eps given without q_norm/k_norm weights}}
  %r:2 = strata.rope_kv_write continuous %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64, qk_norm_eps = 1.0e-06 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: QK-norm weights have one element per head_dim.
func.func @case90(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs, %qn: tensor<32xf16>, %kn: tensor<16xf16>) {
  // expected-error @+1 {{k_norm size 16 != qkv head_dim 32}}
  %r:2 = strata.rope_kv_write continuous %qkv, %p, %c, %s pairing neox scaling none q_norm(%qn : tensor<32xf16>) k_norm(%kn : tensor<16xf16>) {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64, qk_norm_eps = 1.0e-06 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// packed: the rotated buffer has the type of qkv.
func.func @case91(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{out type 'tensor<?x4x32xf16>' != expected 'tensor<?x8x32xf16>'}}
  %r:2 = strata.rope_kv_write packed %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// continuous and tree write q alone: [T, Hq, D].
func.func @case92(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{out type 'tensor<?x8x32xf16>' != expected 'tensor<?x4x32xf16>'}}
  %r:2 = strata.rope_kv_write tree %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// rope_kv_write: the new cache has the type of the old one.
func.func @case93(%qkv: tensor<?x8x32xf16>, %p: tensor<?xi32>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{new cache type '!strata.kv_cache<2, 2, 32, 32, f16>' != expected '!strata.kv_cache<2, 2, 32, 16, f16>'}}
  %r:2 = strata.rope_kv_write continuous %qkv, %p, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.0e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 32, f16>
  return
}

// -----

// prefill_attention: the packed buffer holds q, k and v heads.
func.func @case94(%qkv: tensor<?x9x32xf16>, %s: !strata.seqs) {
  // expected-error @+1 {{qkv heads 9 != num_q_heads + 2 * num_kv_heads = 8}}
  strata.prefill_attention %qkv, %s {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 0.125 : f64} : tensor<?x9x32xf16> -> tensor<?x4x32xf16>
  return
}

// -----

// prefill_attention: scale must be positive.
func.func @case95(%qkv: tensor<?x8x32xf16>, %s: !strata.seqs) {
  // expected-error @+1 {{scale must be positive, got -1}}
  strata.prefill_attention %qkv, %s {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = -1.0 : f64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
  return
}

// -----

// prefill_attention: sliding_window is a count of positions.
func.func @case96(%qkv: tensor<?x8x32xf16>, %s: !strata.seqs) {
  // expected-error @+1 {{sliding_window must be >= 0 (0 = unlimited), got -4}}
  strata.prefill_attention %qkv, %s {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 0.125 : f64, sliding_window = -4 : i64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
  return
}

// -----

// prefill_attention: the output is [T, Hq, D].
func.func @case97(%qkv: tensor<?x8x32xf16>, %s: !strata.seqs) {
  // expected-error @+1 {{result type 'tensor<?x8x32xf16>' != expected 'tensor<?x4x32xf16>'}}
  strata.prefill_attention %qkv, %s {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 0.125 : f64} : tensor<?x8x32xf16> -> tensor<?x8x32xf16>
  return
}

// -----

// extend_attention: q and the cache agree on head_dim.
func.func @case98(%q: tensor<?x4x64xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{q head_dim 64 != kv cache head_dim 32}}
  strata.extend_attention %q, %c, %s {layer = 0 : i64, scale = 0.125 : f64} : tensor<?x4x64xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// paged_decode_attention: at least one split.
func.func @case99(%q: tensor<?x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs) {
  // expected-error @+1 {{max_splits must be positive, got 0}}
  strata.paged_decode_attention %q, %c, %s {layer = 0 : i64, max_splits = 0 : i64, scale = 0.125 : f64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
  return
}

// -----

// tree_attention: one parent id per token.
func.func @case100(%q: tensor<4x4x32xf16>, %c: !strata.kv_cache<2, 2, 32, 16, f16>, %s: !strata.seqs, %par: tensor<3xi32>) {
  // expected-error @+1 {{parent_ids tokens 3 != q tokens 4}}
  strata.tree_attention %q, %c, %s, %par {layer = 0 : i64, scale = 0.125 : f64} : tensor<4x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>, tensor<3xi32>
  return
}

// -----

// lightning_prefill: chunks hold at least one token.
func.func @case101(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{chunk_size must be positive, got 0}}
  %r:2 = strata.lightning_prefill %q, %k, %v, %st, %s {chunk_size = 0 : i64, decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  return
}

// -----

// lightning_decode: checked as linear attention (one slope per head).
func.func @case102(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x8xf16>, %st: !strata.linear_state<1, 2, 16, 8, f32>, %s: !strata.seqs) {
  // expected-error @+1 {{decay_slopes has 1 entries != linear state heads 2}}
  %r:2 = strata.lightning_decode %q, %k, %v, %st, %s {decay_slopes = array<f64: 0.5>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x8xf16>, !strata.linear_state<1, 2, 16, 8, f32> -> tensor<?x2x8xf16>
  return
}

// -----

// add_rms_norm: one weight per hidden feature.
func.func @case103(%x: tensor<?x64xf16>, %res: tensor<?x64xf16>, %w: tensor<32xf16>) {
  // expected-error @+1 {{weight size 32 != x hidden size 64}}
  %r:2 = strata.add_rms_norm %x, %res, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<32xf16>
  return
}

// -----

// swiglu: the packed projection has a gate half and an up half.
func.func @case104(%gu: tensor<?x255xf16>) {
  // expected-error @+1 {{gate_up features 255 must be even (gate and up halves)}}
  strata.swiglu %gu : tensor<?x255xf16> -> tensor<?x127xf16>
  return
}

// -----

// swiglu: the split point must be known at compile time.
func.func @case105(%gu: tensor<?x?xf16>) {
  // expected-error @+1 {{gate_up features must be static}}
  strata.swiglu %gu : tensor<?x?xf16> -> tensor<?x?xf16>
  return
}

// -----

// swiglu: the result is the up half's shape.
func.func @case106(%gu: tensor<?x256xf16>) {
  // expected-error @+1 {{result type 'tensor<?x256xf16>' != expected 'tensor<?x128xf16>'}}
  strata.swiglu %gu : tensor<?x256xf16> -> tensor<?x256xf16>
  return
}

// -----

// add_rms_norm: a residual scale is a finite number.
func.func @case107(%x: tensor<?x64xf16>, %res: tensor<?x64xf16>, %w: tensor<64xf16>) {
  // expected-error @+1 {{residual_scale must be finite, got nan}}
  %r:2 = strata.add_rms_norm %x, %res, %w {eps = 1.0e-05 : f64, residual_scale = 0x7FF8000000000000 : f64} : tensor<?x64xf16>, tensor<64xf16>
  return
}

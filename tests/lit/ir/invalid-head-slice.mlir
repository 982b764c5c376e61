// RUN: strata-opt %s -split-input-file -verify-diagnostics
// Verifier messages of head_slice and of concat_weights over biases.

// head_slice: the range must lie inside the heads of x.
func.func @past_end(%qkv: tensor<?x8x32xf16>) {
  // expected-error @+1 {{heads 6..8 are out of range for x heads 8}}
  %v = strata.head_slice %qkv {first = 6 : i64, num_heads = 3 : i64} : tensor<?x8x32xf16> -> tensor<?x3x32xf16>
  return
}

// -----

// head_slice: first is an index.
func.func @negative_first(%qkv: tensor<?x8x32xf16>) {
  // expected-error @+1 {{first must be >= 0, got -1}}
  %v = strata.head_slice %qkv {first = -1 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x32xf16>
  return
}

// -----

// head_slice: at least one head.
func.func @no_heads(%qkv: tensor<?x8x32xf16>) {
  // expected-error @+1 {{num_heads must be positive, got 0}}
  %v = strata.head_slice %qkv {first = 0 : i64, num_heads = 0 : i64} : tensor<?x8x32xf16> -> tensor<?x0x32xf16>
  return
}

// -----

// head_slice: the result has num_heads heads of the same head_dim.
func.func @wrong_result(%qkv: tensor<?x8x32xf16>) {
  // expected-error @+1 {{result type 'tensor<?x2x16xf16>' != expected 'tensor<?x2x32xf16>'}}
  %v = strata.head_slice %qkv {first = 0 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x16xf16>
  return
}

// -----

// concat_weights: a bias cannot be packed with a matrix.
func.func @mixed_ranks(%b: tensor<64xf16>, %w: tensor<64x64xf16>) {
  // expected-error @+1 {{input 1 rank 2 != input 0 rank 1}}
  %x = strata.concat_weights %b, %w {axis = 0 : i64} : tensor<64xf16>, tensor<64x64xf16> -> tensor<128xf16>
  return
}

// -----

// concat_weights: biases have a single axis.
func.func @bias_axis(%a: tensor<64xf16>, %b: tensor<64xf16>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %x = strata.concat_weights %a, %b {axis = 1 : i64} : tensor<64xf16>, tensor<64xf16> -> tensor<128xf16>
  return
}

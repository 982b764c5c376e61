// RUN: strata-opt %s -split-input-file -strata-fuse-add-rmsnorm | FileCheck %s
// RUN: strata-opt %s -split-input-file -strata-fuse-add-rmsnorm --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Statistics over the cases below: two adds fused; of the five norms with
// phase facts, three are left (the embedding's, and the two that share
// one sum).
// STATS: (S) 2 add-rms-norm
// STATS: (S) 2 ops-removed
// STATS: (S) 5 rms-norms

// A residual add followed by the next block's norm: one add_rms_norm, both
// results kept. The normed tensor feeds the block, the sum stays the
// residual stream (here also returned). The norm's weight, defined after
// the add, moves up to the fused op.
// CHECK-LABEL: func.func @decode
// CHECK: %[[W:.*]] = strata.weight "post_attention_layernorm"
// CHECK: %[[N:.*]], %[[S:.*]] = strata.add_rms_norm %arg1, %arg0, %[[W]] {eps = 1.000000e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
// CHECK: %[[P:.*]] = strata.linear %[[N]]
// CHECK: strata.add %[[S]], %[[P]]
// CHECK-NOT: strata.rms_norm
func.func @decode(%h: tensor<?x64xf16>, %attn: tensor<?x64xf16>) -> tensor<?x64xf16>
    attributes {strata.phase = #strata<phase decode>} {
  %s = strata.add %h, %attn : tensor<?x64xf16>
  %w = strata.weight "post_attention_layernorm" : tensor<64xf16>
  %n = strata.rms_norm %s, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
  %wp = strata.weight "proj" : tensor<64x64xf16>
  %p = strata.linear %n, %wp : tensor<?x64xf16>, tensor<64x64xf16> -> tensor<?x64xf16>
  %r = strata.add %s, %p : tensor<?x64xf16>
  return %r : tensor<?x64xf16>
}

// -----

// Must not fire: the norm of the embedding (the first layer's input norm)
// has no add to fuse.
// CHECK-LABEL: func.func @first_layer
// CHECK: strata.rms_norm
// CHECK-NOT: strata.add_rms_norm
func.func @first_layer(%ids: tensor<?xi32>) -> tensor<?x64xf16>
    attributes {strata.phase = #strata<phase prefill>} {
  %e = strata.weight "embed" : tensor<16x64xf16>
  %h = strata.embedding %ids, %e : tensor<?xi32>, tensor<16x64xf16> -> tensor<?x64xf16>
  %w = strata.weight "input_layernorm" : tensor<64xf16>
  %n = strata.rms_norm %h, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
  return %n : tensor<?x64xf16>
}

// -----

// Must not fire: one sum feeds two norms; fusing both would add twice.
// CHECK-LABEL: func.func @two_norms
// CHECK: strata.add
// CHECK-COUNT-2: strata.rms_norm
// CHECK-NOT: strata.add_rms_norm
func.func @two_norms(%a: tensor<?x64xf16>, %b: tensor<?x64xf16>) -> (tensor<?x64xf16>, tensor<?x64xf16>)
    attributes {strata.phase = #strata<phase extend>} {
  %s = strata.add %a, %b : tensor<?x64xf16>
  %w = strata.weight "norm" : tensor<64xf16>
  %n1 = strata.rms_norm %s, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
  %n2 = strata.rms_norm %s, %w {eps = 1.0e-06 : f64} : tensor<?x64xf16>, tensor<64xf16>
  return %n1, %n2 : tensor<?x64xf16>, tensor<?x64xf16>
}

// -----

// Must not fire: no phase facts.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: strata.add_rms_norm
func.func @forward(%h: tensor<?x64xf16>, %attn: tensor<?x64xf16>) -> tensor<?x64xf16> {
  %s = strata.add %h, %attn : tensor<?x64xf16>
  %w = strata.weight "norm" : tensor<64xf16>
  %n = strata.rms_norm %s, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
  return %n : tensor<?x64xf16>
}

// -----

// MiniMax's scaled residual: alpha on the stream (lhs) becomes the
// residual's scale, beta on the block output (rhs) the scale of x.
// CHECK-LABEL: func.func @scaled
// CHECK: strata.add_rms_norm %arg1, %arg0, %{{.*}} {eps = 1.000000e-05 : f64, residual_scale = 1.600000e+00 : f64, x_scale = 8.000000e-01 : f64}
// CHECK-NOT: strata.rms_norm
func.func @scaled(%h: tensor<?x64xf16>, %attn: tensor<?x64xf16>) -> (tensor<?x64xf16>, tensor<?x64xf16>)
    attributes {strata.phase = #strata<phase decode>} {
  %s = strata.add %h, %attn {lhs_scale = 1.6 : f64, rhs_scale = 0.8 : f64} : tensor<?x64xf16>
  %w = strata.weight "norm" : tensor<64xf16>
  %n = strata.rms_norm %s, %w {eps = 1.0e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
  return %n, %s : tensor<?x64xf16>, tensor<?x64xf16>
}

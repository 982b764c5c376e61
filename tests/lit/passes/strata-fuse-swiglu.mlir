// RUN: strata-opt %s -split-input-file -strata-fuse-swiglu | FileCheck %s
// RUN: strata-opt %s -split-input-file -strata-fuse-swiglu --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Statistics over the cases below: two gated MLPs fused (with and without
// biases), two left alone (different inputs, a gate with another user).
// STATS: (S) 4 silu-muls
// STATS: (S) 2 swiglu

// A gated MLP: gate and up of the same input become one GEMM onto the
// load-time concatenation (gate rows first, the order strata.swiglu reads),
// then swiglu.
// CHECK-LABEL: func.func @prefill
// CHECK-DAG: %[[G:.*]] = strata.weight "gate"
// CHECK-DAG: %[[U:.*]] = strata.weight "up"
// CHECK: %[[W:.*]] = strata.concat_weights %[[G]], %[[U]] {axis = 0 : i64} : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<256x64xf16>
// CHECK: %[[GU:.*]] = strata.linear %arg0, %[[W]] : tensor<?x64xf16>, tensor<256x64xf16> -> tensor<?x256xf16>
// CHECK: strata.swiglu %[[GU]] : tensor<?x256xf16> -> tensor<?x128xf16>
// CHECK-NOT: strata.silu_mul
func.func @prefill(%x: tensor<?x64xf16>) -> tensor<?x128xf16>
    attributes {strata.phase = #strata<phase prefill>} {
  %wg = strata.weight "gate" : tensor<128x64xf16>
  %g = strata.linear %x, %wg : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %wu = strata.weight "up" : tensor<128x64xf16>
  %u = strata.linear %x, %wu : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %a = strata.silu_mul %g, %u : tensor<?x128xf16>
  return %a : tensor<?x128xf16>
}

// -----

// With biases: packed like the weights.
// CHECK-LABEL: func.func @bias
// CHECK: %[[B:.*]] = strata.concat_weights %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<128xf16>, tensor<128xf16> -> tensor<256xf16>
// CHECK: strata.linear %arg0, %{{.*}}, %[[B]]
// CHECK: strata.swiglu
func.func @bias(%x: tensor<?x64xf16>) -> tensor<?x128xf16>
    attributes {strata.phase = #strata<phase decode>} {
  %wg = strata.weight "gate" : tensor<128x64xf16>
  %bg = strata.weight "gate.bias" : tensor<128xf16>
  %g = strata.linear %x, %wg, %bg : tensor<?x64xf16>, tensor<128x64xf16>, tensor<128xf16> -> tensor<?x128xf16>
  %wu = strata.weight "up" : tensor<128x64xf16>
  %bu = strata.weight "up.bias" : tensor<128xf16>
  %u = strata.linear %x, %wu, %bu : tensor<?x64xf16>, tensor<128x64xf16>, tensor<128xf16> -> tensor<?x128xf16>
  %a = strata.silu_mul %g, %u : tensor<?x128xf16>
  return %a : tensor<?x128xf16>
}

// -----

// Must not fire: gate and up project different inputs.
// CHECK-LABEL: func.func @two_inputs
// CHECK: strata.silu_mul
// CHECK-NOT: strata.swiglu
func.func @two_inputs(%x: tensor<?x64xf16>, %y: tensor<?x64xf16>) -> tensor<?x128xf16>
    attributes {strata.phase = #strata<phase extend>} {
  %wg = strata.weight "gate" : tensor<128x64xf16>
  %g = strata.linear %x, %wg : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %wu = strata.weight "up" : tensor<128x64xf16>
  %u = strata.linear %y, %wu : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %a = strata.silu_mul %g, %u : tensor<?x128xf16>
  return %a : tensor<?x128xf16>
}

// -----

// Must not fire: the gate projection is also used elsewhere.
// CHECK-LABEL: func.func @gate_reused
// CHECK: strata.silu_mul
// CHECK-NOT: strata.swiglu
func.func @gate_reused(%x: tensor<?x64xf16>) -> (tensor<?x128xf16>, tensor<?x128xf16>)
    attributes {strata.phase = #strata<phase extend>} {
  %wg = strata.weight "gate" : tensor<128x64xf16>
  %g = strata.linear %x, %wg : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %wu = strata.weight "up" : tensor<128x64xf16>
  %u = strata.linear %x, %wu : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %a = strata.silu_mul %g, %u : tensor<?x128xf16>
  return %a, %g : tensor<?x128xf16>, tensor<?x128xf16>
}

// -----

// Must not fire: no phase facts.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: strata.swiglu
func.func @forward(%x: tensor<?x64xf16>) -> tensor<?x128xf16> {
  %wg = strata.weight "gate" : tensor<128x64xf16>
  %g = strata.linear %x, %wg : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %wu = strata.weight "up" : tensor<128x64xf16>
  %u = strata.linear %x, %wu : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
  %a = strata.silu_mul %g, %u : tensor<?x128xf16>
  return %a : tensor<?x128xf16>
}

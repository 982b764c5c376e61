// RUN: strata-opt %s | strata-opt | FileCheck %s
// Round trip of the ops that let a packed QKV projection feed unfused
// consumers: head_slice, and concat_weights of biases (rank 1).

// q, k and v sliced out of a packed [T, 4 + 2 + 2, 32] projection.
// CHECK-LABEL: func @slices
func.func @slices(%qkv: tensor<?x8x32xf16>) -> (tensor<?x4x32xf16>, tensor<?x2x32xf16>, tensor<?x2x32xf16>) {
  // CHECK: strata.head_slice %{{.*}} {first = 0 : i64, num_heads = 4 : i64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
  %q = strata.head_slice %qkv {first = 0 : i64, num_heads = 4 : i64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
  // CHECK: strata.head_slice %{{.*}} {first = 4 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x32xf16>
  %k = strata.head_slice %qkv {first = 4 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x32xf16>
  // CHECK: strata.head_slice %{{.*}} {first = 6 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x32xf16>
  %v = strata.head_slice %qkv {first = 6 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x32xf16>
  return %q, %k, %v : tensor<?x4x32xf16>, tensor<?x2x32xf16>, tensor<?x2x32xf16>
}

// Packed QKV biases, in the order of the packed weight rows.
// CHECK-LABEL: func @bias_concat
func.func @bias_concat(%bq: tensor<128xf16>, %bk: tensor<64xf16>, %bv: tensor<64xf16>) -> tensor<256xf16> {
  // CHECK: strata.concat_weights %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<128xf16>, tensor<64xf16>, tensor<64xf16> -> tensor<256xf16>
  %b = strata.concat_weights %bq, %bk, %bv {axis = 0 : i64} : tensor<128xf16>, tensor<64xf16>, tensor<64xf16> -> tensor<256xf16>
  return %b : tensor<256xf16>
}

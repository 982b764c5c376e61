// RUN: strata-opt %s | strata-opt | FileCheck %s
// RUN: strata-opt --mlir-print-op-generic %s | strata-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Round trip of every type and enum attribute, in the custom and the
// generic op form.

// CHECK-LABEL: func @state_types
// CHECK-SAME: !strata.kv_cache<32, 8, 128, 16, bf16>
// CHECK-SAME: !strata.kv_cache<2, 1, 64, 1, f16>
// CHECK-SAME: !strata.kv_cache<1, 4, 32, 256, f32>
// CHECK-SAME: !strata.linear_state<7, 64, 128, 96, f32>
// CHECK-SAME: !strata.seqs
func.func @state_types(%a: !strata.kv_cache<32, 8, 128, 16, bf16>,
                       %b: !strata.kv_cache<2, 1, 64, 1, f16>,
                       %c: !strata.kv_cache<1, 4, 32, 256, f32>,
                       %d: !strata.linear_state<7, 64, 128, 96, f32>,
                       %e: !strata.seqs) {
  return
}

// Enum attributes stand alone in attribute dictionaries (the passes put the
// phase on the functions they specialize).
// CHECK-LABEL: func @enum_attrs
// CHECK-SAME: kind = #strata<attention_kind linear>
// CHECK-SAME: pairing = #strata<rope_pairing gptj>
// CHECK-SAME: scaling = #strata<rope_scaling llama3>
// CHECK-SAME: strata.phase = #strata<phase verify>
// CHECK-SAME: variant = #strata<rope_variant continuous>
func.func @enum_attrs() attributes {
    strata.phase = #strata<phase verify>,
    kind = #strata<attention_kind linear>,
    pairing = #strata<rope_pairing gptj>,
    scaling = #strata<rope_scaling llama3>,
    variant = #strata<rope_variant continuous>} {
  return
}

// The generic op form carries enum operands of ops as attributes.
// GENERIC: "strata.attention"(%arg0, %arg1, %arg2) {causal, kind = #strata<attention_kind softmax>, layer = 0 : i64, scale = 1.250000e-01 : f64}
// GENERIC: "strata.rope_kv_write"(%arg3, %arg4, %arg1, %arg2)
// GENERIC-SAME: operand_segment_sizes = array<i32: 1, 1, 1, 1, 0, 0>
// GENERIC-SAME: pairing = #strata<rope_pairing neox>
// GENERIC-SAME: scaling = #strata<rope_scaling none>
// GENERIC-SAME: variant = #strata<rope_variant packed>
func.func @generic_form(%q: tensor<?x2x8xf32>, %c: !strata.kv_cache<1, 1, 8, 16, f32>,
                        %s: !strata.seqs, %qkv: tensor<?x4x8xf32>, %pos: tensor<?xi32>) {
  %o = strata.attention softmax(%q), %c, %s {causal, layer = 0 : i64, scale = 0.125 : f64} : (tensor<?x2x8xf32>), !strata.kv_cache<1, 1, 8, 16, f32> -> tensor<?x2x8xf32>
  %r, %c1 = strata.rope_kv_write packed %qkv, %pos, %c, %s pairing neox scaling none {layer = 0 : i64, num_kv_heads = 1 : i64, num_q_heads = 2 : i64, rotary_dim = 8 : i64, theta = 1.0e+04 : f64} : tensor<?x4x8xf32>, tensor<?xi32>, !strata.kv_cache<1, 1, 8, 16, f32> -> tensor<?x4x8xf32>, !strata.kv_cache<1, 1, 8, 16, f32>
  return
}

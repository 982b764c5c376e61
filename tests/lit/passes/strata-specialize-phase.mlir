// RUN: strata-opt %s -split-input-file -strata-specialize-phase | FileCheck %s
// RUN: strata-opt %s -split-input-file -strata-specialize-phase --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Statistics over the cases below: four phase functions from each forward,
// none from the module that is already specialized.
// STATS: (S) 12 phase-functions
// RUN: strata-opt %s -split-input-file -strata-specialize-phase=phases=decode,prefill | FileCheck %s --check-prefix=SUBSET
// RUN: not strata-opt %s -split-input-file -strata-specialize-phase=phases=prefill,train -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPHASE

// A softmax-only model: the forward becomes four phase functions, in order,
// each with its facts. verify gains the parent ids after %seqs and scores
// every token (logits all_tokens); a token tree is allowed.
// CHECK-LABEL: module
// CHECK-NOT: func.func @forward
// CHECK: func.func @prefill(%{{.*}}: tensor<?xi32>, %{{.*}}: tensor<?xi32>, %{{.*}}: !strata.seqs, %{{.*}}: !strata.kv_cache<1, 1, 32, 16, f16>)
// CHECK-SAME: attributes {strata.cache_empty = true, strata.phase = #strata<phase prefill>}
// CHECK: strata.logits
// CHECK-NOT: all_tokens
// CHECK: func.func @extend
// CHECK-SAME: attributes {strata.cache_empty = false, strata.phase = #strata<phase extend>}
// CHECK: func.func @decode
// CHECK-SAME: attributes {strata.cache_empty = false, strata.phase = #strata<phase decode>, strata.tokens_per_seq = 1 : i64}
// CHECK: func.func @verify(%{{.*}}: tensor<?xi32>, %{{.*}}: tensor<?xi32>, %[[SEQS:.*]]: !strata.seqs, %{{.*}}: tensor<?xi32> {strata.parent_ids}, %{{.*}}: !strata.kv_cache<1, 1, 32, 16, f16>)
// CHECK-SAME: attributes {strata.cache_empty = false, strata.draft = "tree", strata.phase = #strata<phase verify>}
// CHECK: strata.logits {{.*}}, %[[SEQS]] {all_tokens}
// CHECK-NOT: func.func @forward

// SUBSET-LABEL: module
// SUBSET-NOT: func.func @prefill
// SUBSET: func.func @decode
// SUBSET: func.func @prefill
// SUBSET-NOT: func.func @extend
// SUBSET-NOT: func.func @verify
// SUBSET-NOT: func.func @forward

// BADPHASE: error: unknown phase 'train'; expected prefill, extend, decode or verify
module {
  func.func @forward(%ids: tensor<?xi32>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
                     %c0: !strata.kv_cache<1, 1, 32, 16, f16>)
      -> (tensor<?x16xf32>, !strata.kv_cache<1, 1, 32, 16, f16>) {
    %emb = strata.weight "embed" : tensor<16x64xf16>
    %h = strata.embedding %ids, %emb : tensor<?xi32>, tensor<16x64xf16> -> tensor<?x64xf16>
    %wk = strata.weight "k" : tensor<32x64xf16>
    %k = strata.linear %h, %wk : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf16>
    %kh = strata.split_heads %k {num_heads = 1 : i64} : tensor<?x32xf16> -> tensor<?x1x32xf16>
    %c1 = strata.kv_append %kh, %kh, %c0, %seqs {layer = 0 : i64} : tensor<?x1x32xf16>, tensor<?x1x32xf16>, !strata.kv_cache<1, 1, 32, 16, f16>
    %l = strata.logits %h, %emb, %seqs : tensor<?x64xf16>, tensor<16x64xf16> -> tensor<?x16xf32>
    return %l, %c1 : tensor<?x16xf32>, !strata.kv_cache<1, 1, 32, 16, f16>
  }
}

// -----

// A model with linear-attention layers: one recurrent state per sequence
// cannot follow two branches, so verify is restricted to chains of drafts.
// CHECK-LABEL: module
// CHECK: func.func @verify
// CHECK-SAME: strata.draft = "chain"
// SUBSET-LABEL: module
// SUBSET: func.func @decode
module {
  func.func @forward(%ids: tensor<?xi32>, %pos: tensor<?xi32>, %seqs: !strata.seqs,
                     %s0: !strata.linear_state<1, 2, 16, 16, f32>)
      -> (tensor<?x16xf32>, !strata.linear_state<1, 2, 16, 16, f32>) {
    %emb = strata.weight "embed" : tensor<16x32xf16>
    %h = strata.embedding %ids, %emb : tensor<?xi32>, tensor<16x32xf16> -> tensor<?x32xf16>
    %x = strata.split_heads %h {num_heads = 2 : i64} : tensor<?x32xf16> -> tensor<?x2x16xf16>
    %o, %s1 = strata.attention linear(%x, %x, %x), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
    %m = strata.merge_heads %o : tensor<?x2x16xf16> -> tensor<?x32xf16>
    %l = strata.logits %m, %emb, %seqs : tensor<?x32xf16>, tensor<16x32xf16> -> tensor<?x16xf32>
    return %l, %s1 : tensor<?x16xf32>, !strata.linear_state<1, 2, 16, 16, f32>
  }
}

// -----

// Must not fire: the module is already specialized (no @forward), so
// running the pass again changes nothing.
// CHECK-LABEL: module
// CHECK: func.func @decode(%{{.*}}: tensor<?xi32>) -> tensor<?xi32> attributes {strata.phase = #strata<phase decode>}
// CHECK-NOT: func.func @prefill
// SUBSET-LABEL: module
// SUBSET: func.func @decode
// SUBSET-NOT: func.func @prefill
module {
  func.func @decode(%ids: tensor<?xi32>) -> tensor<?xi32> attributes {strata.phase = #strata<phase decode>} {
    return %ids : tensor<?xi32>
  }
}

// -----

// The model facts on the module travel with every phase function, so that
// the passes after this one read only the function they rewrite; the module
// keeps its own copy for codegen.
// CHECK-LABEL: module attributes {strata.linear_chunk_size = 32 : i64, strata.max_positions = 4096 : i64}
// CHECK: func.func @prefill
// CHECK-SAME: attributes {strata.cache_empty = true, strata.linear_chunk_size = 32 : i64, strata.max_positions = 4096 : i64, strata.phase = #strata<phase prefill>}
// CHECK: func.func @extend
// CHECK-SAME: strata.linear_chunk_size = 32 : i64, strata.max_positions = 4096 : i64
// CHECK: func.func @decode
// CHECK-SAME: strata.linear_chunk_size = 32 : i64, strata.max_positions = 4096 : i64
// CHECK: func.func @verify
// CHECK-SAME: strata.linear_chunk_size = 32 : i64, strata.max_positions = 4096 : i64
// SUBSET-LABEL: module attributes
// SUBSET: func.func @decode
// SUBSET-SAME: strata.max_positions = 4096 : i64
module attributes {strata.max_positions = 4096 : i64, strata.linear_chunk_size = 32 : i64} {
  func.func @forward(%ids: tensor<?xi32>, %pos: tensor<?xi32>, %seqs: !strata.seqs) -> tensor<?xi32> {
    return %ids : tensor<?xi32>
  }
}

//===- StrataFusedOps.td - strata fused ops ----------------*- tablegen -*-===//
//
// Fused ops: each maps onto one kernel (or one load-time transformation) and
// is introduced by a pass of the pipeline, never by the builder. Their
// verifiers are as strict as those of the generic ops so that a pass that
// builds one wrongly fails at the pass, not in the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_FUSED_OPS_TD
#define STRATA_FUSED_OPS_TD

include "ir/StrataBase.td"

//===----------------------------------------------------------------------===//
// Weight packing
//===----------------------------------------------------------------------===//

def Strata_ConcatWeightsOp : Strata_Op<"concat_weights", [Pure]> {
  let summary = "load-time concatenation of weights";
  let description = [{
    Concatenates parameters along `axis` when the plan is loaded, so that one
    GEMM replaces several: q, k and v projections become one packed QKV
    projection, gate and up one gate-up projection. The operand order is the
    order of the slices in the result (for QKV: q rows, then k, then v), so
    the packing is fully recorded by the operands' types. Biases (rank 1)
    are packed the same way along axis 0.

    ```mlir
    %wqkv = strata.concat_weights %wq, %wk, %wv {axis = 0 : i64} : tensor<128x64xf16>, tensor<64x64xf16>, tensor<64x64xf16> -> tensor<256x64xf16>
    %bqkv = strata.concat_weights %bq, %bk, %bv {axis = 0 : i64} : tensor<128xf16>, tensor<64xf16>, tensor<64xf16> -> tensor<256xf16>
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[Strata_Vector, Strata_Matrix]>>:$inputs,
                       I64Attr:$axis);
  let results = (outs AnyTypeOf<[Strata_Vector, Strata_Matrix]>:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RoPE + KV write
//===----------------------------------------------------------------------===//

def Strata_RopeKVWriteOp : Strata_Op<"rope_kv_write",
    [AttrSizedOperandSegments]> {
  let summary = "fused (QK-norm +) RoPE + KV-cache write";
  let description = [{
    Takes the packed QKV projection `qkv : [T, Hq + 2*Hkv, D]` (heads in the
    order q, k, v), optionally applies the per-head RMSNorm of q and k
    (`q_norm` / `k_norm` weights of shape `[D]`, both or neither, with
    `qk_norm_eps`), rotates q and k like `strata.rope`, writes k and v into
    layer `layer` of the cache and returns the new cache. Three variants:

    - `packed` (prefill onto an empty cache): q and k are rotated in place;
      the first result has the type of `qkv` and feeds
      `strata.prefill_attention`, which reads k and v from it.
    - `continuous` (extend and decode): q is written out separately; the
      first result is `[T, Hq, D]`.
    - `tree` (speculative verification): as `continuous`, but `positions`
      are the positions of the tree nodes (depth + prefix length).

    ```mlir
    %qkv_r, %c1 = strata.rope_kv_write packed %qkv, %pos, %c0, %seqs pairing neox scaling none {layer = 0 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x8x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
    %q, %c2 = strata.rope_kv_write continuous %qkv, %pos, %c1, %seqs pairing neox scaling none q_norm(%qn : tensor<32xf16>) k_norm(%kn : tensor<32xf16>) {layer = 1 : i64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, qk_norm_eps = 1.000000e-06 : f64, rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x8x32xf16>, tensor<?xi32>, !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
    ```
  }];
  let arguments = (ins Strata_RopeVariantAttr:$variant,
      Strata_Act3D:$qkv, Strata_TokenTensor:$positions,
      Strata_KVCacheType:$cache, Strata_SeqsType:$seqs,
      Optional<Strata_Vector>:$q_norm_weight,
      Optional<Strata_Vector>:$k_norm_weight,
      I64Attr:$layer, I64Attr:$num_q_heads, I64Attr:$num_kv_heads,
      I64Attr:$rotary_dim, F64Attr:$theta,
      Strata_RopePairingKindAttr:$pairing, Strata_RopeScalingKindAttr:$scaling,
      DefaultValuedAttr<F64Attr, "1.0">:$scaling_factor,
      DefaultValuedAttr<F64Attr, "1.0">:$low_freq_factor,
      DefaultValuedAttr<F64Attr, "4.0">:$high_freq_factor,
      DefaultValuedAttr<I64Attr, "0">:$original_max_positions,
      OptionalAttr<F64Attr>:$qk_norm_eps);
  let results = (outs Strata_Act3D:$out, Strata_KVCacheType:$new_cache);
  let assemblyFormat = [{
    custom<EnumKeyword>($variant) $qkv `,` $positions `,` $cache `,` $seqs
    `pairing` custom<EnumKeyword>($pairing)
    `scaling` custom<EnumKeyword>($scaling)
    (`q_norm` `(` $q_norm_weight^ `:` type($q_norm_weight) `)`)?
    (`k_norm` `(` $k_norm_weight^ `:` type($k_norm_weight) `)`)?
    attr-dict `:` type($qkv) `,` type($positions) `,` qualified(type($cache))
    `->` type($out) `,` qualified(type($new_cache))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Softmax attention kernels
//===----------------------------------------------------------------------===//

def Strata_PrefillAttentionOp : Strata_Op<"prefill_attention", [Pure]> {
  let summary = "causal attention over the fresh tokens of a packed QKV";
  let description = [{
    Prefill onto an empty cache: every sequence attends causally to its own
    new tokens only, so k and v are read straight from the packed (rotated)
    QKV buffer `[T, Hq + 2*Hkv, D]` instead of the cache. `sliding_window`
    > 0 limits each query to that many most recent positions.

    ```mlir
    %o = strata.prefill_attention %qkv_r, %seqs {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : tensor<?x8x32xf16> -> tensor<?x4x32xf16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$qkv, Strata_SeqsType:$seqs,
      I64Attr:$num_q_heads, I64Attr:$num_kv_heads, F64Attr:$scale,
      DefaultValuedAttr<I64Attr, "0">:$sliding_window);
  let results = (outs Strata_Act3D:$result);
  let assemblyFormat = [{
    $qkv `,` $seqs attr-dict `:` type($qkv) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Attention of q against the paged cache; the three kernels share operands.
class Strata_CachedAttentionOp<string mnemonic>
    : Strata_Op<mnemonic, [Pure, AllTypesMatch<["q", "result"]>]> {
  let results = (outs Strata_Act3D:$result);
  let hasVerifier = 1;
}

def Strata_ExtendAttentionOp
    : Strata_CachedAttentionOp<"extend_attention"> {
  let summary = "chunked-prefill attention against the paged cache";
  let description = [{
    Each new token of a sequence attends causally to the sequence's cached
    positions and to the new tokens before it, all read from the paged cache
    (written by `strata.rope_kv_write continuous`).

    ```mlir
    %o = strata.extend_attention %q, %c1, %seqs {layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$q, Strata_KVCacheType:$cache,
      Strata_SeqsType:$seqs, I64Attr:$layer, F64Attr:$scale,
      DefaultValuedAttr<I64Attr, "0">:$sliding_window);
  let assemblyFormat = [{
    $q `,` $cache `,` $seqs attr-dict `:` type($q) `,` qualified(type($cache))
  }];
}

def Strata_PagedDecodeAttentionOp
    : Strata_CachedAttentionOp<"paged_decode_attention"> {
  let summary = "one-token-per-sequence attention with split-K";
  let description = [{
    Decode: one query token per sequence against its whole (paged) history.
    Long histories are split into at most `max_splits` partitions reduced
    afterwards (flash-decoding), so that small batches still fill the GPU.

    ```mlir
    %o = strata.paged_decode_attention %q, %c1, %seqs {layer = 0 : i64, max_splits = 8 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$q, Strata_KVCacheType:$cache,
      Strata_SeqsType:$seqs, I64Attr:$layer, F64Attr:$scale,
      DefaultValuedAttr<I64Attr, "0">:$sliding_window, I64Attr:$max_splits);
  let assemblyFormat = [{
    $q `,` $cache `,` $seqs attr-dict `:` type($q) `,` qualified(type($cache))
  }];
}

def Strata_TreeAttentionOp : Strata_CachedAttentionOp<"tree_attention"> {
  let summary = "attention of a speculative token tree";
  let description = [{
    Verification of speculative drafts: the new tokens of a sequence form a
    tree (`parent_ids[t]` is the index of the parent of token `t` within its
    sequence, -1 for a root). Each token attends to the cached prefix and to
    its ancestors in the tree.

    ```mlir
    %o = strata.tree_attention %q, %c1, %seqs, %parents {layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : tensor<?x4x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>, tensor<?xi32>
    ```
  }];
  let arguments = (ins Strata_Act3D:$q, Strata_KVCacheType:$cache,
      Strata_SeqsType:$seqs, Strata_TokenTensor:$parent_ids, I64Attr:$layer,
      F64Attr:$scale, DefaultValuedAttr<I64Attr, "0">:$sliding_window);
  let assemblyFormat = [{
    $q `,` $cache `,` $seqs `,` $parent_ids attr-dict `:` type($q) `,`
    qualified(type($cache)) `,` type($parent_ids)
  }];
}

//===----------------------------------------------------------------------===//
// Linear attention kernels
//===----------------------------------------------------------------------===//

class Strata_LightningOp<string mnemonic>
    : Strata_Op<mnemonic, [AllTypesMatch<["state", "new_state"]>]> {
  let results = (outs Strata_Act3D:$out, Strata_LinearStateType:$new_state);
  let hasVerifier = 1;
}

def Strata_LightningPrefillOp : Strata_LightningOp<"lightning_prefill"> {
  let summary = "chunked lightning attention over many tokens";
  let description = [{
    Linear attention with per-head decay over the new tokens of each
    sequence, in chunks of `chunk_size` tokens (quadratic inside a chunk,
    recurrent across chunks), starting from and updating the state slot of
    the sequence. Works for any number of new tokens.

    ```mlir
    %o, %s1 = strata.lightning_prefill %q, %k, %v, %s0, %seqs {chunk_size = 256 : i64, decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$q, Strata_Act3D:$k, Strata_Act3D:$v,
      Strata_LinearStateType:$state, Strata_SeqsType:$seqs, I64Attr:$layer,
      DenseF64ArrayAttr:$decay_slopes, I64Attr:$chunk_size);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $state `,` $seqs attr-dict `:` type($q) `,`
    type($k) `,` type($v) `,` qualified(type($state)) `->` type($out)
  }];
}

def Strata_LightningDecodeOp : Strata_LightningOp<"lightning_decode"> {
  let summary = "one-token recurrent step of lightning attention";
  let description = [{
    Decode step of linear attention: one token per sequence, state read from
    and written back to the sequence's slot; rows whose slot is -1 (padding)
    are skipped.

    ```mlir
    %o, %s1 = strata.lightning_decode %q, %k, %v, %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$q, Strata_Act3D:$k, Strata_Act3D:$v,
      Strata_LinearStateType:$state, Strata_SeqsType:$seqs, I64Attr:$layer,
      DenseF64ArrayAttr:$decay_slopes);
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $state `,` $seqs attr-dict `:` type($q) `,`
    type($k) `,` type($v) `,` qualified(type($state)) `->` type($out)
  }];
}

//===----------------------------------------------------------------------===//
// Norm and MLP fusions
//===----------------------------------------------------------------------===//

def Strata_AddRMSNormOp : Strata_Op<"add_rms_norm",
    [Pure, AllTypesMatch<["x", "residual", "normed", "sum"]>]> {
  let summary = "residual add followed by RMSNorm";
  let description = [{
    `sum = x_scale * x + residual_scale * residual`,
    `normed = rms_norm(sum, weight, eps)`: the residual stream is read and
    written once instead of twice. An absent scale is 1 (the scales carry
    those of the `strata.add` it replaces).

    ```mlir
    %n, %h1 = strata.add_rms_norm %o, %h0, %w {eps = 1.000000e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$x, Strata_Act2D:$residual,
                       Strata_Vector:$weight, F64Attr:$eps,
                       OptionalAttr<F64Attr>:$x_scale,
                       OptionalAttr<F64Attr>:$residual_scale);
  let results = (outs Strata_Act2D:$normed, Strata_Act2D:$sum);
  let assemblyFormat = [{
    $x `,` $residual `,` $weight attr-dict `:` type($x) `,` type($weight)
  }];
  let hasVerifier = 1;
}

def Strata_SwiGLUOp : Strata_Op<"swiglu", [Pure]> {
  let summary = "silu(gate) * up on a packed gate-up projection";
  let description = [{
    `gate_up : [T, 2I]` holds the gate projection in its first `I` columns
    and the up projection in the last `I` (the order of
    `strata.concat_weights %gate, %up`); the result is `silu(gate) * up`.

    ```mlir
    %a = strata.swiglu %gu : tensor<?x512xf16> -> tensor<?x256xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$gate_up);
  let results = (outs Strata_Act2D:$result);
  let assemblyFormat = "$gate_up attr-dict `:` type($gate_up) `->` type($result)";
  let hasVerifier = 1;
}

#endif // STRATA_FUSED_OPS_TD

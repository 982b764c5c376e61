//===- StrataOps.td - strata generic ops -------------------*- tablegen -*-===//
//
// Generic ops: one op per logical step of the model as written. The builder
// (ModelBuilder.cpp) emits only these; fused ops (StrataFusedOps.td) replace
// them later in the pipeline.
//
// Shapes use T for the flattened token dimension (all tokens of all sequences
// of the batch, concatenated), H for hidden sizes, D for head_dim.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_OPS_TD
#define STRATA_OPS_TD

include "ir/StrataBase.td"

//===----------------------------------------------------------------------===//
// Parameters and embedding
//===----------------------------------------------------------------------===//

def Strata_WeightOp : Strata_Op<"weight", [Pure]> {
  let summary = "a named model parameter";
  let description = [{
    A parameter of the model, named as in the Hugging Face checkpoint (for
    example `model.layers.0.self_attn.q_proj.weight`). Layouts follow
    Hugging Face too: linear weights are `[out_features, in_features]`.
    The shape must be static; the runtime binds the name to a buffer (random
    initialization or a safetensors tensor) when the plan is loaded.

    ```mlir
    %w = strata.weight "model.layers.0.mlp.gate_proj.weight" : tensor<256x64xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs RankedTensorOf<[Strata_Float]>:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Strata_EmbeddingOp : Strata_Op<"embedding",
    [Pure, Strata_InferResultShape]> {
  let summary = "token embedding lookup";
  let description = [{
    Gathers one row of the `[vocab, hidden]` table per token id.

    ```mlir
    %h = strata.embedding %ids, %table : tensor<?xi32>, tensor<1000x64xf16> -> tensor<?x64xf16>
    ```
  }];
  let arguments = (ins Strata_TokenTensor:$ids, Strata_Matrix:$table);
  let results = (outs Strata_Act2D:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` type($ids) `,` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

//===----------------------------------------------------------------------===//
// Norms and projections
//===----------------------------------------------------------------------===//

def Strata_RMSNormOp : Strata_Op<"rms_norm",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "RMSNorm over the last dimension";
  let description = [{
    `result = x / sqrt(mean(x^2) + eps) * weight`, row by row, computed in
    f32 and stored in the element type of `x`.

    ```mlir
    %y = strata.rms_norm %x, %w {eps = 1.000000e-05 : f64} : tensor<?x64xf16>, tensor<64xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$x, Strata_Vector:$weight, F64Attr:$eps);
  let results = (outs Strata_Act2D:$result);
  let assemblyFormat = "$x `,` $weight attr-dict `:` type($x) `,` type($weight)";
  let hasVerifier = 1;
}

def Strata_LinearOp : Strata_Op<"linear",
    [Pure, Strata_InferResultShape]> {
  let summary = "dense projection x * W^T (+ bias)";
  let description = [{
    `result[t, n] = sum_k x[t, k] * weight[n, k] (+ bias[n])`. The weight is
    `[out_features, in_features]` as in Hugging Face checkpoints.

    ```mlir
    %q = strata.linear %x, %wq : tensor<?x64xf16>, tensor<128x64xf16> -> tensor<?x128xf16>
    %k = strata.linear %x, %wk, %bk : tensor<?x64xf16>, tensor<32x64xf16>, tensor<32xf16> -> tensor<?x32xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$x, Strata_Matrix:$weight,
                       Optional<Strata_Vector>:$bias);
  let results = (outs Strata_Act2D:$result);
  let assemblyFormat = [{
    $x `,` $weight (`,` $bias^)? attr-dict `:` type($x) `,` type($weight)
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

def Strata_SplitHeadsOp : Strata_Op<"split_heads",
    [Pure, Strata_InferResultShape]> {
  let summary = "reshape [T, H*D] to [T, H, D]";
  let description = [{
    Views the features of each token as `num_heads` heads of equal size.

    ```mlir
    %qh = strata.split_heads %q {num_heads = 4 : i64} : tensor<?x128xf16> -> tensor<?x4x32xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$x, I64Attr:$num_heads);
  let results = (outs Strata_Act3D:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

def Strata_MergeHeadsOp : Strata_Op<"merge_heads",
    [Pure, Strata_InferResultShape]> {
  let summary = "reshape [T, H, D] to [T, H*D]";
  let description = [{
    The inverse of `strata.split_heads`.

    ```mlir
    %o = strata.merge_heads %oh : tensor<?x4x32xf16> -> tensor<?x128xf16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$x);
  let results = (outs Strata_Act2D:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

def Strata_HeadSliceOp : Strata_Op<"head_slice",
    [Pure, Strata_InferResultShape]> {
  let summary = "a contiguous range of heads of [T, H, D]";
  let description = [{
    Heads `first` to `first + num_heads - 1` of every token. The fusion of
    the q, k and v projections into one packed projection `[T, Hq + 2*Hkv,
    D]` slices q, k and v out of it with this op, so that consumers that are
    not fused (RoPE, QK-norm, the KV append, attention) keep reading their
    own tensors; a kernel reads the slice as a strided view of the packed
    buffer, nothing is copied.

    ```mlir
    %k = strata.head_slice %qkv {first = 4 : i64, num_heads = 2 : i64} : tensor<?x8x32xf16> -> tensor<?x2x32xf16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$x, I64Attr:$first, I64Attr:$num_heads);
  let results = (outs Strata_Act3D:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

def Strata_HeadNormOp : Strata_Op<"head_norm",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "per-head RMSNorm over head_dim (QK-norm)";
  let description = [{
    RMSNorm of every head of every token over its `head_dim` elements, with
    one weight vector shared by all heads (Qwen3's `q_norm` / `k_norm`).

    ```mlir
    %qn = strata.head_norm %qh, %w {eps = 1.000000e-06 : f64} : tensor<?x4x32xbf16>, tensor<32xbf16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$x, Strata_Vector:$weight, F64Attr:$eps);
  let results = (outs Strata_Act3D:$result);
  let assemblyFormat = "$x `,` $weight attr-dict `:` type($x) `,` type($weight)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Rotary embedding and attention
//===----------------------------------------------------------------------===//

def Strata_RopeOp : Strata_Op<"rope",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates the first `rotary_dim` elements of every head of token `t` by
    angles `positions[t] * inv_freq[i]`, `inv_freq[i] = theta^(-2i /
    rotary_dim)`, after the frequency scaling given by `scaling`
    (`scaling_factor`, and for `llama3` also `low_freq_factor`,
    `high_freq_factor` and `original_max_positions`). `pairing` says which
    elements form a rotary pair. The remaining `head_dim - rotary_dim`
    elements pass through.

    ```mlir
    %qr = strata.rope %qh, %pos pairing neox scaling none {rotary_dim = 32 : i64, theta = 1.000000e+04 : f64} : tensor<?x4x32xf16>, tensor<?xi32>
    ```
  }];
  let arguments = (ins Strata_Act3D:$x, Strata_TokenTensor:$positions,
      I64Attr:$rotary_dim, F64Attr:$theta,
      Strata_RopePairingKindAttr:$pairing, Strata_RopeScalingKindAttr:$scaling,
      DefaultValuedAttr<F64Attr, "1.0">:$scaling_factor,
      DefaultValuedAttr<F64Attr, "1.0">:$low_freq_factor,
      DefaultValuedAttr<F64Attr, "4.0">:$high_freq_factor,
      DefaultValuedAttr<I64Attr, "0">:$original_max_positions);
  let results = (outs Strata_Act3D:$result);
  let assemblyFormat = [{
    $x `,` $positions `pairing` custom<EnumKeyword>($pairing)
    `scaling` custom<EnumKeyword>($scaling) attr-dict `:` type($x) `,`
    type($positions)
  }];
  let hasVerifier = 1;
}

def Strata_KVAppendOp : Strata_Op<"kv_append",
    [AllTypesMatch<["cache", "result"]>]> {
  let summary = "write the keys and values of new tokens into the cache";
  let description = [{
    Stores `k` and `v` (`[T, kv_heads, head_dim]`) of layer `layer` at the
    cache slots that `seqs` assigns to the new tokens, and returns the cache
    that holds them. Attention reads the returned value, so the write is
    ordered before the read by the use-def chain alone.

    The op is not `Pure` on purpose: it becomes an in-place update of the
    block pool, and must neither be folded away nor merged with another
    write.

    ```mlir
    %c1 = strata.kv_append %k, %v, %c0, %seqs {layer = 0 : i64} : tensor<?x2x32xf16>, tensor<?x2x32xf16>, !strata.kv_cache<2, 2, 32, 16, f16>
    ```
  }];
  let arguments = (ins Strata_Act3D:$k, Strata_Act3D:$v,
                       Strata_KVCacheType:$cache, Strata_SeqsType:$seqs,
                       I64Attr:$layer);
  let results = (outs Strata_KVCacheType:$result);
  let assemblyFormat = [{
    $k `,` $v `,` $cache `,` $seqs attr-dict `:` type($k) `,` type($v) `,`
    qualified(type($cache))
  }];
  let hasVerifier = 1;
}

def Strata_AttentionOp : Strata_Op<"attention"> {
  let summary = "softmax or linear attention of one layer";
  let description = [{
    One op for both token mixers; `kind` selects the operands.

    `softmax`: `inputs = (q)` with `q : [T, Hq, D]`, `state` is the KV cache
    after this layer's `strata.kv_append`. Each query attends to the cached
    positions of its own sequence (`causal`: only positions up to its own;
    `sliding_window` > 0: only the last `sliding_window` of those). `Hq` must
    be a multiple of the cache's `kv_heads` (grouped-query attention).
    Attributes: `layer` (index among softmax layers), `scale`, `causal`,
    `sliding_window` (0 = unlimited). One result: `[T, Hq, D]`.

    `linear`: `inputs = (q, k, v)` with `q, k : [T, H, Dk]`, `v : [T, H,
    Dv]`, `state` is the `!strata.linear_state`. Lightning attention with a
    per-head exponential decay `exp(-decay_slopes[h])` per token. Attributes:
    `layer` (index among linear layers), `decay_slopes` (one per head, > 0).
    Two results: `[T, H, Dv]` and the updated state.

    ```mlir
    %o = strata.attention softmax(%q), %c1, %seqs {causal, layer = 0 : i64, scale = 0.17677669529663687 : f64, sliding_window = 0 : i64} : (tensor<?x4x32xf16>), !strata.kv_cache<2, 2, 32, 16, f16> -> tensor<?x4x32xf16>
    %o2, %s1 = strata.attention linear(%q2, %k2, %v2), %s0, %seqs {decay_slopes = array<f64: 0.5, 0.25>, layer = 0 : i64} : (tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>), !strata.linear_state<1, 2, 16, 16, f32> -> tensor<?x2x16xf16>, !strata.linear_state<1, 2, 16, 16, f32>
    ```
  }];
  let arguments = (ins Strata_AttentionKindAttr:$kind,
      Variadic<Strata_Act3D>:$inputs,
      AnyTypeOf<[Strata_KVCacheType, Strata_LinearStateType]>:$state,
      Strata_SeqsType:$seqs, I64Attr:$layer,
      OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
      OptionalAttr<I64Attr>:$sliding_window,
      OptionalAttr<DenseF64ArrayAttr>:$decay_slopes);
  let results = (outs Strata_Act3D:$out,
                      Optional<Strata_LinearStateType>:$new_state);
  let assemblyFormat = [{
    custom<EnumKeyword>($kind) `(` $inputs `)` `,` $state `,` $seqs attr-dict `:`
    `(` type($inputs) `)` `,` qualified(type($state)) `->` type(results)
  }];
  let builders = [
    // Softmax: the result has the type of q.
    OpBuilder<(ins "::mlir::Value":$q, "::mlir::Value":$cache,
                   "::mlir::Value":$seqs, "int64_t":$layer, "double":$scale,
                   "bool":$causal, "int64_t":$slidingWindow)>,
    // Linear: the result has the type of v, the new state that of state.
    OpBuilder<(ins "::mlir::Value":$q, "::mlir::Value":$k,
                   "::mlir::Value":$v, "::mlir::Value":$state,
                   "::mlir::Value":$seqs, "int64_t":$layer,
                   "::llvm::ArrayRef<double>":$decaySlopes)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Strata_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : Strata_Op<mnemonic, !listconcat(traits,
          [Pure, SameOperandsAndResultType])> {
  // The traits and operand constraints are the whole contract of these ops.
  let results = (outs Strata_Act2D:$result);
}

def Strata_SiluMulOp : Strata_ElementwiseOp<"silu_mul"> {
  let summary = "silu(gate) * up";
  let description = [{
    The activation of a gated MLP: `silu(gate) * up`, elementwise.

    ```mlir
    %a = strata.silu_mul %gate, %up : tensor<?x256xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$gate, Strata_Act2D:$up);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Strata_SiluOp : Strata_ElementwiseOp<"silu"> {
  let summary = "silu(x) = x * sigmoid(x)";
  let description = [{
    Elementwise SiLU (MiniMax applies it to q, k and v of linear-attention
    layers).

    ```mlir
    %y = strata.silu %x : tensor<?x128xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$x);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Strata_SigmoidMulOp : Strata_ElementwiseOp<"sigmoid_mul"> {
  let summary = "sigmoid(gate) * x";
  let description = [{
    The output gate of MiniMax linear-attention layers: `sigmoid(gate) * x`,
    elementwise.

    ```mlir
    %y = strata.sigmoid_mul %gate, %x : tensor<?x128xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$gate, Strata_Act2D:$x);
  let assemblyFormat = "$gate `,` $x attr-dict `:` type($result)";
}

def Strata_AddOp : Strata_ElementwiseOp<"add"> {
  let summary = "elementwise sum (residual connection)";
  let description = [{
    `lhs_scale * lhs + rhs_scale * rhs`; an absent scale is 1. MiniMax scales
    the residual stream (alpha, on lhs) and the block output (beta, on rhs).

    ```mlir
    %h1 = strata.add %h0, %o : tensor<?x64xf16>
    %h2 = strata.add %h1, %o {lhs_scale = 1.5 : f64, rhs_scale = 0.5 : f64} : tensor<?x64xf16>
    ```
  }];
  let arguments = (ins Strata_Act2D:$lhs, Strata_Act2D:$rhs,
                       OptionalAttr<F64Attr>:$lhs_scale,
                       OptionalAttr<F64Attr>:$rhs_scale);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

def Strata_LogitsOp : Strata_Op<"logits",
    [Pure, Strata_InferResultShape]> {
  let summary = "output projection to f32 logits";
  let description = [{
    Projects hidden states onto the `[vocab, hidden]` output matrix (the
    embedding table when embeddings are tied). Without `all_tokens` only the
    last token of each sequence is projected (one row per sequence, the
    common case of generation); with it, every token is (scoring, speculative
    verification). Logits are always f32.

    ```mlir
    %l = strata.logits %h, %w, %seqs : tensor<?x64xf16>, tensor<1000x64xf16> -> tensor<?x1000xf32>
    ```
  }];
  let arguments = (ins Strata_Act2D:$hidden, Strata_Matrix:$weight,
                       Strata_SeqsType:$seqs, UnitAttr:$all_tokens);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $hidden `,` $weight `,` $seqs attr-dict `:` type($hidden) `,`
    type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

def Strata_SampleOp : Strata_Op<"sample",
    [Strata_InferResultShape]> {
  let summary = "pick the next token of every row of logits";
  let description = [{
    Sampling parameters (temperature, top-k, top-p, seed) are per-sequence
    run-time data carried by `seqs`. Not `Pure`: it draws random numbers.

    ```mlir
    %next = strata.sample %l, %seqs : tensor<?x1000xf32> -> tensor<?xi32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[F32]>:$logits, Strata_SeqsType:$seqs);
  let results = (outs 1DTensorOf<[I32]>:$result);
  let assemblyFormat = "$logits `,` $seqs attr-dict `:` type($logits) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = Strata_RankOnlyCompatibleReturnTypes;
}

#endif // STRATA_OPS_TD

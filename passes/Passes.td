//===- Passes.td - strata passes ---------------------------*- tablegen -*-===//
//
// Every pass of the compiler, in pipeline order. Each runs alone from
// strata-opt under its flag; Pipelines.cpp strings them together.
// strata-specialize-phase is a module pass: it creates the phase functions
// and writes on each the facts the later passes need. Every later pass runs
// on one func.func at a time, reads only that function's facts, and rewrites
// it with patterns under the greedy driver; its DEBUG_TYPE is its flag.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PASSES_TD
#define STRATA_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializePhase : Pass<"strata-specialize-phase", "::mlir::ModuleOp"> {
  let summary = "clone the generic forward into one function per phase";
  let description = [{
    Replaces `func.func @forward` by `@prefill`, `@extend`, `@decode` and
    `@verify`, each a copy of the forward carrying the facts that the later
    passes choose kernels by:

    | function | facts |
    |---|---|
    | `@prefill` | `strata.phase = #strata<phase prefill>`, `strata.cache_empty = true` |
    | `@extend` | `strata.phase = #strata<phase extend>`, `strata.cache_empty = false` |
    | `@decode` | `strata.phase = #strata<phase decode>`, `strata.cache_empty = false`, `strata.tokens_per_seq = 1` |
    | `@verify` | `strata.phase = #strata<phase verify>`, `strata.cache_empty = false`, `strata.draft = "tree"` or `"chain"` |

    Each also gets a copy of the module's `strata.max_positions` and
    `strata.linear_chunk_size` when the model states them, so that the
    passes after this one read everything from the function they rewrite
    (the module keeps its own copy for codegen).

    `@verify` takes one more argument after `%seqs`, the parent of every
    draft token within its sequence (`tensor<?xi32>`, -1 for a root; marked
    `{strata.parent_ids}`), and returns the logits of every token
    (`strata.logits` gets `all_tokens`). A recurrent state cannot follow two
    branches at once, so a model with linear-attention layers verifies
    chains only (`strata.draft = "chain"`: each draft token's parent is the
    token before it).

    Does nothing when the module has no `@forward` or already has phase
    functions.
  }];
  let options = [
    ListOption<"phases", "phases", "std::string",
               "phases to emit, in order (default: prefill,extend,decode,"
               "verify)">
  ];
  let dependentDialects = ["::strata::StrataDialect",
                           "::mlir::func::FuncDialect"];
}

def FuseQKV : Pass<"strata-fuse-qkv", "::mlir::func::FuncOp"> {
  let summary = "pack the q, k and v projections into one GEMM";
  let description = [{
    In every phase function, the three projections of one softmax layer
    (`strata.linear` of the same input, split into heads and feeding that
    layer's rotation, KV append and attention) become one projection onto
    `strata.concat_weights %wq, %wk, %wv {axis = 0}` (biases packed the same
    way) whose output, split into `Hq + 2*Hkv` heads, is the packed
    `[T, Hq+Hk+Hv, D]` buffer of the fused kernels. `strata.head_slice`
    hands q, k and v to their consumers, so that every consumer stays
    correct whether or not later fusions fire.

    Does not fire on linear-attention layers (their projections are
    activated one by one before the head split), on projections of different
    inputs, when q and kv head sizes differ, when only some projections have
    a bias, or in functions without a `strata.phase`.
  }];
  let dependentDialects = ["::strata::StrataDialect"];
}

def FuseRopeKV : Pass<"strata-fuse-rope-kv", "::mlir::func::FuncOp"> {
  let summary = "fuse (QK-norm +) RoPE of q and k and the KV append";
  let description = [{
    `strata.rope` of q and k, the optional QK-norm before it and
    `strata.kv_append`, all reading a packed QKV buffer (from
    `strata-fuse-qkv`), become one `strata.rope_kv_write` whose variant
    follows from the function's facts:

    - `strata.cache_empty = true` (prefill): `packed`, q and k rotated in
      place in the packed buffer, KV written from position 0; q is sliced
      from the op's packed result;
    - `strata.draft` present (verify): `tree`, positions are the token
      position ids of the tree nodes;
    - otherwise (extend, decode): `continuous`, q written to its own buffer,
      KV written at each sequence's end.

    QK-norm is folded in as the op's `q_norm`/`k_norm` operands, which the
    kernel applies before the rotation; when a norm follows the rotation
    instead, or only one of q and k is normed, the pass does not fire. It
    also does not fire without a packed QKV buffer (`strata-fuse-qkv`
    disabled), when q and k are rotated differently, or when the rotated k
    or any slice has another user.
  }];
  let dependentDialects = ["::strata::StrataDialect"];
}

def SelectAttention : Pass<"strata-select-attention", "::mlir::func::FuncOp"> {
  let summary = "pick the attention kernel of every layer from the phase";
  let description = [{
    Replaces every `strata.attention` of a phase function by the kernel its
    phase needs, carrying `layer`, `scale` and `sliding_window` over:

    | phase | softmax | linear |
    |---|---|---|
    | prefill | `prefill_attention` on the packed rotated QKV when `rope_kv_write packed` produced q and the cache; otherwise `extend_attention` (also correct on an empty cache) | `lightning_prefill` |
    | extend | `extend_attention` | `lightning_prefill` |
    | decode | `paged_decode_attention` with `max_splits` | `lightning_decode` |
    | verify | `tree_attention` with the function's parent ids | `lightning_prefill` over the chain (`strata.draft = "chain"` only) |

    `max_splits` is the pass option, or when 0, one split per
    `split-tokens` positions of the function's `strata.max_positions`,
    clamped to [1, 64] (16 without the fact). `chunk_size` is the pass
    option, or when 0 the function's `strata.linear_chunk_size` (64 without
    it).

    With `required-only`, only the verify phase's softmax attention is
    replaced: the generic op cannot express the tree mask, so that
    selection is what makes the verify function correct, not an
    optimization. Does not fire on non-causal attention, on linear
    attention of a verify function whose draft is a tree, or in functions
    without a `strata.phase`.
  }];
  let options = [
    Option<"maxSplits", "max-splits", "int64_t", "0",
           "split-KV partitions of paged decode attention (0: derive from "
           "strata.max_positions)">,
    Option<"splitTokens", "split-tokens", "int64_t", "512",
           "positions per split-KV partition when max-splits is derived">,
    Option<"chunkSize", "chunk-size", "int64_t", "0",
           "tokens per chunk of lightning prefill (0: the module's "
           "strata.linear_chunk_size)">,
    Option<"requiredOnly", "required-only", "bool", "false",
           "select only the kernels the phase cannot do without (tree "
           "attention in verify)">
  ];
  let dependentDialects = ["::strata::StrataDialect"];
}

def FuseAddRMSNorm : Pass<"strata-fuse-add-rmsnorm", "::mlir::func::FuncOp"> {
  let summary = "fuse a residual add and the RMSNorm of its sum";
  let description = [{
    `%s = strata.add %res, %x` followed by `strata.rms_norm %s` becomes one
    `strata.add_rms_norm %x, %res` with both results kept: the normed
    tensor replaces the norm, the sum replaces every other use of the add
    (the residual stream). Does not fire on a norm of anything but an add
    (the first layer's input norm, linear attention's output norm), when
    the sum feeds more than one norm, or in functions without a
    `strata.phase`.
  }];
  let dependentDialects = ["::strata::StrataDialect"];
}

def FuseSwiGLU : Pass<"strata-fuse-swiglu", "::mlir::func::FuncOp"> {
  let summary = "pack gate and up projections and fuse silu(gate) * up";
  let description = [{
    `strata.silu_mul` of two `strata.linear` of the same input becomes one
    projection onto `strata.concat_weights %wgate, %wup {axis = 0}` followed
    by `strata.swiglu`. Does not fire when gate and up project different
    inputs, when either projection has another user, when only one has a
    bias, or in functions without a `strata.phase`.
  }];
  let dependentDialects = ["::strata::StrataDialect"];
}

#endif // STRATA_PASSES_TD

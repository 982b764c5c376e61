//===- StrataTypes.td - strata types -----------------------*- tablegen -*-===//
//
// Types of the state that outlives one forward step. Activations use builtin
// ranked tensors.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TYPES_TD
#define STRATA_TYPES_TD

include "ir/StrataDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Strata_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Strata_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Strata_KVCacheType : Strata_Type<"KVCache", "kv_cache"> {
  let summary = "paged key/value cache of the softmax-attention layers";
  let description = [{
    The key and value cache of every softmax-attention layer of a model,
    stored in fixed-size blocks of `block_size` token positions (vLLM-style
    paging). The block pool is allocated by the runtime; which blocks belong
    to which sequence is described by the block tables in `!strata.seqs`.

    Parameters: number of softmax layers, KV heads, head dimension, block
    size (a power of two) and element type (`f16`, `bf16` or `f32`).

    ```mlir
    !strata.kv_cache<32, 8, 128, 16, bf16>
    ```

    Values of this type are threaded through the program: `strata.kv_append`
    and the fused ops that write the cache return a new value, and every
    reader takes the value produced by the last writer.
  }];
  let parameters = (ins "int64_t":$layers, "int64_t":$kvHeads,
                        "int64_t":$headDim, "int64_t":$blockSize,
                        "::mlir::Type":$elementType);
  let assemblyFormat = [{
    `<` $layers `,` $kvHeads `,` $headDim `,` $blockSize `,` $elementType `>`
  }];
  let genVerifyDecl = 1;
}

def Strata_LinearStateType : Strata_Type<"LinearState", "linear_state"> {
  let summary = "recurrent state of the linear-attention layers";
  let description = [{
    One `key_dim x value_dim` matrix per head, per linear-attention layer and
    per sequence slot (slots are assigned by the runtime and named in
    `!strata.seqs`). The state accumulates over the whole history of a
    sequence, so it is always kept in `f32`.

    ```mlir
    !strata.linear_state<7, 64, 128, 128, f32>
    ```
  }];
  let parameters = (ins "int64_t":$layers, "int64_t":$heads,
                        "int64_t":$keyDim, "int64_t":$valueDim,
                        "::mlir::Type":$elementType);
  let assemblyFormat = [{
    `<` $layers `,` $heads `,` $keyDim `,` $valueDim `,` $elementType `>`
  }];
  let genVerifyDecl = 1;
}

def Strata_SeqsType : Strata_Type<"Seqs", "seqs"> {
  let summary = "per-batch sequence metadata";
  let description = [{
    Opaque handle on the description of the sequences of one batch: token
    offsets of each sequence in the flattened token dimension, new and cached
    lengths, KV block tables and linear-state slots. Its run-time layout is
    defined by the execution plan, not by the IR.

    ```mlir
    !strata.seqs
    ```
  }];
}

#endif // STRATA_TYPES_TD

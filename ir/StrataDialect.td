//===- StrataDialect.td - the strata dialect ---------------*- tablegen -*-===//
//
// The dialect record and the base class of every strata op. Types, enums and
// ops live in their own files (StrataTypes.td, StrataAttrs.td, StrataOps.td,
// StrataFusedOps.td) so that each stays readable on its own.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_DIALECT_TD
#define STRATA_DIALECT_TD

include "mlir/IR/OpBase.td"

def Strata_Dialect : Dialect {
  let name = "strata";
  let cppNamespace = "::strata";
  let summary = "An attention-aware dialect for LLM inference graphs.";
  let description = [{
    The `strata` dialect describes the forward pass of a decoder-only
    language model at the granularity of inference kernels: embedding,
    norms, projections, rotary embedding, KV-cache writes, softmax and linear
    attention, gated MLPs, logits and sampling.

    Activations are builtin ranked tensors whose leading dimension is the
    flattened token dimension `?` (every token of every sequence of the batch,
    concatenated; per-sequence offsets live in `!strata.seqs`). State that
    outlives a step (the paged KV cache, the linear-attention state) has its
    own type and is threaded through the program as SSA values: every op that
    updates it returns the new value, so that the order of writes and reads is
    explicit in the use-def chains.

    Generic ops mirror the model as written (one op per logical step); fused
    ops are introduced by the passes of the compiler pipeline and map onto
    single kernels.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let useFoldAPI = kEmitFoldAdaptorFolder;
  let extraClassDeclaration = [{
    // Defined next to the type storage classes (StrataTypes.cpp), which
    // registration needs complete.
    void registerTypes();
  }];
}

// Base class of every strata op.
class Strata_Op<string mnemonic, list<Trait> traits = []>
    : Op<Strata_Dialect, mnemonic, traits>;

#endif // STRATA_DIALECT_TD

//===- StrataAttrs.td - strata enum attributes -------------*- tablegen -*-===//
//
// Enum attributes. Inside op assembly formats they print as a bare keyword
// (`strata.attention softmax ...`); in an attribute dictionary or in the
// generic op form they print as `#strata<mnemonic keyword>`.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_ATTRS_TD
#define STRATA_ATTRS_TD

include "ir/StrataDialect.td"
include "mlir/IR/EnumAttr.td"

def Strata_RopeVariant : I32EnumAttr<"RopeVariant",
    "which fused RoPE + KV-write kernel a layer uses", [
      // Prefill onto an empty cache: q, k, v stay in the packed QKV buffer,
      // q and k are rotated in place.
      I32EnumAttrCase<"Packed", 0, "packed">,
      // Extend and decode: q is written out separately, k and v go to the
      // cache.
      I32EnumAttrCase<"Continuous", 1, "continuous">,
      // Speculative verification: positions are tree depths, not offsets.
      I32EnumAttrCase<"Tree", 2, "tree">]> {
  let cppNamespace = "::strata";
  let genSpecializedAttr = 0;
}
def Strata_RopeVariantAttr
    : EnumAttr<Strata_Dialect, Strata_RopeVariant, "rope_variant">;

def Strata_RopePairing : I32EnumAttr<"RopePairingKind",
    "how the two halves of a rotary pair are laid out in a head", [
      // Element i pairs with i + rotary_dim / 2 (Llama, Qwen, Mistral).
      I32EnumAttrCase<"Neox", 0, "neox">,
      // Elements 2i and 2i + 1 pair (GPT-J).
      I32EnumAttrCase<"GptJ", 1, "gptj">]> {
  let cppNamespace = "::strata";
  let genSpecializedAttr = 0;
}
def Strata_RopePairingKindAttr
    : EnumAttr<Strata_Dialect, Strata_RopePairing, "rope_pairing">;

def Strata_RopeScalingKind : I32EnumAttr<"RopeScalingKind",
    "frequency scaling applied to the rotary inverse frequencies", [
      I32EnumAttrCase<"None", 0, "none">,
      // Positions divided by scaling_factor.
      I32EnumAttrCase<"Linear", 1, "linear">,
      // Llama 3.1: per-frequency interpolation between low_freq_factor and
      // high_freq_factor wavelengths of original_max_positions.
      I32EnumAttrCase<"Llama3", 2, "llama3">]> {
  let cppNamespace = "::strata";
  let genSpecializedAttr = 0;
}
def Strata_RopeScalingKindAttr
    : EnumAttr<Strata_Dialect, Strata_RopeScalingKind, "rope_scaling">;

def Strata_AttentionKind : I32EnumAttr<"AttentionKind",
    "the token mixer of an attention op", [
      I32EnumAttrCase<"Softmax", 0, "softmax">,
      I32EnumAttrCase<"Linear", 1, "linear">]> {
  let cppNamespace = "::strata";
  let genSpecializedAttr = 0;
}
def Strata_AttentionKindAttr
    : EnumAttr<Strata_Dialect, Strata_AttentionKind, "attention_kind">;

def Strata_Phase : I32EnumAttr<"Phase",
    "the step of the generation loop a function is specialized for", [
      // Whole prompts onto an empty cache.
      I32EnumAttrCase<"Prefill", 0, "prefill">,
      // Chunked prefill onto a non-empty cache.
      I32EnumAttrCase<"Extend", 1, "extend">,
      // One new token per sequence.
      I32EnumAttrCase<"Decode", 2, "decode">,
      // A speculative token tree per sequence.
      I32EnumAttrCase<"Verify", 3, "verify">]> {
  let cppNamespace = "::strata";
  let genSpecializedAttr = 0;
}
def Strata_PhaseAttr : EnumAttr<Strata_Dialect, Strata_Phase, "phase">;

#endif // STRATA_ATTRS_TD

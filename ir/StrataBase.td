//===- StrataBase.td - shared type constraints -------------*- tablegen -*-===//
//
// Everything the op files share: the dialect, types, enums, interfaces and the
// type constraints of activations.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_BASE_TD
#define STRATA_BASE_TD

include "ir/StrataDialect.td"
include "ir/StrataAttrs.td"
include "ir/StrataTypes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Storage types of weights, activations and the KV cache.
def Strata_Float : AnyTypeOf<[F16, BF16, F32]>;

// Token ids and positions: one i32 per token of the flattened batch.
def Strata_TokenTensor : 1DTensorOf<[I32]>;
// [tokens, features].
def Strata_Act2D : 2DTensorOf<[Strata_Float]>;
// [tokens, heads, head_dim].
def Strata_Act3D : 3DTensorOf<[Strata_Float]>;
def Strata_Vector : 1DTensorOf<[Strata_Float]>;
def Strata_Matrix : 2DTensorOf<[Strata_Float]>;

// Ops whose result types are computed from their operands. The inferred type
// is compared with the declared one by rank only: the op's verifier then
// compares every size and names the one that differs, which the interface's
// generic "inferred type(s) ... are incompatible" message would not. Such ops
// add Strata_RankOnlyCompatibleReturnTypes to their extraClassDeclaration.
def Strata_InferResultShape : DeclareOpInterfaceMethods<InferTypeOpInterface>;
defvar Strata_RankOnlyCompatibleReturnTypes = [{
  static bool isCompatibleReturnTypes(::mlir::TypeRange lhs,
                                      ::mlir::TypeRange rhs);
}];

#endif // STRATA_BASE_TD

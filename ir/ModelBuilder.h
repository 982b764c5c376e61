//===- ModelBuilder.h - ModelSpec to strata IR ------------------*- C++ -*-===//
//
// Builds the generic forward pass of a model (strata generic ops only) from
// its validated ModelSpec. Passes specialize and fuse it later.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_IR_MODELBUILDER_H
#define STRATA_IR_MODELBUILDER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>

namespace strata {

struct ModelSpec;

struct BuildOptions {
  /// Token positions per paged KV-cache block; a power of two.
  int64_t kvBlockSize = 16;
  /// Project every token onto the vocabulary (`strata.logits` gets
  /// `all_tokens`) instead of the last of each sequence: a scoring plan
  /// (`strata perplexity`) needs the prediction of every position, which
  /// generation plans must not pay for.
  bool allTokenLogits = false;
};

/// Builds a module holding `func.func @forward` for `spec`:
///
///   func.func @forward(%token_ids: tensor<?xi32>, %positions: tensor<?xi32>,
///                      %seqs: !strata.seqs
///                      [, %kv_cache: !strata.kv_cache<...>]
///                      [, %linear_state: !strata.linear_state<...>])
///       -> (tensor<?xVxf32> [, !strata.kv_cache<...>]
///           [, !strata.linear_state<...>])
///
/// The cache argument and result exist when the model has softmax layers,
/// the state ones when it has linear-attention layers. Module attributes:
/// strata.model_name, strata.family, strata.dtype, strata.seed,
/// strata.init_std.
///
/// Loads the strata and func dialects into `context`. The module is verified
/// before it is returned; on failure the reason has been reported through
/// the context's diagnostic handler. Never throws.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildForwardModule(mlir::MLIRContext &context, const ModelSpec &spec,
                   const BuildOptions &options = {});

} // namespace strata

#endif // STRATA_IR_MODELBUILDER_H

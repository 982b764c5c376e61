//===- PhaseFacts.h - the facts passes choose kernels by --------*- C++ -*-===//
//
// Internal to StrataPasses. strata-specialize-phase writes these attributes
// on each phase function; every later pass reads them back here, so that a
// variant is always chosen from facts in the IR and never from shapes.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PASSES_PHASEFACTS_H
#define STRATA_PASSES_PHASEFACTS_H

#include "ir/StrataTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <optional>

namespace strata {

// Function attributes.
constexpr llvm::StringLiteral kPhaseAttr = "strata.phase";
constexpr llvm::StringLiteral kCacheEmptyAttr = "strata.cache_empty";
constexpr llvm::StringLiteral kTokensPerSeqAttr = "strata.tokens_per_seq";
constexpr llvm::StringLiteral kDraftAttr = "strata.draft";
// Argument attribute of verify's parent ids.
constexpr llvm::StringLiteral kParentIdsAttr = "strata.parent_ids";
// Module attributes written by the builder.
constexpr llvm::StringLiteral kMaxPositionsAttr = "strata.max_positions";
constexpr llvm::StringLiteral kLinearChunkSizeAttr = "strata.linear_chunk_size";

/// The shape of a verify function's draft.
enum class DraftShape { None, Tree, Chain };

struct PhaseFacts {
  Phase phase;
  bool cacheEmpty = false;
  DraftShape draft = DraftShape::None;
  /// Verify's parent ids argument; null elsewhere.
  mlir::Value parentIds;
};

/// The facts of a phase function; std::nullopt for a function that has not
/// been specialized (no strata.phase), on which no pass fires.
std::optional<PhaseFacts> readPhaseFacts(mlir::func::FuncOp func);

/// The RoPE + KV-write kernel that the facts call for.
RopeVariant ropeVariantFor(const PhaseFacts &facts);

/// Applies `patterns` greedily to every phase function of `module` (those
/// readPhaseFacts accepts); fails when a rewrite does not converge.
mlir::LogicalResult
applyToPhaseFunctions(mlir::ModuleOp module,
                      const mlir::FrozenRewritePatternSet &patterns);

/// An i64 module attribute, or 0 when absent.
int64_t moduleFact(mlir::ModuleOp module, llvm::StringRef name);

} // namespace strata

#endif // STRATA_PASSES_PHASEFACTS_H

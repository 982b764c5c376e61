//===- PhaseFacts.h - the facts passes choose kernels by --------*- C++ -*-===//
//
// Internal to StrataPasses. strata-specialize-phase writes these attributes
// on each phase function; every later pass reads them back here, so that a
// variant is always chosen from facts in the IR and never from shapes. The
// facts a pass needs all sit on the function it runs on: the fusions are
// function passes and never look at the module or at other functions, which
// is what lets the pass manager run them on the phase functions in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PASSES_PHASEFACTS_H
#define STRATA_PASSES_PHASEFACTS_H

#include "ir/StrataTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
// Model facts the builder writes on the module (where codegen reads them);
// strata-specialize-phase copies them onto every phase function.
constexpr llvm::StringLiteral kMaxPositionsAttr = "strata.max_positions";
constexpr llvm::StringLiteral kLinearChunkSizeAttr = "strata.linear_chunk_size";

/// The model facts copied from the module onto each phase function.
constexpr llvm::StringLiteral kModelFactAttrs[] = {kMaxPositionsAttr,
                                                   kLinearChunkSizeAttr};

/// The shape of a verify function's draft.
enum class DraftShape { None, Tree, Chain };

struct PhaseFacts {
  Phase phase;
  bool cacheEmpty = false;
  DraftShape draft = DraftShape::None;
  /// Verify's parent ids argument; null elsewhere.
  mlir::Value parentIds;
  /// The model's longest context and lightning prefill chunk; 0 when the
  /// model does not state them.
  int64_t maxPositions = 0;
  int64_t linearChunkSize = 0;
};

/// The facts of a phase function; std::nullopt for a declaration or a
/// function that has not been specialized (no strata.phase), on which no
/// pass fires.
std::optional<PhaseFacts> readPhaseFacts(mlir::func::FuncOp func);

/// The RoPE + KV-write kernel that the facts call for.
RopeVariant ropeVariantFor(const PhaseFacts &facts);

/// Applies `patterns` greedily to `func`; on a rewrite that does not
/// converge, reports it on the function, naming `pass`, and fails.
mlir::LogicalResult
applyFusionPatterns(mlir::func::FuncOp func,
                    const mlir::FrozenRewritePatternSet &patterns,
                    llvm::StringRef pass);

} // namespace strata

#endif // STRATA_PASSES_PHASEFACTS_H

//===- Passes.h - strata passes and pipelines -------------------*- C++ -*-===//
//
// The passes of the compiler (declared in Passes.td, one .cpp each) and the
// pipeline that strings them together (Pipelines.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PASSES_PASSES_H
#define STRATA_PASSES_PASSES_H

#include "ir/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

namespace strata {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// How the fusion pipeline is configured; the `strata-fusion-pipeline`
/// options and `strata compile` both fill one.
struct FusionPipelineConfig {
  /// Flags of passes left out (strata-fuse-qkv, ...); only fusions may be.
  std::set<std::string> disabled;
  /// strata-select-attention's options (0: derive from the module's facts).
  int64_t maxSplits = 0;
  int64_t chunkSize = 0;
};

/// The flags of the passes that `disabled` may name, in pipeline order.
llvm::ArrayRef<llvm::StringRef> fusionPassNames();

/// Every pass flag of the pipeline, in order (fusions and the rest).
llvm::ArrayRef<llvm::StringRef> pipelinePassNames();

/// One step of the pipeline: the flag of its pass, whether the pass runs on
/// each phase function (nested under the module) or on the module, and how
/// to create it.
struct PipelineStage {
  llvm::StringRef name;
  bool perFunction;
  std::function<std::unique_ptr<mlir::Pass>()> create;
};

/// The steps of the pipeline in order, disabled fusions left out.
llvm::SmallVector<PipelineStage>
fusionPipelineStages(const FusionPipelineConfig &config);

/// Appends one step to `pm` (a module pass manager), nested on func.func
/// when it runs per function; running the steps one pass manager each gives
/// the module after every pass (`strata compile --dump-dir`).
void addPipelineStage(mlir::OpPassManager &pm, const PipelineStage &stage);

/// Appends the whole pipeline, generic forward to phase functions of fused
/// kernel ops, to `pm` (a module pass manager). The function passes share
/// one nested pass manager, so each phase function runs through them on its
/// own thread.
void buildFusionPipeline(mlir::OpPassManager &pm,
                         const FusionPipelineConfig &config);

/// Registers every pass and the `strata-fusion-pipeline` pipeline with the
/// global registry (strata-opt).
void registerStrataPasses();

} // namespace strata

#endif // STRATA_PASSES_PASSES_H

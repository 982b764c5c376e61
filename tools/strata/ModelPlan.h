// MODEL.yaml to verified IR (`strata compile`) and to an executable plan in
// memory, for the commands that run a model straight from its file
// (`strata run`, `strata bench`).
#ifndef STRATA_TOOLS_STRATA_MODELPLAN_H
#define STRATA_TOOLS_STRATA_MODELPLAN_H

#include "codegen/PlanLowering.h"
#include "ir/ModelBuilder.h"
#include "models/ModelSpec.h"
#include "passes/Passes.h"
#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace strata::tools {

/// Prints the context's diagnostics the way every tool reports errors, one
/// line each: "FILE:LINE:COL: error: MESSAGE" where the location has a file
/// position, else "PATH: error: MESSAGE" with `path` (the model file).
class DiagnosticPrinter {
public:
  DiagnosticPrinter(mlir::MLIRContext &context, std::string path);
  /// Whether an error has been printed (so a caller need not add a second,
  /// vaguer line).
  bool reportedError() const { return errors_ > 0; }

private:
  std::string path_;
  int errors_ = 0;
  mlir::ScopedDiagnosticHandler handler_;
};

/// Imports `path` and builds its verified generic forward in `context`
/// (the strata dialect is registered and loaded there); `spec` receives the
/// imported model. On failure the error is printed ("FILE: error: ...") and
/// the module is null.
mlir::OwningOpRef<mlir::ModuleOp> buildModelModule(const std::string &path,
                                                   mlir::MLIRContext &context,
                                                   const BuildOptions &options,
                                                   ModelSpec &spec);

/// Lowers `module`, built from the model file `path` (imported as `spec`),
/// to a plan that also names the model's checkpoint. On failure the error
/// is printed and kExitBadInput returned; 0 on success.
int lowerModelPlan(mlir::ModuleOp module, const ModelSpec &spec,
                   const std::string &path, const PlanLoweringOptions &options,
                   const DiagnosticPrinter &diagnostics, plan::Plan &out);

/// Declares --disable-pass NAMES on a command that compiles a model;
/// `note` ends its help line.
void addDisablePassOption(ArgParser &parser, const char *note = nullptr);

/// Adds the fusion passes named in `list`, a --disable-pass value
/// (comma-separated; "fuse-qkv" stands for "strata-fuse-qkv"), to
/// `disabled`. Returns "" when every name is a fusion, else the message
/// for the first that is not: a pass that is not a fusion is named as
/// such, an unknown name gets the nearest fusion as a suggestion. Every
/// command that takes --disable-pass reads it here.
std::string parseDisabledPasses(const std::string &list,
                                std::set<std::string> &disabled);

/// Records on `plan` which fusions the pipeline `config` ran and which it
/// left out (plan::Plan::fusions).
void recordFusions(const FusionPipelineConfig &config, plan::Plan &plan);

/// Imports `path`, builds its generic forward with `build`, runs the fusion
/// pipeline configured by `fusion` when given (the phase programs the CUDA
/// backend runs; the plan records the fusions) and lowers the result with
/// `options`. On failure the error is printed ("FILE: error: ...") and the
/// exit code (kExitBadInput) returned; 0 on success.
int compileModelPlan(const std::string &path,
                     const std::optional<FusionPipelineConfig> &fusion,
                     const PlanLoweringOptions &options, plan::Plan &out,
                     const BuildOptions &build = {});

/// --draft for `strata run` and `strata serve`: a compiled plan, or a
/// model file compiled to its fused phase programs (the draft runs them on
/// either device). Returns the exit code (the error printed).
int loadDraftModel(const std::string &path, plan::Plan &out);

/// What `strata run`, `strata chat`, `strata perplexity` and `strata serve`
/// share: parses `args` with the options `declare` adds (and
/// --disable-pass and --help, which prints `usage` and them), takes one
/// model file, compiles it (the fused phase programs with `--device cuda`
/// or `--disable-pass`, else the generic forward the CPU runs) and hands
/// the plan to `run`. `build` and `lowering` shape the plan (`strata
/// perplexity` asks for all-token logits). With `acceptPlans`, a compiled
/// plan file (recognized by its signature) is read instead of compiled.
/// Returns the exit code.
int runCompiledModel(const std::string &tool,
                     const std::vector<std::string> &args,
                     void (*declare)(ArgParser &), const char *usage,
                     int (*run)(const std::string &tool,
                                const ArgParser &parser, plan::Plan plan,
                                const std::string &source),
                     const BuildOptions &build = {},
                     const PlanLoweringOptions &lowering = {},
                     bool acceptPlans = false);

} // namespace strata::tools

#endif // STRATA_TOOLS_STRATA_MODELPLAN_H

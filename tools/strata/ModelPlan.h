// MODEL.yaml to verified IR (`strata compile`) and to an executable plan in
// memory, for the commands that run a model straight from its file
// (`strata run`, `strata bench`).
#ifndef STRATA_TOOLS_STRATA_MODELPLAN_H
#define STRATA_TOOLS_STRATA_MODELPLAN_H

#include "codegen/PlanLowering.h"
#include "ir/ModelBuilder.h"
#include "models/ModelSpec.h"
#include "runtime/plan/Plan.h"
#include "tools/common/ArgParser.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

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

/// Imports `path`, builds its generic forward with `build`, runs the fusion
/// pipeline when `fused` (the phase programs the CUDA backend runs) and
/// lowers the result with `options`. On failure the error is printed
/// ("FILE: error: ...") and the exit code (kExitBadInput) returned; 0 on
/// success.
int compileModelPlan(const std::string &path, bool fused,
                     const PlanLoweringOptions &options, plan::Plan &out,
                     const BuildOptions &build = {});

/// What `strata run` and `strata chat` share: parses `args` with the
/// options `declare` adds (and --help, which prints `usage` and them),
/// takes one model file, compiles it (the fused phase programs with
/// `--device cuda`, else the generic forward the CPU runs) and hands the
/// plan to `run`. `build` and `lowering` shape the plan (`strata
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

// strata-opt: mlir-opt with the strata dialect, every strata pass and the
// strata-fusion-pipeline registered. Used by the lit tests and by anyone
// experimenting with passes on .mlir files.
//
// The command line is mlir-opt's (the same options, parsed by LLVM), but
// read here rather than by MlirOptMain(argc, argv) so that strata-opt keeps
// the conventions of the other strata tools (docs/cli.md): a bad command
// line exits 2, not 1; a pass option that does not exist is reported as a
// command-line error, not at `<unknown>:0`; --version names strata;
// --mlir-pass-statistics prints the counts the strata passes keep, which
// MLIR's own report misses where LLVM is built without statistics
// (passes/PassStatistics.h).
#include "ir/StrataDialect.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/DebugCounter.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace cl = llvm::cl;

namespace {

constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

/// MLIR's option `name` when it is registered with the type T.
template <typename T> cl::opt<T> *mlirOption(llvm::StringRef name) {
  return dynamic_cast<cl::opt<T> *>(cl::getRegisteredOptions().lookup(name));
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  static cl::opt<std::string> inputFilename(
      cl::Positional, cl::desc("<input file>"), cl::init("-"));
  static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                             cl::value_desc("filename"),
                                             cl::init("-"));
  static cl::opt<bool> splitInputFile(
      "split-input-file",
      cl::desc("Split the input file into pieces and process each chunk "
               "independently"));
  static cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      cl::desc("Check that emitted diagnostics match expected-* lines on "
               "the corresponding line"));
  static cl::opt<bool> verifyPasses(
      "verify-each",
      cl::desc("Run the verifier after each transformation pass"),
      cl::init(true));
  static cl::opt<bool> allowUnregisteredDialects(
      "allow-unregistered-dialect",
      cl::desc("Allow operation with no registered dialects"));
  static cl::opt<bool> emitBytecode("emit-bytecode",
                                    cl::desc("Emit bytecode when generating "
                                             "output"));
  static cl::opt<bool> noImplicitModule(
      "no-implicit-module",
      cl::desc("Disable implicit addition of a top-level module op during "
               "parsing"));
  static cl::opt<bool> dumpPassPipeline(
      "dump-pass-pipeline", cl::desc("Print the pipeline that will be run"));

  mlir::DialectRegistry registry;
  strata::registerStrataDialect(registry);
  strata::registerStrataPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::DebugCounter::registerCLOptions();
  mlir::PassPipelineCLParser passPipeline("", "Compiler passes to run", "p");
  cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "strata-opt " << STRATA_VERSION << "\n";
  });
  if (!cl::ParseCommandLineOptions(argc, argv, "strata optimizer driver\n",
                                   &llvm::errs()))
    return kExitUsage;

  // --mlir-pass-statistics is MLIR's option, read by MlirOptMain; it is
  // turned off there so that MLIR does not print its report too (empty, or
  // with the same numbers where LLVM counts), and strata's is printed
  // instead, in the layout --mlir-pass-statistics-display asks for.
  strata::PassStatisticsReport statistics;
  bool printStatistics = false, listStatistics = false;
  if (cl::opt<bool> *option = mlirOption<bool>("mlir-pass-statistics");
      option && option->getValue()) {
    printStatistics = true;
    option->setValue(false);
    if (auto *display =
            mlirOption<mlir::PassDisplayMode>("mlir-pass-statistics-display"))
      listStatistics = display->getValue() == mlir::PassDisplayMode::List;
  }

  std::string error;
  auto input = mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << inputFilename << ": error: " << error << "\n";
    return kExitBadInput;
  }
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << outputFilename << ": error: " << error << "\n";
    return kExitBadInput;
  }
  // Pass options are parsed when the pipeline is built. A pass pipeline's
  // own option parser prints the offending option and fails without calling
  // the handler, so any failure here is the command line's.
  bool badPipeline = false;
  auto buildPipeline = [&](mlir::PassManager &pm) {
    if (printStatistics)
      statistics.collect(pm);
    bool reported = false;
    if (mlir::succeeded(
            passPipeline.addToPipeline(pm, [&](const llvm::Twine &message) {
              llvm::errs() << "strata-opt: error: " << message << "\n";
              reported = true;
              return mlir::failure();
            })))
      return mlir::success();
    if (!reported)
      llvm::errs() << "strata-opt: error: invalid pass options (the line "
                      "above names the option)\n";
    badPipeline = true;
    return mlir::failure();
  };
  if (dumpPassPipeline) {
    mlir::MLIRContext context(registry);
    // Nested like MlirOptMain's: a function pass named alone runs on every
    // function of the module.
    mlir::PassManager pm(&context, mlir::OpPassManager::Nesting::Implicit);
    if (mlir::failed(buildPipeline(pm)))
      return kExitUsage;
    pm.printAsTextualPipeline(llvm::errs());
    llvm::errs() << "\n";
  }
  const bool ok = mlir::succeeded(mlir::MlirOptMain(
      output->os(), std::move(input), buildPipeline, registry, splitInputFile,
      verifyDiagnostics, verifyPasses, allowUnregisteredDialects,
      /*preloadDialectsInContext=*/false, emitBytecode,
      /*implicitModule=*/!noImplicitModule));
  // Like MLIR's, the report also comes after a failed pass: it shows how
  // far the pipeline got.
  if (printStatistics && !badPipeline)
    statistics.print(llvm::errs(), listStatistics);
  if (!ok)
    return badPipeline ? kExitUsage : kExitBadInput;
  output->keep();
  return 0;
}

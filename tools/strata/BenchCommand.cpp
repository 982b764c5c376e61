// `strata bench MODEL.yaml`: compile the model's fused phase programs to a
// plan in memory (what `strata compile --emit=fused -o M.splan` writes) and
// benchmark it with the code `strata-bench` runs (tools/common/BenchCommand.h).
#include "tools/common/BenchCommand.h"
#include "codegen/PlanLowering.h"
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "passes/Passes.h"
#include "tools/strata/Commands.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cstdio>

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

namespace strata::tools {

int runBenchmark(const std::vector<std::string> &args) {
  ArgParser parser;
  addBenchOptions(parser);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(
        stderr,
        "strata bench: error: %s\nrun 'strata bench --help' for usage\n",
        parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf("usage: strata bench MODEL.yaml [options]\n\n"
                "Compiles the model's fused plan and measures prefill (ppN) "
                "and decode\n(tgN) tokens/s at each batch size, and the "
                "decode steps' fraction of\nthe memory roofline.\n\n"
                "options:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata bench: error: expected one model file\n"
                         "run 'strata bench --help' for usage\n");
    return kExitUsage;
  }
  BenchSettings settings;
  if (int code = parseBenchSettings("strata bench", parser, settings))
    return code;

  const std::string &modelPath = parser.positionals().front();
  ImportResult imported = importModelFile(modelPath);
  if (!imported.ok) {
    std::fprintf(stderr, "%s\n", imported.diag.str().c_str());
    return kExitBadInput;
  }
  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  auto module = buildForwardModule(context, imported.spec);
  if (mlir::failed(module) || mlir::failed(mlir::verify(**module))) {
    std::fprintf(stderr, "%s: error: could not build the model's IR\n",
                 modelPath.c_str());
    return kExitBadInput;
  }
  mlir::PassManager pm(&context);
  pm.enableVerifier(true);
  buildFusionPipeline(pm, FusionPipelineConfig{});
  if (mlir::failed(pm.run(**module))) {
    std::fprintf(stderr, "%s: error: the pass pipeline failed\n",
                 modelPath.c_str());
    return kExitBadInput;
  }
  // The compile defaults, raised where the largest batch needs more.
  PlanLoweringOptions planOptions;
  planOptions.maxBatch = std::max(planOptions.maxBatch, settings.maxBatch());
  planOptions.maxTokens = std::max(planOptions.maxTokens, planOptions.maxBatch);
  auto plan = lowerToPlan(**module, planOptions);
  if (mlir::failed(plan)) {
    std::fprintf(stderr, "%s: error: could not lower the model to a plan\n",
                 modelPath.c_str());
    return kExitBadInput;
  }

  BenchSource source;
  source.tool = "strata bench";
  source.version = STRATA_VERSION;
  source.planSource = "compiled from " + modelPath + " (--emit=fused)";
  // The importer has resolved the model file's safetensors path against its
  // folder; --weights overrides it.
  if (imported.spec.weights.source == WeightSource::Safetensors)
    source.defaultWeights = imported.spec.weights.path;
  return runBench(settings, source, std::move(*plan));
}

} // namespace strata::tools

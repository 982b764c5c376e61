// `strata run MODEL.yaml --prompt-ids 1,2,3`: compile the model to a plan in
// memory and generate with it: the generic forward on the CPU backend (the
// reference), the fused phase programs with --device cuda.
#include "codegen/PlanLowering.h"
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "tools/common/RunCommand.h"
#include "tools/strata/Commands.h"

#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>

namespace strata::tools {

int runRun(const std::vector<std::string> &args) {
  ArgParser parser;
  addRunOptions(parser);
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  if (!parser.parse(args)) {
    std::fprintf(stderr,
                 "strata run: error: %s\nrun 'strata run --help' for usage\n",
                 parser.error().c_str());
    return kExitUsage;
  }
  if (parser.has("help")) {
    std::printf("usage: strata run MODEL.yaml --prompt-ids IDS [options]\n\n"
                "Compiles the model and generates tokens with the model's "
                "weights\n(random, or safetensors from the model file or "
                "--weights): the\ngeneric forward on the CPU, the fused "
                "programs with --device cuda.\n\noptions:\n%s",
                parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1) {
    std::fprintf(stderr, "strata run: error: expected one model file\n"
                         "run 'strata run --help' for usage\n");
    return kExitUsage;
  }
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
  auto module = buildForwardModule(context, imported.spec);
  if (mlir::failed(module)) {
    std::fprintf(stderr, "%s: error: could not build the model's IR\n",
                 modelPath.c_str());
    return kExitBadInput;
  }
  // The CUDA backend runs fused programs only.
  if (parser.has("device") && parser.get("device") == "cuda") {
    mlir::PassManager pm(&context);
    buildFusionPipeline(pm, FusionPipelineConfig{});
    if (mlir::failed(pm.run(**module))) {
      std::fprintf(stderr, "%s: error: the pass pipeline failed\n",
                   modelPath.c_str());
      return kExitBadInput;
    }
  }
  PlanLoweringOptions options;
  auto plan = lowerToPlan(**module, options);
  if (mlir::failed(plan)) {
    std::fprintf(stderr, "%s: error: could not lower the model to a plan\n",
                 modelPath.c_str());
    return kExitBadInput;
  }
  // The importer has already resolved the model file's safetensors path
  // against the model file's folder; --weights overrides it.
  std::string weights;
  if (imported.spec.weights.source == WeightSource::Safetensors)
    weights = imported.spec.weights.path;
  return runGeneration("strata run", parser, std::move(*plan), weights);
}

} // namespace strata::tools

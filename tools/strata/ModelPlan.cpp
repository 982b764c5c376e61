#include "tools/strata/ModelPlan.h"

#include "runtime/PlanTokenizer.h"

#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "models/ModelImporter.h"
#include "models/ModelLimits.h"
#include "models/NearestName.h"
#include "passes/Passes.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanLimits.h"
#include "tools/strata/Commands.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>

namespace strata::tools {

void addDisablePassOption(ArgParser &parser, const char *note) {
  parser.addOption("disable-pass", "NAMES",
                   std::string("comma-separated fusion passes to leave out "
                               "of the pipeline (e.g. strata-fuse-qkv)") +
                       (note ? note : ""));
}

// Whatever a model file may say, its plan must load: the model format's
// bounds stay within the plan's.
static_assert(limits::kMaxVocabSize == plan::kMaxVocabSize);
static_assert(limits::kMaxPositions == plan::kMaxPositions);
static_assert(limits::kMaxLayers == plan::kMaxLayers);
static_assert(limits::kMaxHeads == plan::kMaxHeads);
static_assert(limits::kMaxHeadDim == plan::kMaxHeadDim);
static_assert(limits::kMaxInitStd == plan::kMaxInitStd);
static_assert(limits::kMaxHiddenSize <= plan::kMaxDimension &&
              limits::kMaxIntermediateSize * 2 <= plan::kMaxDimension);

DiagnosticPrinter::DiagnosticPrinter(mlir::MLIRContext &context,
                                     std::string path)
    : path_(std::move(path)),
      handler_(&context, [this](mlir::Diagnostic &diag) {
        const char *severity = "error";
        switch (diag.getSeverity()) {
        case mlir::DiagnosticSeverity::Error:
          ++errors_;
          break;
        case mlir::DiagnosticSeverity::Warning:
          severity = "warning";
          break;
        case mlir::DiagnosticSeverity::Note:
        case mlir::DiagnosticSeverity::Remark:
          return mlir::success(); // one line per problem
        }
        std::string where = path_;
        if (auto file =
                diag.getLocation()->findInstanceOf<mlir::FileLineColLoc>())
          where = file.getFilename().str() + ":" +
                  std::to_string(file.getLine()) + ":" +
                  std::to_string(file.getColumn());
        std::fprintf(stderr, "%s: %s: %s\n", where.c_str(), severity,
                     diag.str().c_str());
        return mlir::success();
      }) {}

mlir::OwningOpRef<mlir::ModuleOp> buildModelModule(const std::string &path,
                                                   mlir::MLIRContext &context,
                                                   const BuildOptions &options,
                                                   ModelSpec &spec) {
  ImportResult imported = importModelFile(path);
  if (!imported.ok) {
    std::fprintf(stderr, "%s\n", imported.diag.str().c_str());
    return nullptr;
  }
  spec = imported.spec;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  DiagnosticPrinter diagnostics(context, path);
  auto module = buildForwardModule(context, spec, options);
  if (mlir::failed(module)) {
    if (!diagnostics.reportedError())
      std::fprintf(stderr, "%s: error: could not build the model's IR\n",
                   path.c_str());
    return nullptr;
  }
  if (mlir::failed(mlir::verify(**module))) {
    if (!diagnostics.reportedError())
      std::fprintf(stderr, "%s: error: the built IR does not verify\n",
                   path.c_str());
    return nullptr;
  }
  return std::move(*module);
}

int lowerModelPlan(mlir::ModuleOp module, const ModelSpec &spec,
                   const std::string &path, const PlanLoweringOptions &options,
                   const DiagnosticPrinter &diagnostics, plan::Plan &out) {
  auto plan = lowerToPlan(module, options);
  if (mlir::failed(plan)) {
    if (!diagnostics.reportedError())
      std::fprintf(stderr, "%s: error: could not lower the model to a plan\n",
                   path.c_str());
    return kExitBadInput;
  }
  out = std::move(*plan);
  out.checkpoint.clear();
  if (spec.weights.source == WeightSource::Safetensors)
    out.checkpoint = spec.weights.path;
  // The tokenizer travels inside the plan (a plan file is self-contained);
  // it is loaded once here so that a broken one fails the compile, at the
  // model file's line.
  const TokenizerSpec &ts = spec.tokenizer;
  if (!ts.path.empty()) {
    if (std::string bad =
            embedTokenizer(ts.path, spec.vocabSize, out.tokenizer);
        !bad.empty()) {
      std::fprintf(stderr, "%s:%d:%d: error: tokenizer.path: %s\n",
                   ts.pathLoc.file.c_str(), ts.pathLoc.line, ts.pathLoc.column,
                   bad.c_str());
      return kExitBadInput;
    }
    out.tokenizer.bosId = int32_t(ts.bosId);
    out.tokenizer.eosIds.assign(ts.eosIds.begin(), ts.eosIds.end());
  }
  return kExitOk;
}

std::string parseDisabledPasses(const std::string &list,
                                std::set<std::string> &disabled) {
  llvm::SmallVector<llvm::StringRef> names;
  llvm::StringRef(list).split(names, ',', -1, /*KeepEmpty=*/false);
  const std::string fusions = llvm::join(fusionPassNames(), ", ");
  for (llvm::StringRef raw : names) {
    std::string name = raw.trim().str();
    if (!llvm::StringRef(name).startswith("strata-"))
      name = "strata-" + name;
    if (llvm::is_contained(fusionPassNames(), name)) {
      disabled.insert(name);
      continue;
    }
    if (llvm::is_contained(pipelinePassNames(), name))
      return "'" + name + "' cannot be disabled (it is not a fusion); " +
             "fusions: " + fusions;
    std::vector<std::string> candidates;
    for (llvm::StringRef candidate : fusionPassNames())
      candidates.push_back(candidate.str());
    std::string best = nearestName(name, candidates);
    return "unknown pass '" + raw.trim().str() + "' for --disable-pass; " +
           (best.empty() ? "" : "did you mean '" + best + "'? ") +
           "fusions: " + fusions;
  }
  return "";
}

void recordFusions(const FusionPipelineConfig &config, plan::Plan &plan) {
  plan.fusions.clear();
  for (llvm::StringRef name : fusionPassNames())
    plan.fusions.push_back(
        {name.str(), config.disabled.count(name.str()) == 0});
}

int compileModelPlan(const std::string &path,
                     const std::optional<FusionPipelineConfig> &fusion,
                     const PlanLoweringOptions &options, plan::Plan &out,
                     const BuildOptions &build) {
  mlir::MLIRContext context;
  ModelSpec spec;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModelModule(path, context, build, spec);
  if (!module)
    return kExitBadInput;
  DiagnosticPrinter diagnostics(context, path);
  if (fusion) {
    mlir::PassManager pm(&context);
    pm.enableVerifier(true);
    buildFusionPipeline(pm, *fusion);
    if (mlir::failed(pm.run(*module))) {
      if (!diagnostics.reportedError())
        std::fprintf(stderr, "%s: error: the pass pipeline failed\n",
                     path.c_str());
      return kExitBadInput;
    }
  }
  if (int code = lowerModelPlan(*module, spec, path, options, diagnostics, out))
    return code;
  if (fusion)
    recordFusions(*fusion, out);
  return kExitOk;
}

int runCompiledModel(const std::string &tool,
                     const std::vector<std::string> &args,
                     void (*declare)(ArgParser &), const char *usage,
                     int (*run)(const std::string &tool,
                                const ArgParser &parser, plan::Plan plan,
                                const std::string &source),
                     const BuildOptions &build,
                     const PlanLoweringOptions &lowering, bool acceptPlans) {
  ArgParser parser;
  declare(parser);
  addDisablePassOption(parser, "; the CPU then runs the fused programs "
                               "too");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  auto usageError = [&](const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\nrun '%s --help' for usage\n",
                 tool.c_str(), message.c_str(), tool.c_str());
    return kExitUsage;
  };
  if (!parser.parse(args))
    return usageError(parser.error());
  if (parser.has("help")) {
    std::printf("%s\noptions:\n%s", usage, parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1)
    return usageError("expected one model file");
  // The CUDA backend runs fused programs only; the CPU runs the generic
  // forward, the reference, which no fusion touches. Leaving fusions out
  // is asked of the fused programs, so then the CPU runs those too.
  std::optional<FusionPipelineConfig> fusion;
  // Speculative decoding (--draft, --spec-lookup) needs the fused verify
  // program too.
  if (parser.has("disable-pass") || parser.has("draft") ||
      parser.has("spec-lookup") ||
      (parser.has("device") && parser.get("device") == "cuda"))
    fusion.emplace();
  if (parser.has("disable-pass"))
    if (std::string bad =
            parseDisabledPasses(parser.get("disable-pass"), fusion->disabled);
        !bad.empty())
      return usageError(bad);
  const std::string &model = parser.positionals().front();
  plan::Plan plan;
  if (acceptPlans && plan::hasPlanSignature(model)) {
    if (parser.has("disable-pass"))
      return usageError("--disable-pass applies to a model file; " + model +
                        " is a compiled plan (strata inspect names the "
                        "fusions it was built with)");
    std::string error;
    if (!plan::readPlanFile(model, plan, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return kExitBadInput;
    }
    return run(tool, parser, std::move(plan), model);
  }
  if (int code = compileModelPlan(model, fusion, lowering, plan, build))
    return code;
  return run(tool, parser, std::move(plan), model);
}

} // namespace strata::tools

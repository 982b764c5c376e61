// `strata compile MODEL.yaml --emit=ir|phases|fused`: import, build and
// verify the generic forward of a model, run the pass pipeline up to the
// requested stage (the verifier runs after every pass), then print it.
#include "codegen/PlanLowering.h"
#include "ir/StrataOps.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanLimits.h"
#include "runtime/plan/PlanSummary.h"
#include "tools/common/ArgParser.h"
#include "tools/strata/Commands.h"
#include "tools/strata/ModelPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace strata::tools {

namespace {

const char *kCompileUsage =
    "usage: strata compile MODEL.yaml [options]\n\n"
    "Imports the model file, builds its IR and prints the requested stage.\n\n"
    "options:\n";

ArgParser makeCompileParser() {
  ArgParser parser;
  parser.addOption("emit", "STAGE",
                   "what to print: ir (the generic forward; default), "
                   "phases (one function per phase), fused (after the "
                   "whole pass pipeline)");
  addDisablePassOption(parser);
  parser.addOption("dump-dir", "DIR",
                   "write the module before the first pass and after each "
                   "pass to DIR/NN-<pass>.mlir");
  parser.addOption("output", "FILE",
                   "write to FILE instead of stdout; FILE.splan writes the "
                   "executable plan of the emitted stage");
  parser.addOption("max-tokens", "N",
                   "plan: tokens per step the arena is planned for "
                   "(default 2048)");
  parser.addOption("max-batch", "N",
                   "plan: sequences per step (default 64, or --max-tokens "
                   "when that is smaller)");
  parser.addOption("streams", "N",
                   "plan: CUDA streams the scheduler may use (default 1)");
  parser.addAlias("-o", "output");
  parser.addOption("block-size", "N",
                   "tokens per paged KV-cache block (power of two; "
                   "default 16)");
  parser.addFlag("stats",
                 "print on stderr what each pass matched and rewrote (its "
                 "pass statistics) and the attention kernel of every layer");
  parser.addFlag("all-token-logits",
                 "logits for every position instead of the last of each "
                 "sequence: a plan for scoring (Engine::score, perplexity)");
  parser.addFlag("help", "show this help");
  parser.addAlias("-h", "help");
  return parser;
}

/// Writes `module` to DIR/`name`; false, with the message printed, when the
/// file cannot be written.
bool writeDump(const std::string &dir, const std::string &name,
               mlir::ModuleOp module) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    std::fprintf(stderr, "strata compile: error: cannot write '%s': %s\n",
                 path.c_str(), ec.message().c_str());
    return false;
  }
  module->print(out);
  return true;
}

/// The attention op of each layer, per phase function, as layer ranges:
/// "decode: lightning_decode on 0-2; paged_decode_attention on 3". Layers
/// are numbered by their place among the function's attention ops, one per
/// layer in order (an op's own `layer` counts caches or states of its kind
/// only).
void printAttentionPerLayer(llvm::raw_ostream &os, mlir::ModuleOp module) {
  os << "attention per layer:\n";
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    // Kernel names in first-seen order, each with its layers.
    std::vector<std::pair<std::string, std::vector<int64_t>>> kernels;
    int64_t layer = 0;
    func.walk([&](mlir::Operation *op) {
      std::string name;
      if (auto generic = llvm::dyn_cast<AttentionOp>(op))
        name = "attention " + stringifyAttentionKind(generic.getKind()).str();
      else if (llvm::isa<PrefillAttentionOp, ExtendAttentionOp,
                         PagedDecodeAttentionOp, TreeAttentionOp,
                         LightningPrefillOp, LightningDecodeOp>(op))
        name = op->getName().stripDialect().str();
      else
        return;
      auto it = llvm::find_if(kernels,
                              [&](const auto &k) { return k.first == name; });
      if (it == kernels.end())
        it = kernels.insert(kernels.end(), {name, {}});
      it->second.push_back(layer++);
    });
    std::string line;
    for (const auto &[name, layers] : kernels)
      line += (line.empty() ? "" : "; ") + name + " on " +
              plan::formatLayerList(layers);
    os << "  " << func.getSymName() << ": " << (line.empty() ? "none" : line)
       << "\n";
  }
}

int usageError(const std::string &message) {
  std::fprintf(stderr,
               "strata compile: error: %s\nrun 'strata compile --help' for "
               "usage\n",
               message.c_str());
  return kExitUsage;
}

} // namespace

int runCompile(const std::vector<std::string> &args) {
  ArgParser parser = makeCompileParser();
  if (!parser.parse(args))
    return usageError(parser.error());
  if (parser.has("help")) {
    std::printf("%s%s", kCompileUsage, parser.helpText().c_str());
    return kExitOk;
  }
  if (parser.positionals().size() != 1)
    return usageError(parser.positionals().empty()
                          ? "expected one model file"
                          : "expected one model file, got " +
                                std::to_string(parser.positionals().size()));
  std::string emit = parser.get("emit", "ir");
  if (emit != "ir" && emit != "phases" && emit != "fused")
    return usageError("unknown --emit value '" + emit +
                      "'; expected one of: ir, phases, fused");
  if (parser.has("stats") && emit == "ir")
    return usageError("--stats reports what the passes did, and --emit=ir "
                      "runs none; use --emit=phases or --emit=fused");
  FusionPipelineConfig pipeline;
  if (parser.has("disable-pass")) {
    std::string error =
        parseDisabledPasses(parser.get("disable-pass"), pipeline.disabled);
    if (!error.empty())
      return usageError(error);
  }
  BuildOptions options;
  if (parser.has("block-size")) {
    int64_t blockSize = 0;
    if (!parseInteger(parser.get("block-size"), 1, plan::kMaxKvBlockSize,
                      blockSize) ||
        (blockSize & (blockSize - 1)) != 0)
      return usageError("--block-size expects a power of two in [1, " +
                        std::to_string(plan::kMaxKvBlockSize) + "], got '" +
                        parser.get("block-size") + "'");
    options.kvBlockSize = blockSize;
  }
  options.allTokenLogits = parser.has("all-token-logits");

  std::string outputPath = parser.get("output", "-");
  const bool writePlan = llvm::StringRef(outputPath).endswith(".splan");
  PlanLoweringOptions planOptions;
  for (auto [name, value, limit] :
       {std::tuple<const char *, int64_t *, int64_t>{
            "max-tokens", &planOptions.maxTokens, plan::kMaxTokensLimit},
        {"max-batch", &planOptions.maxBatch, plan::kMaxBatchLimit}}) {
    if (!parser.has(name))
      continue;
    if (!parseInteger(parser.get(name), 1, limit, *value))
      return usageError(
          std::string("--") + name + " expects a positive integer up to " +
          std::to_string(limit) + ", got '" + parser.get(name) + "'");
  }
  if (parser.has("streams")) {
    int64_t streams = 0;
    if (!parseInteger(parser.get("streams"), 1, 16, streams))
      return usageError("--streams expects an integer in [1, 16], got '" +
                        parser.get("streams") + "'");
    planOptions.numStreams = int(streams);
  }
  // The default sequences per step follow a smaller --max-tokens down; an
  // explicit --max-batch above it is a contradiction.
  if (!parser.has("max-batch"))
    planOptions.maxBatch =
        std::min(planOptions.maxBatch, planOptions.maxTokens);
  if (planOptions.maxBatch > planOptions.maxTokens)
    return usageError("--max-batch " + std::to_string(planOptions.maxBatch) +
                      " exceeds --max-tokens " +
                      std::to_string(planOptions.maxTokens));

  const std::string &modelPath = parser.positionals().front();
  mlir::MLIRContext context;
  ModelSpec spec;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModelModule(modelPath, context, options, spec);
  if (!module)
    return kExitBadInput;
  DiagnosticPrinter diagnostics(context, modelPath);

  if (parser.has("dump-dir")) {
    std::string dir = parser.get("dump-dir");
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      std::fprintf(stderr, "strata compile: error: cannot create '%s': %s\n",
                   dir.c_str(), ec.message().c_str());
      return kExitBadInput;
    }
    if (!writeDump(dir, "00-forward.mlir", *module))
      return kExitBadInput;
  }

  PassStatisticsReport statistics;
  if (emit != "ir") {
    llvm::SmallVector<PipelineStage> stages = fusionPipelineStages(pipeline);
    // --emit=phases stops after the first step, strata-specialize-phase.
    if (emit == "phases")
      stages.resize(1);
    // With --dump-dir every step runs alone, so that the file after it
    // holds the whole module after that pass; in one pipeline the function
    // passes take each phase function through all steps before the next.
    std::vector<std::unique_ptr<mlir::PassManager>> runs;
    auto newRun = [&]() -> mlir::PassManager & {
      runs.push_back(std::make_unique<mlir::PassManager>(&context));
      // A pass that produces invalid IR is caught at that pass.
      runs.back()->enableVerifier(true);
      if (parser.has("stats"))
        statistics.collect(*runs.back());
      return *runs.back();
    };
    if (parser.has("dump-dir"))
      for (const PipelineStage &stage : stages)
        addPipelineStage(newRun(), stage);
    else if (emit == "phases")
      addPipelineStage(newRun(), stages.front());
    else
      buildFusionPipeline(newRun(), pipeline);
    for (size_t i = 0; i < runs.size(); ++i) {
      if (mlir::failed(runs[i]->run(*module))) {
        if (!diagnostics.reportedError())
          std::fprintf(stderr, "%s: error: the pass pipeline failed\n",
                       modelPath.c_str());
        return kExitBadInput;
      }
      if (parser.has("dump-dir") &&
          !writeDump(parser.get("dump-dir"),
                     llvm::formatv("{0:2}-{1}.mlir", i + 1, stages[i].name),
                     *module))
        return kExitBadInput;
    }
    if (parser.has("stats")) {
      statistics.print(llvm::errs());
      printAttentionPerLayer(llvm::errs(), *module);
    }
  }

  if (writePlan) {
    plan::Plan plan;
    if (int code = lowerModelPlan(*module, spec, modelPath, planOptions,
                                  diagnostics, plan))
      return code;
    if (emit == "fused")
      recordFusions(pipeline, plan);
    std::string error;
    if (!plan::writePlanFile(plan, outputPath, error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return kExitBadInput;
    }
    return kExitOk;
  }

  std::error_code ec;
  llvm::raw_fd_ostream out(outputPath, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    std::fprintf(stderr, "strata compile: error: cannot write '%s': %s\n",
                 outputPath.c_str(), ec.message().c_str());
    return kExitBadInput;
  }
  module->print(out);
  out << "\n";
  return kExitOk;
}

} // namespace strata::tools

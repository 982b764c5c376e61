//===- Pipelines.cpp - the staged pass pipeline ---------------------------===//
//
// The whole compiler pipeline as one readable list. Every step is also a
// pass of its own (strata-opt --<flag>), and `strata compile --dump-dir`
// writes the module after each, so a stage can be inspected and rerun
// alone.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace strata {

namespace {
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

constexpr StringLiteral kSpecialize = "strata-specialize-phase";
constexpr StringLiteral kFuseQKV = "strata-fuse-qkv";
constexpr StringLiteral kFuseRopeKV = "strata-fuse-rope-kv";
constexpr StringLiteral kSelectAttention = "strata-select-attention";
constexpr StringLiteral kFuseAddRMSNorm = "strata-fuse-add-rmsnorm";
constexpr StringLiteral kFuseSwiGLU = "strata-fuse-swiglu";

// PipelineStage::perFunction, named.
constexpr bool kOnModule = false;
constexpr bool kPerFunction = true;

const StringRef kFusions[] = {kFuseQKV, kFuseRopeKV, kSelectAttention,
                              kFuseAddRMSNorm, kFuseSwiGLU};
const StringRef kPipeline[] = {kSpecialize,      kFuseQKV,        kFuseRopeKV,
                               kSelectAttention, kFuseAddRMSNorm, kFuseSwiGLU};

struct FusionPipelineOptions
    : public PassPipelineOptions<FusionPipelineOptions> {
  ListOption<std::string> disable{
      *this, "disable",
      llvm::cl::desc("fusion passes to leave out (strata-fuse-qkv, ...)")};
  Option<int64_t> maxSplits{
      *this, "max-splits",
      llvm::cl::desc("split-KV partitions of decode attention (0: derive)"),
      llvm::cl::init(0)};
  Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("lightning prefill chunk (0: the model's)"),
      llvm::cl::init(0)};
};

} // namespace

ArrayRef<StringRef> fusionPassNames() { return kFusions; }
ArrayRef<StringRef> pipelinePassNames() { return kPipeline; }

SmallVector<PipelineStage>
fusionPipelineStages(const FusionPipelineConfig &config) {
  auto enabled = [&](StringRef name) {
    return !config.disabled.count(name.str());
  };
  SmallVector<PipelineStage> stages;
  // Facts first: one function per phase, each saying what it may assume.
  stages.push_back(
      {kSpecialize, kOnModule, [] { return createSpecializePhase(); }});
  // One GEMM for q, k and v; the packed buffer feeds the next two steps.
  if (enabled(kFuseQKV))
    stages.push_back({kFuseQKV, kPerFunction, [] { return createFuseQKV(); }});
  // (QK-norm +) RoPE + KV append in one kernel, variant from the phase.
  if (enabled(kFuseRopeKV))
    stages.push_back(
        {kFuseRopeKV, kPerFunction, [] { return createFuseRopeKV(); }});
  // Attention kernels per phase. When disabled, verify still gets tree
  // attention: the generic op has no tree mask and would be wrong there.
  SelectAttentionOptions select;
  select.maxSplits = config.maxSplits;
  select.chunkSize = config.chunkSize;
  select.requiredOnly = !enabled(kSelectAttention);
  stages.push_back({kSelectAttention, kPerFunction,
                    [select] { return createSelectAttention(select); }});
  // Residual add + the next block's RMSNorm.
  if (enabled(kFuseAddRMSNorm))
    stages.push_back(
        {kFuseAddRMSNorm, kPerFunction, [] { return createFuseAddRMSNorm(); }});
  // Packed gate-up GEMM + silu(gate) * up.
  if (enabled(kFuseSwiGLU))
    stages.push_back(
        {kFuseSwiGLU, kPerFunction, [] { return createFuseSwiGLU(); }});
  return stages;
}

void addPipelineStage(OpPassManager &pm, const PipelineStage &stage) {
  if (stage.perFunction)
    pm.addNestedPass<func::FuncOp>(stage.create());
  else
    pm.addPass(stage.create());
}

void buildFusionPipeline(OpPassManager &pm,
                         const FusionPipelineConfig &config) {
  // Consecutive function passes share one nested pass manager: each phase
  // function goes through all of them on its own thread.
  OpPassManager *perFunction = nullptr;
  for (const PipelineStage &stage : fusionPipelineStages(config)) {
    if (!stage.perFunction) {
      pm.addPass(stage.create());
      perFunction = nullptr;
      continue;
    }
    if (!perFunction)
      perFunction = &pm.nest<func::FuncOp>();
    perFunction->addPass(stage.create());
  }
}

void registerStrataPasses() {
  registerStrataCompilerPasses();
  registerPassPipeline(
      "strata-fusion-pipeline",
      "the whole pipeline: phase functions of fused kernel ops",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        FusionPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        FusionPipelineConfig config;
        for (const std::string &name : options.disable) {
          if (name.empty())
            continue;
          if (!llvm::is_contained(kFusions, name))
            return errorHandler("strata-fusion-pipeline: '" + name +
                                "' is not a fusion pass that can be "
                                "disabled");
          config.disabled.insert(name);
        }
        config.maxSplits = options.maxSplits;
        config.chunkSize = options.chunkSize;
        buildFusionPipeline(pm, config);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(FusionPipelineOptions());
      });
}

} // namespace strata

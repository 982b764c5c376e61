// Builder tests: ModelSpec -> generic forward module, for a Llama-like,
// a Qwen3-like, a sliding-window and a hybrid (linear + softmax) model.
#include "ir/ModelBuilder.h"
#include "ir/StrataDialect.h"
#include "ir/StrataOps.h"
#include "models/ModelSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

using namespace strata;

namespace {

ModelSpec baseSpec(const std::string &name, DType dtype) {
  ModelSpec spec;
  spec.name = name;
  spec.family = "test";
  spec.dtype = dtype;
  spec.vocabSize = 256;
  spec.hiddenSize = 64;
  spec.maxPositionEmbeddings = 4096;
  spec.normEps = 1e-5;
  spec.attention.numHeads = 4;
  spec.attention.numKvHeads = 2;
  spec.attention.headDim = 16;
  spec.attention.scale = 0.25;
  spec.rope.theta = 10000.0;
  spec.rope.rotaryDim = 16;
  spec.mlp.intermediateSize = 128;
  spec.weights.seed = 7;
  return spec;
}

LayerSpec layer(LayerKind kind, int64_t window = 0,
                std::vector<double> slopes = {}) {
  LayerSpec l;
  l.kind = kind;
  l.slidingWindow = window;
  l.decaySlopes = std::move(slopes);
  return l;
}

// Llama 3: GQA, tied embeddings, llama3 rope scaling.
ModelSpec llamaLike() {
  ModelSpec spec = baseSpec("tiny-llama", DType::BF16);
  spec.family = "llama";
  spec.tieWordEmbeddings = true;
  spec.rope.theta = 500000.0;
  spec.rope.scaling.type = RopeScalingType::Llama3;
  spec.rope.scaling.factor = 8.0;
  spec.rope.scaling.lowFreqFactor = 1.0;
  spec.rope.scaling.highFreqFactor = 4.0;
  spec.rope.scaling.originalMaxPositionEmbeddings = 8192;
  spec.layers = {layer(LayerKind::FullAttention),
                 layer(LayerKind::FullAttention)};
  return spec;
}

// Qwen3: explicit head_dim (heads * head_dim != hidden), QK-norm, untied.
ModelSpec qwen3Like() {
  ModelSpec spec = baseSpec("tiny-qwen3", DType::BF16);
  spec.family = "qwen3";
  spec.attention.headDim = 32;
  spec.rope.rotaryDim = 32;
  spec.attention.qkNorm = true;
  spec.layers = {layer(LayerKind::FullAttention),
                 layer(LayerKind::FullAttention),
                 layer(LayerKind::FullAttention)};
  return spec;
}

// Mistral/Gemma style: sliding-window layers interleaved with full ones.
ModelSpec slidingLike() {
  ModelSpec spec = baseSpec("tiny-sliding", DType::F16);
  spec.family = "mistral";
  spec.layers = {
      layer(LayerKind::SlidingAttention, 64), layer(LayerKind::FullAttention),
      layer(LayerKind::SlidingAttention, 64), layer(LayerKind::FullAttention)};
  return spec;
}

// MiniMax style: linear lightning layers and one softmax layer.
ModelSpec hybridLike() {
  ModelSpec spec = baseSpec("tiny-hybrid", DType::F32);
  spec.family = "minimax";
  spec.linear.numHeads = 2;
  spec.linear.headDim = 16;
  spec.layers = {layer(LayerKind::LinearAttention, 0, {0.5, 0.25}),
                 layer(LayerKind::LinearAttention, 0, {0.5, 0.25}),
                 layer(LayerKind::FullAttention),
                 layer(LayerKind::LinearAttention, 0, {0.5, 0.25})};
  return spec;
}

struct Built {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp forward;
};

Built build(const ModelSpec &spec, BuildOptions options = {}) {
  Built built;
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  built.context = std::make_unique<mlir::MLIRContext>(registry);
  auto module = buildForwardModule(*built.context, spec, options);
  REQUIRE(mlir::succeeded(module));
  built.module = std::move(*module);
  built.forward = built.module->lookupSymbol<mlir::func::FuncOp>("forward");
  REQUIRE(built.forward);
  return built;
}

template <typename OpT> std::vector<OpT> collect(mlir::ModuleOp module) {
  std::vector<OpT> ops;
  module.walk([&](OpT op) { ops.push_back(op); });
  return ops;
}

std::vector<AttentionOp> attentions(mlir::ModuleOp module, AttentionKind kind) {
  std::vector<AttentionOp> ops;
  for (AttentionOp op : collect<AttentionOp>(module))
    if (op.getKind() == kind)
      ops.push_back(op);
  return ops;
}

/// Weight name -> shape; also counts duplicates.
struct Weights {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, int> count;
};

Weights weights(mlir::ModuleOp module) {
  Weights w;
  for (WeightOp op : collect<WeightOp>(module)) {
    std::string name = op.getName().str();
    auto shape =
        op.getResult().getType().cast<mlir::RankedTensorType>().getShape();
    w.shapes[name] = std::vector<int64_t>(shape.begin(), shape.end());
    ++w.count[name];
  }
  return w;
}

using Shape = std::vector<int64_t>;

} // namespace

TEST_CASE("Llama-like: GQA, tied embeddings, llama3 rope", "[builder][llama]") {
  Built built = build(llamaLike());
  mlir::ModuleOp module = *built.module;
  REQUIRE(mlir::succeeded(mlir::verify(module)));

  // Module attributes.
  auto attr = [&](const char *name) {
    return module->getAttrOfType<mlir::StringAttr>(name).getValue().str();
  };
  CHECK(attr("strata.model_name") == "tiny-llama");
  CHECK(attr("strata.family") == "llama");
  CHECK(attr("strata.dtype") == "bf16");
  CHECK(module->getAttrOfType<mlir::IntegerAttr>("strata.seed").getInt() == 7);

  // Signature: ids, positions, seqs, cache -> logits, cache.
  mlir::FunctionType type = built.forward.getFunctionType();
  REQUIRE(type.getNumInputs() == 4);
  REQUIRE(type.getNumResults() == 2);
  CHECK(type.getInput(2).isa<SeqsType>());
  auto cache = type.getInput(3).dyn_cast<KVCacheType>();
  REQUIRE(cache);
  CHECK(cache.getLayers() == 2);
  CHECK(cache.getKvHeads() == 2);
  CHECK(cache.getHeadDim() == 16);
  CHECK(cache.getBlockSize() == 16);
  CHECK(cache.getElementType().isBF16());
  CHECK(type.getResult(1) == cache);
  auto logits = type.getResult(0).cast<mlir::RankedTensorType>();
  CHECK(logits.isDynamicDim(0));
  CHECK(logits.getDimSize(1) == 256);
  CHECK(logits.getElementType().isF32());

  // Ops.
  CHECK(attentions(module, AttentionKind::Softmax).size() == 2);
  CHECK(attentions(module, AttentionKind::Linear).empty());
  CHECK(collect<KVAppendOp>(module).size() == 2);
  CHECK(collect<RopeOp>(module).size() == 4);
  CHECK(collect<HeadNormOp>(module).empty());
  for (RopeOp rope : collect<RopeOp>(module)) {
    CHECK(rope.getScaling() == RopeScalingKind::Llama3);
    CHECK(rope.getScalingFactor().convertToDouble() == 8.0);
    CHECK(rope.getOriginalMaxPositions() == 8192);
  }
  for (AttentionOp op : attentions(module, AttentionKind::Softmax)) {
    CHECK(op.getCausal());
    CHECK(op.getScale()->convertToDouble() == 0.25);
  }

  // Weights: GQA shapes, tied embeddings.
  Weights w = weights(module);
  CHECK(w.shapes["model.embed_tokens.weight"] == Shape{256, 64});
  CHECK(w.shapes["model.layers.0.self_attn.q_proj.weight"] == Shape{64, 64});
  CHECK(w.shapes["model.layers.0.self_attn.k_proj.weight"] == Shape{32, 64});
  CHECK(w.shapes["model.layers.1.self_attn.v_proj.weight"] == Shape{32, 64});
  CHECK(w.shapes["model.layers.1.self_attn.o_proj.weight"] == Shape{64, 64});
  CHECK(w.shapes["model.layers.0.input_layernorm.weight"] == Shape{64});
  CHECK(w.shapes["model.layers.0.post_attention_layernorm.weight"] ==
        Shape{64});
  CHECK(w.shapes["model.layers.1.mlp.gate_proj.weight"] == Shape{128, 64});
  CHECK(w.shapes["model.layers.1.mlp.up_proj.weight"] == Shape{128, 64});
  CHECK(w.shapes["model.layers.1.mlp.down_proj.weight"] == Shape{64, 128});
  CHECK(w.shapes["model.norm.weight"] == Shape{64});
  CHECK(w.count["model.embed_tokens.weight"] == 1);
  CHECK(w.shapes.count("lm_head.weight") == 0);
  CHECK(w.shapes.count("model.layers.0.self_attn.q_proj.bias") == 0);

  // The logits read the embedding table itself.
  std::vector<LogitsOp> logitsOps = collect<LogitsOp>(module);
  REQUIRE(logitsOps.size() == 1);
  auto table = logitsOps[0].getWeight().getDefiningOp<WeightOp>();
  REQUIRE(table);
  CHECK(table.getName() == "model.embed_tokens.weight");
}

TEST_CASE("Qwen3-like: explicit head_dim, QK-norm, untied",
          "[builder][qwen3]") {
  Built built = build(qwen3Like());
  mlir::ModuleOp module = *built.module;
  REQUIRE(mlir::succeeded(mlir::verify(module)));

  CHECK(collect<HeadNormOp>(module).size() == 6);
  CHECK(attentions(module, AttentionKind::Softmax).size() == 3);
  auto cache =
      built.forward.getFunctionType().getInput(3).dyn_cast<KVCacheType>();
  REQUIRE(cache);
  CHECK(cache.getHeadDim() == 32);
  CHECK(cache.getLayers() == 3);

  Weights w = weights(module);
  // 4 heads x 32 = 128 != hidden 64: projections are not square.
  CHECK(w.shapes["model.layers.2.self_attn.q_proj.weight"] == Shape{128, 64});
  CHECK(w.shapes["model.layers.2.self_attn.k_proj.weight"] == Shape{64, 64});
  CHECK(w.shapes["model.layers.2.self_attn.o_proj.weight"] == Shape{64, 128});
  CHECK(w.shapes["model.layers.0.self_attn.q_norm.weight"] == Shape{32});
  CHECK(w.shapes["model.layers.0.self_attn.k_norm.weight"] == Shape{32});
  CHECK(w.shapes["lm_head.weight"] == Shape{256, 64});

  auto table =
      collect<LogitsOp>(module)[0].getWeight().getDefiningOp<WeightOp>();
  REQUIRE(table);
  CHECK(table.getName() == "lm_head.weight");
}

TEST_CASE("Sliding window lands on exactly the sliding layers",
          "[builder][sliding]") {
  Built built = build(slidingLike());
  mlir::ModuleOp module = *built.module;
  REQUIRE(mlir::succeeded(mlir::verify(module)));

  std::vector<AttentionOp> ops = attentions(module, AttentionKind::Softmax);
  REQUIRE(ops.size() == 4);
  std::vector<int64_t> windows, layers;
  for (AttentionOp op : ops) {
    windows.push_back(static_cast<int64_t>(op.getSlidingWindow().value_or(0)));
    layers.push_back(static_cast<int64_t>(op.getLayer()));
  }
  CHECK(windows == std::vector<int64_t>{64, 0, 64, 0});
  CHECK(layers == std::vector<int64_t>{0, 1, 2, 3});
  auto cache =
      built.forward.getFunctionType().getInput(3).dyn_cast<KVCacheType>();
  REQUIRE(cache);
  CHECK(cache.getElementType().isF16());
}

TEST_CASE("Hybrid: linear and softmax layers, cache and state",
          "[builder][hybrid]") {
  BuildOptions options;
  options.kvBlockSize = 32;
  Built built = build(hybridLike(), options);
  mlir::ModuleOp module = *built.module;
  REQUIRE(mlir::succeeded(mlir::verify(module)));

  // ids, positions, seqs, cache, state -> logits, cache, state.
  mlir::FunctionType type = built.forward.getFunctionType();
  REQUIRE(type.getNumInputs() == 5);
  REQUIRE(type.getNumResults() == 3);
  auto cache = type.getInput(3).dyn_cast<KVCacheType>();
  auto state = type.getInput(4).dyn_cast<LinearStateType>();
  REQUIRE(cache);
  REQUIRE(state);
  CHECK(cache.getLayers() == 1);
  CHECK(cache.getBlockSize() == 32);
  CHECK(state.getLayers() == 3);
  CHECK(state.getHeads() == 2);
  CHECK(state.getKeyDim() == 16);
  CHECK(state.getValueDim() == 16);
  CHECK(state.getElementType().isF32());
  CHECK(type.getResult(2) == state);

  std::vector<AttentionOp> linear = attentions(module, AttentionKind::Linear);
  REQUIRE(linear.size() == 3);
  CHECK(attentions(module, AttentionKind::Softmax).size() == 1);
  CHECK(collect<KVAppendOp>(module).size() == 1);
  CHECK(collect<SiluOp>(module).size() == 9);
  CHECK(collect<SigmoidMulOp>(module).size() == 3);
  for (auto [i, op] : llvm::enumerate(linear)) {
    CHECK(static_cast<int64_t>(op.getLayer()) == static_cast<int64_t>(i));
    CHECK(op.getDecaySlopes()->size() == 2);
  }
  // The softmax layer is layer 0 of the cache although it is model layer 2.
  CHECK(attentions(module, AttentionKind::Softmax)[0].getLayer() == 0);

  Weights w = weights(module);
  CHECK(w.shapes["model.layers.0.self_attn.q_proj.weight"] == Shape{32, 64});
  CHECK(w.shapes["model.layers.0.self_attn.output_gate.weight"] ==
        Shape{32, 64});
  CHECK(w.shapes["model.layers.0.self_attn.norm.weight"] == Shape{32});
  CHECK(w.shapes["model.layers.3.self_attn.o_proj.weight"] == Shape{64, 32});
  CHECK(w.shapes["model.layers.2.self_attn.q_proj.weight"] == Shape{64, 64});
  CHECK(w.shapes.count("model.layers.2.self_attn.output_gate.weight") == 0);
  CHECK(w.shapes["lm_head.weight"] == Shape{256, 64});
}

TEST_CASE("Linear-only model has no cache argument", "[builder][hybrid]") {
  ModelSpec spec = hybridLike();
  spec.layers = {spec.layers[0], spec.layers[1]};
  spec.linear.outputGate = false;
  spec.linear.qkvSilu = false;
  Built built = build(spec);
  mlir::FunctionType type = built.forward.getFunctionType();
  REQUIRE(type.getNumInputs() == 4);
  CHECK(type.getInput(3).isa<LinearStateType>());
  CHECK(collect<KVAppendOp>(*built.module).empty());
  CHECK(collect<SiluOp>(*built.module).empty());
  CHECK(collect<SigmoidMulOp>(*built.module).empty());
}

TEST_CASE("Bad specs and options fail with a message", "[builder][errors]") {
  mlir::DialectRegistry registry;
  registerStrataDialect(registry);
  mlir::MLIRContext context(registry);
  std::vector<std::string> messages;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    messages.push_back(d.str());
    return mlir::success();
  });

  BuildOptions badBlock;
  badBlock.kvBlockSize = 12;
  CHECK(mlir::failed(buildForwardModule(context, llamaLike(), badBlock)));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "kv block size must be a power of two, got 12");

  ModelSpec slopes = hybridLike();
  slopes.layers[1].decaySlopes = {0.5};
  messages.clear();
  CHECK(mlir::failed(buildForwardModule(context, slopes)));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] ==
        "layer 1 has 1 decay slopes, expected one per linear head (2)");

  ModelSpec empty = llamaLike();
  empty.layers.clear();
  messages.clear();
  CHECK(mlir::failed(buildForwardModule(context, empty)));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "model 'tiny-llama' has no layers");
}

//===- ModelBuilder.cpp - ModelSpec to strata IR --------------------------===//
//
// Emits the generic forward pass of a decoder-only model, one strata op per
// step of the model as written.
//
// Weight names are those of Hugging Face checkpoints, so that a safetensors
// file binds by name (layouts as in Hugging Face: linear weights are
// [out_features, in_features]):
//
//   model.embed_tokens.weight                        [vocab, hidden]
//   model.layers.{i}.input_layernorm.weight          [hidden]
//   softmax layers:
//   model.layers.{i}.self_attn.{q,k,v}_proj.weight   [heads*head_dim, hidden]
//   model.layers.{i}.self_attn.{q,k,v}_proj.bias     [heads*head_dim]
//   (qkv_bias) model.layers.{i}.self_attn.{q,k}_norm.weight     [head_dim]
//   (qk_norm) model.layers.{i}.self_attn.o_proj.weight         [hidden,
//   q_heads*head_dim] linear-attention layers:
//   model.layers.{i}.self_attn.{q,k,v}_proj.weight   [heads*head_dim, hidden]
//   model.layers.{i}.self_attn.norm.weight           [heads*head_dim]
//   (output_norm) model.layers.{i}.self_attn.output_gate.weight
//   [heads*head_dim, hidden] model.layers.{i}.self_attn.o_proj.weight [hidden,
//   heads*head_dim] model.layers.{i}.post_attention_layernorm.weight [hidden]
//   model.layers.{i}.mlp.{gate,up}_proj.weight       [intermediate, hidden]
//   model.layers.{i}.mlp.down_proj.weight            [hidden, intermediate]
//   model.norm.weight                                [hidden]
//   lm_head.weight                                   [vocab, hidden] (untied)
//
//===----------------------------------------------------------------------===//

#include "ir/ModelBuilder.h"
#include "ir/StrataOps.h"
#include "models/ModelSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MathExtras.h"

#include <string>

using namespace mlir;

namespace strata {
namespace {

class ForwardBuilder {
public:
  ForwardBuilder(MLIRContext &context, const ModelSpec &spec,
                 const BuildOptions &options)
      : ctx(context), spec(spec), options(options), b(&context),
        loc(baseLocation(context, spec)) {}

  FailureOr<OwningOpRef<ModuleOp>> build();

private:
  static Location baseLocation(MLIRContext &context, const ModelSpec &spec) {
    if (spec.loc.file.empty())
      return NameLoc::get(StringAttr::get(&context, spec.name));
    return FileLineColLoc::get(&context, spec.loc.file, spec.loc.line,
                               spec.loc.column);
  }

  LogicalResult checkSpec();
  Type elementType() const;
  RankedTensorType tensor(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elementType());
  }

  Value weight(const std::string &name, ArrayRef<int64_t> shape) {
    return b.create<WeightOp>(loc, tensor(shape), b.getStringAttr(name));
  }
  Value rmsNorm(Value x, const std::string &weightName, int64_t size) {
    return rmsNorm(x, weightName, size, spec.normEps);
  }
  Value rmsNorm(Value x, const std::string &weightName, int64_t size,
                double eps) {
    return b.create<RMSNormOp>(loc, x, weight(weightName, {size}),
                               b.getF64FloatAttr(eps));
  }
  Value linear(Value x, const std::string &prefix, int64_t out, int64_t in,
               bool bias = false) {
    Value w = weight(prefix + ".weight", {out, in});
    Value bv = bias ? weight(prefix + ".bias", {out}) : Value();
    return b.create<LinearOp>(loc, x, w, bv);
  }
  Value splitHeads(Value x, int64_t heads) {
    return b.create<SplitHeadsOp>(loc, x, b.getI64IntegerAttr(heads));
  }
  Value rope(Value x);

  Value softmaxLayer(Value x, const std::string &prefix, const LayerSpec &layer,
                     int64_t index);
  Value linearLayer(Value x, const std::string &prefix, const LayerSpec &layer,
                    int64_t index);
  Value mlp(Value h, const std::string &prefix);
  /// The residual connection of one block: `alpha * stream + beta * out`,
  /// the scales recorded only when they are not 1.
  Value residualAdd(Value stream, Value out, const ResidualScale &scale);

  MLIRContext &ctx;
  const ModelSpec &spec;
  const BuildOptions &options;
  OpBuilder b;
  Location loc;
  Value positions, seqs, kvCache, linearState;
};

LogicalResult ForwardBuilder::checkSpec() {
  // The spec is validated by the importer; these are the facts the IR
  // depends on, re-checked so that a hand-made spec fails with a message
  // instead of a verifier error deep inside the module.
  if (spec.layers.empty())
    return emitError(loc) << "model '" << spec.name << "' has no layers";
  if (options.kvBlockSize <= 0 ||
      !llvm::isPowerOf2_64(static_cast<uint64_t>(options.kvBlockSize)))
    return emitError(loc) << "kv block size must be a power of two, got "
                          << options.kvBlockSize;
  if (spec.hasSoftmaxLayers() && spec.attention.scale <= 0.0)
    return emitError(loc) << "attention scale must be positive, got "
                          << spec.attention.scale;
  for (auto [i, layer] : llvm::enumerate(spec.layers))
    if (layer.kind == LayerKind::LinearAttention &&
        static_cast<int64_t>(layer.decaySlopes.size()) != spec.linear.numHeads)
      return emitError(loc)
             << "layer " << i << " has " << layer.decaySlopes.size()
             << " decay slopes, expected one per linear head ("
             << spec.linear.numHeads << ")";
  return success();
}

Type ForwardBuilder::elementType() const {
  switch (spec.dtype) {
  case DType::F32:
    return Float32Type::get(&ctx);
  case DType::F16:
    return Float16Type::get(&ctx);
  case DType::BF16:
    return BFloat16Type::get(&ctx);
  }
  return Float32Type::get(&ctx);
}

Value ForwardBuilder::rope(Value x) {
  const RopeSpec &r = spec.rope;
  RopePairingKind pairing = r.pairing == RopePairing::Neox
                                ? RopePairingKind::Neox
                                : RopePairingKind::GptJ;
  RopeScalingKind scaling = RopeScalingKind::None;
  FloatAttr factor, low, high;
  IntegerAttr originalMax;
  switch (r.scaling.type) {
  case RopeScalingType::None:
    break;
  case RopeScalingType::Linear:
    scaling = RopeScalingKind::Linear;
    factor = b.getF64FloatAttr(r.scaling.factor);
    break;
  case RopeScalingType::Llama3:
    scaling = RopeScalingKind::Llama3;
    factor = b.getF64FloatAttr(r.scaling.factor);
    low = b.getF64FloatAttr(r.scaling.lowFreqFactor);
    high = b.getF64FloatAttr(r.scaling.highFreqFactor);
    originalMax = b.getI64IntegerAttr(r.scaling.originalMaxPositionEmbeddings);
    break;
  }
  return b.create<RopeOp>(
      loc, x, positions, b.getI64IntegerAttr(r.rotaryDim),
      b.getF64FloatAttr(r.theta), RopePairingKindAttr::get(&ctx, pairing),
      RopeScalingKindAttr::get(&ctx, scaling), factor, low, high, originalMax);
}

Value ForwardBuilder::softmaxLayer(Value x, const std::string &prefix,
                                   const LayerSpec &layer, int64_t index) {
  const AttentionSpec &a = spec.attention;
  int64_t hidden = spec.hiddenSize, d = a.headDim;
  std::string attn = prefix + ".self_attn";
  Value q = linear(x, attn + ".q_proj", a.numHeads * d, hidden, a.qkvBias);
  Value k = linear(x, attn + ".k_proj", a.numKvHeads * d, hidden, a.qkvBias);
  Value v = linear(x, attn + ".v_proj", a.numKvHeads * d, hidden, a.qkvBias);
  q = splitHeads(q, a.numHeads);
  k = splitHeads(k, a.numKvHeads);
  v = splitHeads(v, a.numKvHeads);
  if (a.qkNorm) {
    // Qwen3: per-head RMSNorm of q and k, before the rotation.
    FloatAttr eps = b.getF64FloatAttr(spec.normEps);
    q = b.create<HeadNormOp>(loc, q, weight(attn + ".q_norm.weight", {d}), eps);
    k = b.create<HeadNormOp>(loc, k, weight(attn + ".k_norm.weight", {d}), eps);
  }
  q = rope(q);
  k = rope(k);
  kvCache = b.create<KVAppendOp>(loc, k, v, kvCache, seqs,
                                 b.getI64IntegerAttr(index));
  int64_t window =
      layer.kind == LayerKind::SlidingAttention ? layer.slidingWindow : 0;
  Value o = b.create<AttentionOp>(loc, q, kvCache, seqs, index, a.scale,
                                  /*causal=*/true, window)
                .getOut();
  o = b.create<MergeHeadsOp>(loc, o);
  return linear(o, attn + ".o_proj", hidden, a.numHeads * d);
}

Value ForwardBuilder::linearLayer(Value x, const std::string &prefix,
                                  const LayerSpec &layer, int64_t index) {
  const LinearAttentionSpec &l = spec.linear;
  int64_t hidden = spec.hiddenSize, inner = l.numHeads * l.headDim;
  std::string attn = prefix + ".self_attn";
  Value q = linear(x, attn + ".q_proj", inner, hidden);
  Value k = linear(x, attn + ".k_proj", inner, hidden);
  Value v = linear(x, attn + ".v_proj", inner, hidden);
  if (l.qkvSilu) {
    q = b.create<SiluOp>(loc, q);
    k = b.create<SiluOp>(loc, k);
    v = b.create<SiluOp>(loc, v);
  }
  auto op = b.create<AttentionOp>(
      loc, splitHeads(q, l.numHeads), splitHeads(k, l.numHeads),
      splitHeads(v, l.numHeads), linearState, seqs, index, layer.decaySlopes);
  linearState = op.getNewState();
  Value o = b.create<MergeHeadsOp>(loc, op.getOut());
  if (l.outputNorm)
    o = rmsNorm(o, attn + ".norm.weight", inner, l.normEps);
  if (l.outputGate) {
    // MiniMax: the gate is computed from the layer's (normed) input.
    Value gate = linear(x, attn + ".output_gate", inner, hidden);
    o = b.create<SigmoidMulOp>(loc, gate, o);
  }
  return linear(o, attn + ".o_proj", hidden, inner);
}

Value ForwardBuilder::mlp(Value h, const std::string &prefix) {
  int64_t hidden = spec.hiddenSize, inter = spec.mlp.intermediateSize;
  Value x = rmsNorm(h, prefix + ".post_attention_layernorm.weight", hidden);
  Value gate = linear(x, prefix + ".mlp.gate_proj", inter, hidden);
  Value up = linear(x, prefix + ".mlp.up_proj", inter, hidden);
  Value act = b.create<SiluMulOp>(loc, gate, up);
  Value down = linear(act, prefix + ".mlp.down_proj", hidden, inter);
  return residualAdd(spec.residualFromNorm ? x : h, down, spec.mlpResidual);
}

Value ForwardBuilder::residualAdd(Value stream, Value out,
                                  const ResidualScale &scale) {
  auto attr = [&](double v) {
    return v == 1.0 ? FloatAttr() : b.getF64FloatAttr(v);
  };
  return b.create<AddOp>(loc, stream, out, attr(scale.alpha), attr(scale.beta));
}

FailureOr<OwningOpRef<ModuleOp>> ForwardBuilder::build() {
  if (failed(checkSpec()))
    return failure();

  int64_t numSoftmax = 0, numLinear = 0;
  for (const LayerSpec &layer : spec.layers)
    ++(layer.kind == LayerKind::LinearAttention ? numLinear : numSoftmax);

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  module->getOperation()->setAttr("strata.model_name",
                                  b.getStringAttr(spec.name));
  module->getOperation()->setAttr("strata.family",
                                  b.getStringAttr(spec.family));
  module->getOperation()->setAttr("strata.dtype",
                                  b.getStringAttr(toString(spec.dtype)));
  // The seed is a uint64_t; the attribute keeps its 64 bits.
  module->getOperation()->setAttr(
      "strata.seed",
      b.getI64IntegerAttr(static_cast<int64_t>(spec.weights.seed)));
  module->getOperation()->setAttr("strata.init_std",
                                  b.getF64FloatAttr(spec.weights.initStd));

  // Facts the passes size kernels by (the split-KV partitions of paged
  // decode attention, the chunk of lightning prefill): read from the IR so
  // that the same pipeline serves every model.
  if (spec.maxPositionEmbeddings > 0)
    module->getOperation()->setAttr(
        "strata.max_positions",
        b.getI64IntegerAttr(spec.maxPositionEmbeddings));
  if (numLinear > 0)
    module->getOperation()->setAttr("strata.linear_chunk_size",
                                    b.getI64IntegerAttr(spec.linear.chunkSize));

  auto tokens = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  SmallVector<Type> inputs = {tokens, tokens, SeqsType::get(&ctx)};
  SmallVector<Type> results = {RankedTensorType::get(
      {ShapedType::kDynamic, spec.vocabSize}, b.getF32Type())};
  if (numSoftmax > 0) {
    auto cacheType = KVCacheType::get(
        &ctx, numSoftmax, spec.attention.numKvHeads, spec.attention.headDim,
        options.kvBlockSize, elementType());
    inputs.push_back(cacheType);
    results.push_back(cacheType);
  }
  if (numLinear > 0) {
    auto stateType = LinearStateType::get(&ctx, numLinear, spec.linear.numHeads,
                                          spec.linear.headDim,
                                          spec.linear.headDim, b.getF32Type());
    inputs.push_back(stateType);
    results.push_back(stateType);
  }

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(loc, "forward",
                                     b.getFunctionType(inputs, results));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value tokenIds = entry->getArgument(0);
  positions = entry->getArgument(1);
  seqs = entry->getArgument(2);
  unsigned next = 3;
  if (numSoftmax > 0)
    kvCache = entry->getArgument(next++);
  if (numLinear > 0)
    linearState = entry->getArgument(next++);

  int64_t hidden = spec.hiddenSize;
  Value embed = weight("model.embed_tokens.weight", {spec.vocabSize, hidden});
  Value h = b.create<EmbeddingOp>(loc, tokenIds, embed);

  int64_t softmaxIndex = 0, linearIndex = 0;
  for (auto [i, layer] : llvm::enumerate(spec.layers)) {
    std::string prefix = "model.layers." + std::to_string(i);
    Value x = rmsNorm(h, prefix + ".input_layernorm.weight", hidden);
    Value attn = layer.kind == LayerKind::LinearAttention
                     ? linearLayer(x, prefix, layer, linearIndex++)
                     : softmaxLayer(x, prefix, layer, softmaxIndex++);
    // The residual stream continues from the layer input, or from its normed
    // value (ModelSpec::residualFromNorm).
    h = residualAdd(spec.residualFromNorm ? x : h, attn,
                    layer.kind == LayerKind::LinearAttention
                        ? spec.linearResidual
                        : spec.attentionResidual);
    h = mlp(h, prefix);
  }

  h = rmsNorm(h, "model.norm.weight", hidden);
  // Tied embeddings reuse the embedding table as the output matrix.
  Value head = spec.tieWordEmbeddings
                   ? embed
                   : weight("lm_head.weight", {spec.vocabSize, hidden});
  auto logits = b.create<LogitsOp>(loc, h, head, seqs);
  if (options.allTokenLogits)
    logits.setAllTokens(true);
  SmallVector<Value> returned = {logits};
  if (kvCache)
    returned.push_back(kvCache);
  if (linearState)
    returned.push_back(linearState);
  b.create<func::ReturnOp>(loc, returned);

  if (failed(mlir::verify(*module)))
    return failure();
  return module;
}

} // namespace

FailureOr<OwningOpRef<ModuleOp>>
buildForwardModule(MLIRContext &context, const ModelSpec &spec,
                   const BuildOptions &options) {
  context.getOrLoadDialect<StrataDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  return ForwardBuilder(context, spec, options).build();
}

} // namespace strata

//===- SelectAttention.cpp - the attention kernel of every layer ----------===//
//
// strata.attention says what a layer computes; which kernel computes it
// best depends on the phase: fresh tokens on an empty cache (prefill), new
// tokens on a cached prefix (extend), one token per sequence (decode), a
// token tree (verify). The kernel ops carry what the kernel needs beyond
// the generic op: split-KV partitions for decode, the parent ids for a
// tree, the chunk size for lightning prefill.
//
//===----------------------------------------------------------------------===//

#include "ir/StrataOps.h"
#include "passes/PassStatistics.h"
#include "passes/Passes.h"
#include "passes/PhaseFacts.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <array>

#define DEBUG_TYPE "strata-select-attention"

using namespace mlir;

namespace strata {
#define GEN_PASS_DEF_SELECTATTENTION
#include "passes/Passes.h.inc"
} // namespace strata

namespace strata {
namespace {

// Lightning prefill chunk and split-KV bounds when the module has no facts.
constexpr int64_t kDefaultChunkSize = 64;
constexpr int64_t kDefaultMaxSplits = 16;
constexpr int64_t kMaxSplitsCap = 64;

/// Kernel parameters resolved once per function from options and facts.
struct KernelParams {
  int64_t maxSplits;
  int64_t chunkSize;
};

/// Attributes every softmax kernel carries over from the generic op.
struct SoftmaxAttrs {
  IntegerAttr layer;
  FloatAttr scale;
  IntegerAttr window;
};

/// The generic op's verifier guarantees a scale on softmax attention.
SoftmaxAttrs softmaxAttrs(AttentionOp op, Builder &b) {
  return {op.getLayerAttr(), op.getScaleAttr(),
          b.getI64IntegerAttr(op.getSlidingWindow().value_or(0))};
}

/// The packed rotated QKV buffer that q was sliced from, when the layer's
/// rope_kv_write packed also wrote the cache this op reads.
Value packedSource(AttentionOp op) {
  auto slice = op.getInputs().front().getDefiningOp<HeadSliceOp>();
  if (!slice || slice.getFirst() != 0)
    return {};
  auto write = slice.getX().getDefiningOp<RopeKVWriteOp>();
  if (!write || write.getVariant() != RopeVariant::Packed ||
      write.getOut() != slice.getX() || write.getNewCache() != op.getState() ||
      static_cast<int64_t>(slice.getNumHeads()) !=
          static_cast<int64_t>(write.getNumQHeads()))
    return {};
  return write.getOut();
}

Value selectSoftmax(AttentionOp op, const PhaseFacts &facts,
                    const KernelParams &params, PatternRewriter &b) {
  if (!op.getCausal())
    return {};
  Location loc = op.getLoc();
  Value q = op.getInputs().front(), cache = op.getState(), seqs = op.getSeqs();
  SoftmaxAttrs a = softmaxAttrs(op, b);
  switch (facts.phase) {
  case Phase::Prefill:
    if (Value packed = packedSource(op)) {
      auto write = packed.getDefiningOp<RopeKVWriteOp>();
      return b.create<PrefillAttentionOp>(
          loc, q.getType(), packed, seqs, write.getNumQHeadsAttr(),
          write.getNumKvHeadsAttr(), a.scale, a.window);
    }
    // Without the packed buffer the cache holds k and v: attending over it
    // as an extend of an empty prefix is correct.
    [[fallthrough]];
  case Phase::Extend:
    return b.create<ExtendAttentionOp>(loc, q.getType(), q, cache, seqs,
                                       a.layer, a.scale, a.window);
  case Phase::Decode:
    return b.create<PagedDecodeAttentionOp>(
        loc, q.getType(), q, cache, seqs, a.layer, a.scale, a.window,
        b.getI64IntegerAttr(params.maxSplits));
  case Phase::Verify:
    if (!facts.parentIds)
      return {};
    return b.create<TreeAttentionOp>(loc, q.getType(), q, cache, seqs,
                                     facts.parentIds, a.layer, a.scale,
                                     a.window);
  }
  return {};
}

/// The lightning kernel of a linear attention op; null when the phase has
/// none.
Operation *selectLinear(AttentionOp op, const PhaseFacts &facts,
                        const KernelParams &params, PatternRewriter &b) {
  // A recurrent state follows one path: a tree of drafts has no kernel.
  if (facts.phase == Phase::Verify && facts.draft != DraftShape::Chain)
    return nullptr;
  ValueRange in = op.getInputs();
  Location loc = op.getLoc();
  TypeRange types = op->getResultTypes();
  if (facts.phase == Phase::Decode)
    return b.create<LightningDecodeOp>(
        loc, types, in[0], in[1], in[2], op.getState(), op.getSeqs(),
        op.getLayerAttr(), op.getDecaySlopesAttr());
  return b.create<LightningPrefillOp>(
      loc, types, in[0], in[1], in[2], op.getState(), op.getSeqs(),
      op.getLayerAttr(), op.getDecaySlopesAttr(),
      b.getI64IntegerAttr(params.chunkSize));
}

/// One attention op and the kernel its function's phase calls for.
struct SelectKernel : OpRewritePattern<AttentionOp> {
  SelectKernel(MLIRContext *ctx, const PhaseFacts &facts,
               const KernelParams &params, bool requiredOnly)
      : OpRewritePattern(ctx), facts(facts), params(params),
        requiredOnly(requiredOnly) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    bool softmax = op.getKind() == AttentionKind::Softmax;
    if (requiredOnly && !(softmax && facts.phase == Phase::Verify))
      return rewriter.notifyMatchFailure(op, "not required in this phase");
    rewriter.setInsertionPoint(op);
    if (!softmax) {
      Operation *fused = selectLinear(op, facts, params, rewriter);
      if (!fused)
        return rewriter.notifyMatchFailure(op, "no linear kernel for a tree");
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE ": layer " << op.getLayer() << " ("
                 << stringifyPhase(facts.phase) << ") -> " << fused->getName()
                 << " (linear attention, chunk " << params.chunkSize << ")\n");
      rewriter.replaceOp(op, fused->getResults());
      return success();
    }
    Value q = op.getInputs().front();
    Value fused = selectSoftmax(op, facts, params, rewriter);
    if (!fused)
      return rewriter.notifyMatchFailure(
          op, "not causal, or verify without parent ids");
    LLVM_DEBUG({
      llvm::dbgs() << DEBUG_TYPE ": layer " << op.getLayer() << " ("
                   << stringifyPhase(facts.phase) << ") -> "
                   << fused.getDefiningOp()->getName();
      if (isa<PrefillAttentionOp>(fused.getDefiningOp()))
        llvm::dbgs() << " (rope_kv_write packed left q, k, v in one buffer)";
      if (isa<PagedDecodeAttentionOp>(fused.getDefiningOp()))
        llvm::dbgs() << " (max_splits " << params.maxSplits << ")";
      llvm::dbgs() << "\n";
    });
    rewriter.replaceOp(op, fused);
    // prefill_attention reads q from the packed buffer itself.
    if (auto slice = q.getDefiningOp<HeadSliceOp>())
      if (slice->use_empty())
        rewriter.eraseOp(slice);
    return success();
  }

private:
  PhaseFacts facts;
  KernelParams params;
  bool requiredOnly;
};

class SelectAttentionPass
    : public impl::SelectAttentionBase<SelectAttentionPass> {
public:
  using Base::Base;
  SelectAttentionPass() = default;
  // A clone for another thread counts on its own (PassStatistics.h).
  SelectAttentionPass(const SelectAttentionPass &other) : Base(other) {}

  // Checked once per run, before any function: a bad option is one
  // message, not one per phase function.
  LogicalResult initialize(MLIRContext *ctx) override {
    if (maxSplits >= 0 && chunkSize >= 0 && splitTokens > 0)
      return success();
    return emitError(UnknownLoc::get(ctx))
           << "strata-select-attention: max-splits and chunk-size must be "
              ">= 0, split-tokens > 0; got max-splits="
           << static_cast<int64_t>(maxSplits)
           << ", chunk-size=" << static_cast<int64_t>(chunkSize)
           << ", split-tokens=" << static_cast<int64_t>(splitTokens);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<PhaseFacts> facts = readPhaseFacts(func);
    if (!facts)
      return;
    KernelParams params{maxSplits, chunkSize};
    if (params.maxSplits == 0) {
      // Enough partitions that the longest context splits into pieces of
      // split-tokens positions: a batch of few long sequences then still
      // spreads over the GPU.
      params.maxSplits =
          facts->maxPositions > 0
              ? std::clamp<int64_t>((facts->maxPositions + splitTokens - 1) /
                                        splitTokens,
                                    1, kMaxSplitsCap)
              : kDefaultMaxSplits;
    }
    if (params.chunkSize == 0)
      params.chunkSize = facts->linearChunkSize > 0 ? facts->linearChunkSize
                                                    : kDefaultChunkSize;

    const int64_t opsBefore = countAllOps(func);
    const KernelCounts kernelsBefore = countKernels(func);
    attentions += countOps<AttentionOp>(func);
    RewritePatternSet patterns(&getContext());
    patterns.add<SelectKernel>(&getContext(), *facts, params, requiredOnly);
    if (failed(applyFusionPatterns(
            func, FrozenRewritePatternSet(std::move(patterns)), getArgument())))
      return signalPassFailure();
    // Which kernel each layer got: one per attention op replaced.
    const KernelCounts kernelsAfter = countKernels(func);
    for (size_t i = 0; i < kernelsAfter.size(); ++i)
      *kernels[i] += kernelsAfter[i] - kernelsBefore[i];
    generic += countOps<AttentionOp>(func);
    countOpChange(opsBefore, countAllOps(func), opsRemoved, opsAdded);
  }

private:
  /// How many ops of each kernel the pass creates `func` holds, in the
  /// order of `kernels`.
  using KernelCounts = std::array<int64_t, 6>;
  static KernelCounts countKernels(func::FuncOp func) {
    return {countOps<PrefillAttentionOp>(func),
            countOps<ExtendAttentionOp>(func),
            countOps<PagedDecodeAttentionOp>(func),
            countOps<TreeAttentionOp>(func),
            countOps<LightningPrefillOp>(func),
            countOps<LightningDecodeOp>(func)};
  }

  PassStatistic attentions{this, "attentions",
                           "attention ops seen (the roots of the pattern, "
                           "one per layer and phase)"};
  PassStatistic prefill{this, "prefill-attention",
                        "layers given prefill_attention"};
  PassStatistic extend{this, "extend-attention",
                       "layers given extend_attention"};
  PassStatistic decode{this, "paged-decode-attention",
                       "layers given paged_decode_attention"};
  PassStatistic tree{this, "tree-attention", "layers given tree_attention"};
  PassStatistic lightningPrefill{this, "lightning-prefill",
                                 "linear layers given lightning_prefill"};
  PassStatistic lightningDecode{this, "lightning-decode",
                                "linear layers given lightning_decode"};
  PassStatistic *kernels[std::tuple_size_v<KernelCounts>] = {
      &prefill, &extend, &decode, &tree, &lightningPrefill, &lightningDecode};
  PassStatistic generic{this, "attentions-left",
                        "attention ops left generic (not causal, a tree "
                        "for a linear layer, or required-only)"};
  PassStatistic opsRemoved{this, "ops-removed",
                           "net decrease of the functions' op count"};
  PassStatistic opsAdded{this, "ops-added",
                         "net increase of the functions' op count"};
};

} // namespace
} // namespace strata

// The largest sizes a model file may give. Each is far above any published
// model and far below what would overflow a size computation or ask for an
// absurd amount of memory before anything could say so; a larger value is
// an error at its line and column. The plan format keeps the same bounds
// (runtime/plan/PlanLimits.h), so every model that imports also loads as a
// plan; tools/strata checks that the two agree.
#ifndef STRATA_MODELS_MODELLIMITS_H
#define STRATA_MODELS_MODELLIMITS_H

#include <cstdint>

namespace strata::limits {

constexpr int64_t kMaxVocabSize = int64_t(1) << 24;
constexpr int64_t kMaxHiddenSize = int64_t(1) << 16;
constexpr int64_t kMaxIntermediateSize = int64_t(1) << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxHeadDim = 1024;
/// max_position_embeddings, sliding windows and rope scaling's original
/// context.
constexpr int64_t kMaxPositions = int64_t(1) << 26;
/// Tokens per lightning prefill chunk.
constexpr int64_t kMaxChunkSize = 4096;
/// Random weights: the largest standard deviation.
constexpr double kMaxInitStd = 100.0;
/// EOS ids a tokenizer entry may list.
constexpr int64_t kMaxEosIds = 64;

} // namespace strata::limits

#endif // STRATA_MODELS_MODELLIMITS_H

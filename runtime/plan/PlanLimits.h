// Bounds every valid plan keeps (validatePlan). They are far above any real
// model and far below what would overflow a size computation, so that a
// damaged or hand-made plan is refused with a message instead of asking for
// petabytes. The compiler's options (`strata compile --max-tokens ...`) and
// the model format (models/ModelLimits.h) use the same values, so whatever
// compiles also loads; tools/strata checks that the two copies agree.
#ifndef STRATA_RUNTIME_PLAN_PLANLIMITS_H
#define STRATA_RUNTIME_PLAN_PLANLIMITS_H

#include <cstdint>

namespace strata::plan {

constexpr int64_t kMaxTokensLimit = int64_t(1) << 24; ///< tokens per step
constexpr int64_t kMaxBatchLimit = int64_t(1) << 16;  ///< sequences per step
/// Tokens per KV-cache block: a power of two in [1, kMaxKvBlockSize].
constexpr int64_t kMaxKvBlockSize = 4096;
constexpr int64_t kMaxVocabSize = int64_t(1) << 24;
constexpr int64_t kMaxPositions = int64_t(1) << 26;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxHeadDim = 1024;
/// Any constant dimension of a weight or buffer (the vocabulary is the
/// largest one a model has).
constexpr int64_t kMaxDimension = int64_t(1) << 24;
/// Elements of one weight or one buffer at the plan's limits.
constexpr int64_t kMaxElements = int64_t(1) << 42;
constexpr int64_t kMaxRank = 8;
constexpr int32_t kMaxStreams = 16;
/// Random weights: the largest standard deviation of a matrix.
constexpr double kMaxInitStd = 100.0;
/// EOS ids a model may list (models name one to a handful).
constexpr int64_t kMaxEosIds = 64;
/// Fusion passes a plan may record (the pipeline has a handful) and the
/// length of a pass's flag.
constexpr int64_t kMaxFusionPasses = 64;
constexpr int64_t kMaxPassNameLength = 64;

} // namespace strata::plan

#endif // STRATA_RUNTIME_PLAN_PLANLIMITS_H

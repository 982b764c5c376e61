// Named schemes for the per-head decay rates of linear (lightning) attention.
//
// Kept apart from the importer so that other front ends (a Hugging Face
// config importer, reference scripts' C++ twins) compute the very same
// numbers. The formulas are specified in docs/model-format.md.
#ifndef STRATA_MODELS_DECAYSLOPES_H
#define STRATA_MODELS_DECAYSLOPES_H

#include <cstdint>
#include <vector>

namespace strata {

/// ALiBi slopes for `numHeads` heads (numHeads >= 1): for a power of two H,
/// slope_i = 2^(-8(i+1)/H); otherwise the slopes of the largest power of two
/// C < H followed by every other slope of 2C, as in the ALiBi reference code.
std::vector<double> alibiSlopes(int64_t numHeads);

/// MiniMax-Text-01's decay rates of layer `layerIndex` (0-based, counted
/// over all layers) of a `numLayers`-layer model: the ALiBi slopes times
/// (1 - layerIndex / (numLayers - 1) + 1e-5), or times (1 + 1e-5) when the
/// model has a single layer.
std::vector<double> minimaxDecaySlopes(int64_t numHeads, int64_t layerIndex,
                                       int64_t numLayers);

} // namespace strata

#endif // STRATA_MODELS_DECAYSLOPES_H

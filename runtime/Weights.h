// Host copies of a plan's weights. Random weights are a function of the
// model's seed and the weight's name only (counter-based draws), so the CPU
// and the GPU backend, and any batch or plan of the same model, see the same
// values. Packed weights are concatenated from their sources along
// dimension 0, as the plan records.
#ifndef STRATA_RUNTIME_WEIGHTS_H
#define STRATA_RUNTIME_WEIGHTS_H

#include "runtime/plan/Plan.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace strata {

/// Which weights a store materialises: all of the plan's, or only those
/// some launch reads (plan::weightsRead); the others keep empty storage.
/// The engine takes the second: a fused plan's unpacked QKV and gate/up
/// sources would otherwise double those weights in host memory.
enum class WeightSubset { All, ReadByLaunches };

class WeightStore {
public:
  /// Normal(0, the plan's init std) for matrices, 1 for norm weights (names
  /// ending in "norm.weight"), 0 for biases; stored in each weight's dtype.
  static WeightStore random(const plan::Plan &plan,
                            WeightSubset subset = WeightSubset::All);

  /// The plan's weights from a safetensors checkpoint (a `.safetensors`
  /// file or a `model.safetensors.index.json`): every plan weight is looked
  /// up by name (a packed weight: each of its sources, concatenated along
  /// dimension 0), its shape must match exactly, and its values are
  /// converted to the weight's dtype (round to nearest even). A checkpoint
  /// tensor no plan weight uses is an error too: it means the model file
  /// and the checkpoint disagree (e.g. on tied embeddings or layer count).
  /// On a terminal, a progress line is drawn on stderr. Empty with `error`
  /// set on failure. The checks cover every plan weight whatever `subset`;
  /// only the copying is limited to it.
  static std::optional<WeightStore>
  fromSafetensors(const plan::Plan &plan, const std::string &path,
                  std::string &error,
                  WeightSubset subset = WeightSubset::All);

  /// Receives weight `index`'s converted bytes; may take them (move from
  /// `bytes`). False stops the stream, with `error` saying why.
  using Sink = std::function<bool(int32_t index, std::vector<uint8_t> &bytes,
                                  std::string &error)>;

  /// fromSafetensors without the store: the same checks first, then each
  /// weight of `subset` in plan order, converted into one reused buffer and
  /// handed to `sink`. A caller that uploads and drops each weight holds one
  /// weight in host memory at a time instead of the whole model. False with
  /// `error` set when a check or the sink fails.
  static bool streamSafetensors(const plan::Plan &plan,
                                const std::string &path, std::string &error,
                                WeightSubset subset, const Sink &sink);

  /// Raw storage of weight `index` of the plan.
  const void *data(int32_t index) const { return storage_[index].data(); }
  const std::vector<uint8_t> &bytes(int32_t index) const {
    return storage_[index];
  }
  uint64_t totalBytes() const;

private:
  std::vector<std::vector<uint8_t>> storage_;
};

} // namespace strata

#endif // STRATA_RUNTIME_WEIGHTS_H

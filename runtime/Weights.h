// Host copies of a plan's weights. Random weights are a function of the
// model's seed and the weight's name only (counter-based draws), so the CPU
// and the GPU backend, and any batch or plan of the same model, see the same
// values. Packed weights are concatenated from their sources along
// dimension 0, as the plan records.
#ifndef STRATA_RUNTIME_WEIGHTS_H
#define STRATA_RUNTIME_WEIGHTS_H

#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

class WeightStore {
public:
  /// Normal(0, std) for matrices, 1 for norm weights (names ending in
  /// "norm.weight"), 0 for biases; stored in each weight's dtype.
  static WeightStore random(const plan::Plan &plan, double std);

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

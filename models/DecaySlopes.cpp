#include "models/DecaySlopes.h"

#include <cmath>

namespace strata {

namespace {

std::vector<double> powerOfTwoSlopes(int64_t n) {
  std::vector<double> slopes;
  slopes.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    slopes.push_back(
        std::exp2(-8.0 * static_cast<double>(i + 1) / static_cast<double>(n)));
  return slopes;
}

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

} // namespace

std::vector<double> alibiSlopes(int64_t numHeads) {
  if (numHeads <= 0)
    return {};
  if (isPowerOfTwo(numHeads))
    return powerOfTwoSlopes(numHeads);
  int64_t closest = 1;
  while (closest * 2 < numHeads)
    closest *= 2;
  std::vector<double> slopes = powerOfTwoSlopes(closest);
  std::vector<double> extra = alibiSlopes(2 * closest);
  for (size_t i = 0;
       i < extra.size() && static_cast<int64_t>(slopes.size()) < numHeads;
       i += 2)
    slopes.push_back(extra[i]);
  return slopes;
}

std::vector<double> minimaxDecaySlopes(int64_t numHeads, int64_t layerIndex,
                                       int64_t numLayers) {
  double layerFactor = numLayers <= 1
                           ? 1.0 + 1e-5
                           : 1.0 -
                                 static_cast<double>(layerIndex) /
                                     static_cast<double>(numLayers - 1) +
                                 1e-5;
  std::vector<double> slopes = alibiSlopes(numHeads);
  for (double &s : slopes)
    s *= layerFactor;
  return slopes;
}

} // namespace strata

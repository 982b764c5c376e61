// How a random weight is drawn from the model's seed and the weight's name,
// shared by the host draw (runtime/Weights.cpp) and the device draw
// (kernels/init/RandomInit.h) so that both backends see the same values.
#ifndef STRATA_RUNTIME_RANDOMWEIGHTS_H
#define STRATA_RUNTIME_RANDOMWEIGHTS_H

#include <cstdint>
#include <string>

namespace strata {

/// FNV-1a: a stable name hash, so values do not depend on weight order.
inline uint64_t weightNameHash(const std::string &name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

enum class RandomInit : uint8_t {
  Normal, ///< Normal(0, init std): projections and embeddings
  One,    ///< names ending in "norm.weight"
  Zero,   ///< names ending in ".bias"
};

inline RandomInit randomInitOf(const std::string &name) {
  auto endsWith = [&](const std::string &suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
               0;
  };
  if (endsWith("norm.weight"))
    return RandomInit::One;
  if (endsWith(".bias"))
    return RandomInit::Zero;
  return RandomInit::Normal;
}

} // namespace strata

#endif // STRATA_RUNTIME_RANDOMWEIGHTS_H

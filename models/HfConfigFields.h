// The config.json fields the Hugging Face importer knows, per
// architecture (HfConfigImporter.cpp): those it maps or checks, those it
// accepts and ignores because they never change the forward pass, and
// those only one architecture has. A field in none of these lists is
// rejected by name.
#ifndef STRATA_MODELS_HFCONFIGFIELDS_H
#define STRATA_MODELS_HFCONFIGFIELDS_H

#include <string>
#include <vector>

namespace strata::detail {

enum class HfArch { Llama, Qwen3, Mistral, MiniMax };

struct HfArchInfo {
  /// The class name in `architectures`.
  const char *name;
  /// The model file's `family`.
  const char *family;
  HfArch arch;
};

/// Every architecture the importer converts, in the order messages list
/// them.
const std::vector<HfArchInfo> &hfArchitectures();

/// Fields accepted and ignored for every architecture: token ids,
/// bookkeeping, and settings that only matter for training or for the
/// Python API.
const std::vector<std::string> &hfHarmlessFields();

/// Fields mapped (or checked) for every architecture.
const std::vector<std::string> &hfMappedFields();

/// MiniMax's residual scaling, in the original and in the transformers
/// spelling: h = alpha * x + beta * f(x) (`residual_scale` in the model
/// file). The original names first (full attention, linear attention,
/// MLP; alpha before beta), then transformers' in the same order.
const std::vector<std::string> &hfMiniMaxResidualFactors();

/// Fields only `arch` has, mapped, checked or harmless.
std::vector<std::string> hfArchSpecificFields(HfArch arch);

} // namespace strata::detail

#endif // STRATA_MODELS_HFCONFIGFIELDS_H

// The Hugging Face config converter's working parts, shared by
// HfConfigImporter.cpp (fields, architecture, layer kinds, the file's
// top) and HfAttentionSections.cpp (rope, attention, linear attention).
// Private to models/.
#ifndef STRATA_MODELS_HFCONVERTER_H
#define STRATA_MODELS_HFCONVERTER_H

#include "models/HfConfigFields.h"
#include "models/HfConfigImporter.h"
#include "models/HfConfigReader.h"
#include "models/ModelFileOut.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::detail {

struct RopeScalingOut {
  std::string type; // "" for none
  HfField typeField;
  std::vector<std::pair<std::string, HfField>> params;
};

class HfConverter {
public:
  HfConverter(const HfConfigContext &ctx, const JsonValue &root,
              const HfConvertOptions &options)
      : ctx_(ctx), options_(options), root_{"", &root, root.pos} {}

  /// Writes the model file into `out`; throws ImportError.
  void convert(ModelFileOut &out);
  /// HfImportResult::note of the conversion.
  const std::string &note() const { return note_; }

private:
  /// The field when present and not null.
  std::optional<HfField> get(const std::string &key) const {
    auto it = fields_.find(key);
    if (it == fields_.end() || it->second.isNull())
      return std::nullopt;
    return it->second;
  }
  HfField require(const std::string &key) const {
    auto f = get(key);
    if (!f)
      ctx_.fail(root_, "missing required field '" + key + "'");
    return *f;
  }
  /// The validated number as written in config.json, so that no digit is
  /// lost between the two files.
  std::string positiveNumberText(const HfField &f) const {
    ctx_.positiveNumber(f);
    return f.value->text;
  }

  void readFields();
  const HfArchInfo &readArchitecture();
  void checkUnknownFields(const HfArchInfo &arch);
  void checkMiniMaxExtras();
  /// MiniMax's alpha/beta factors as `residual_scale`, for the block kinds
  /// the model has; nothing when all are 1.
  void residualScale(ModelFileOut &out, bool anySoftmax, bool anyLinear);
  /// The config's dtype as the model file spells it, "" when it has none.
  std::string configDtype();
  RopeScalingOut ropeScaling();
  std::vector<std::string> layerKinds(HfArch arch, int64_t numLayers,
                                      HfField &from);
  /// Fails unless the list `f` has one entry per layer.
  void checkPerLayer(const HfField &f, const std::vector<HfField> &list,
                     int64_t numLayers) const;
  void checkUnsupportedSwitches();
  /// The `attention:` section (softmax layers): heads, rope and its
  /// scaling; `window` given when some layer slides.
  void attentionSection(ModelFileOut &out, HfArch arch, const HfField &heads,
                        int64_t headDim, JsonPos headDimPos,
                        const std::optional<HfField> &window);
  /// The `linear_attention:` section: heads and each linear layer's
  /// decay slopes.
  void linearAttentionSection(ModelFileOut &out, const HfField &heads,
                              int64_t headDim, JsonPos headDimPos,
                              int64_t numLayers, int64_t numHeads,
                              const std::vector<std::string> &kinds);

  const HfConfigContext &ctx_;
  const HfConvertOptions &options_;
  HfField root_;
  std::map<std::string, HfField> fields_;
  std::vector<std::string> order_;
  std::string note_;
};

} // namespace strata::detail

#endif // STRATA_MODELS_HFCONVERTER_H

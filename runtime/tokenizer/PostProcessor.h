// The post-processor stage of a tokenizer.json: what encode adds around the
// text's ids when special tokens are asked for. Supported:
// TemplateProcessing (its "single" template: e.g. BOS, the text, EOS),
// ByteLevel (which changes offsets only, so nothing here) and Sequence.
#ifndef STRATA_RUNTIME_TOKENIZER_POSTPROCESSOR_H
#define STRATA_RUNTIME_TOKENIZER_POSTPROCESSOR_H

#include "runtime/tokenizer/JsonNode.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace strata::tok {

class PostProcessor {
public:
  static PostProcessor fromJson(const std::optional<JsonNode> &node);

  /// The ids placed before and after the text's ids.
  const std::vector<int32_t> &prefix() const { return prefix_; }
  const std::vector<int32_t> &suffix() const { return suffix_; }

private:
  void addFromJson(const JsonNode &node);
  void addTemplate(const JsonNode &node);
  std::vector<int32_t> prefix_, suffix_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_POSTPROCESSOR_H

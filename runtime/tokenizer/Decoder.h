// The decoder stage of a tokenizer.json: turns token strings back into
// text. Supported: ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace
// and Sequence, each with Hugging Face's semantics (a chain of steps over
// the list of token strings, joined at the end).
#ifndef STRATA_RUNTIME_TOKENIZER_DECODER_H
#define STRATA_RUNTIME_TOKENIZER_DECODER_H

#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/Normalizer.h"

#include <optional>
#include <string>
#include <vector>

namespace strata::tok {

class Decoder {
public:
  /// From the "decoder" member; null joins the tokens with spaces, as
  /// Hugging Face does without a decoder.
  static Decoder fromJson(const std::optional<JsonNode> &node);

  /// The text of `tokens` (consumed).
  std::string decode(std::vector<std::string> tokens) const;

private:
  struct Step {
    enum class Kind {
      ByteLevel,
      Replace,
      ByteFallback,
      Fuse,
      Strip,
      Metaspace
    };
    Kind kind;
    std::optional<Pattern> pattern; // Replace
    std::string
        content; // Replace: replacement; Strip, Metaspace: the character
    size_t start = 0, stop = 0; // Strip
    bool prependScheme = false; // Metaspace: a prefix was added (not "never")
  };
  void addFromJson(const JsonNode &node);
  bool present_ = false;
  std::vector<Step> steps_; // a Sequence, flattened
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_DECODER_H

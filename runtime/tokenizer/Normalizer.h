// The normalizer stage of a tokenizer.json: rewrites each piece of text that
// is not an added token before pre-tokenization. Supported: NFC, NFD, NFKC,
// NFKD, Prepend, Replace (string or regex pattern) and Sequence; anything
// else is a load error that names its JSON path.
#ifndef STRATA_RUNTIME_TOKENIZER_NORMALIZER_H
#define STRATA_RUNTIME_TOKENIZER_NORMALIZER_H

#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/Regex.h"
#include "runtime/tokenizer/Unicode.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata::tok {

/// A literal or regex pattern, as Split, Replace and the Replace decoder
/// give it: {"String": "..."} or {"Regex": "..."}.
class Pattern {
public:
  static Pattern fromJson(const JsonNode &node);
  /// Appends the non-overlapping matches in `text`, left to right.
  void findAll(std::string_view text, std::vector<Span> &out) const;
  void forEachMatch(std::string_view text,
                    const std::function<void(Span)> &onMatch) const;
  /// Appends the non-overlapping occurrences of `literal` in `text`.
  static void literalMatches(std::string_view text, std::string_view literal,
                             std::vector<Span> &out);
  /// `text` with every match replaced by `content`.
  std::string replaceAll(std::string_view text,
                         const std::string &content) const;

private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_; // set for a regex pattern
};

class Normalizer {
public:
  /// From the "normalizer" member; nothing (no normalization) for null.
  static Normalizer fromJson(const std::optional<JsonNode> &node);

  bool empty() const { return steps_.empty(); }
  /// Normalizes `text` in place.
  void apply(std::string &text) const;

private:
  struct Step {
    enum class Kind { Unicode, Prepend, Replace } kind;
    NormalForm form = NormalForm::NFC;
    std::string content; // Prepend: the prefix; Replace: the replacement
    std::optional<Pattern> pattern;
  };
  void addFromJson(const JsonNode &node);
  std::vector<Step> steps_; // a Sequence, flattened
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_NORMALIZER_H

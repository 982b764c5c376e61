// The pre-tokenizer stage of a tokenizer.json: cuts a normalized piece of
// text into the words the model encodes one by one. Supported: Split (string
// or regex pattern, every split behaviour, invert), ByteLevel (prefix space,
// the GPT-2 split regex, the byte-to-character mapping), Digits, Metaspace
// and Sequence. Regexes run on Oniguruma, compiled once at load.
#ifndef STRATA_RUNTIME_TOKENIZER_PRETOKENIZER_H
#define STRATA_RUNTIME_TOKENIZER_PRETOKENIZER_H

#include "runtime/tokenizer/JsonNode.h"
#include "runtime/tokenizer/Normalizer.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace strata::tok {

/// A piece of text on its way through the pre-tokenizer. `atStart`: it
/// begins where the input began (Metaspace's "first" scheme asks).
struct PreToken {
  std::string text;
  bool atStart = false;
};

/// How a Split keeps the matches of its pattern (Hugging Face's
/// SplitDelimiterBehavior).
enum class SplitBehavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

/// Cuts `text` at the `matches` (sorted, non-overlapping) as `behavior`
/// asks; `invert` swaps matches and gaps first. Empty parts are dropped.
void splitByMatches(std::string_view text, const std::vector<Span> &matches,
                    SplitBehavior behavior, bool invert,
                    std::vector<Span> &parts);

enum class PrependScheme { Always, First, Never };

class PreTokenizer {
public:
  /// From the "pre_tokenizer" member; null keeps each piece whole.
  static PreTokenizer fromJson(const std::optional<JsonNode> &node);

  /// Receives one word; the view is valid only during the call.
  using WordSink = std::function<void(std::string_view)>;
  /// Hands the words of `piece` to `sink`, in order, as they are cut: a
  /// long text is never held as a list of words.
  void split(PreToken piece, const WordSink &sink) const;

private:
  struct Step {
    enum class Kind { Split, ByteLevel, Digits, Metaspace } kind;
    std::optional<Pattern> pattern; // Split
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;                // Split
    bool addPrefixSpace = false;        // ByteLevel
    bool useRegex = false;              // ByteLevel
    std::shared_ptr<const Regex> regex; // ByteLevel, Digits
    std::string replacement;            // Metaspace
    PrependScheme prepend = PrependScheme::Always;
    bool splitOnReplacement = false; // Metaspace
  };
  void addFromJson(const JsonNode &node);
  /// Runs steps [index, end) on `piece`.
  void run(size_t index, PreToken piece, const WordSink &sink) const;
  std::vector<Step> steps_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_PRETOKENIZER_H

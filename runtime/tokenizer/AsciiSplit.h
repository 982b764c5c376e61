// A hand-written matcher for the two split regexes of current byte-level
// BPE tokenizers, Llama 3's (digits in runs of up to three) and Qwen's (one
// digit each):
//
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Oniguruma costs a search set-up per match, which dominates encoding of
// ASCII text. This matcher decides one match from ASCII bytes only: the
// moment it would have to classify a byte >= 0x80 (a letter? a digit? a
// space? a case fold of 's'?), it gives up and the caller asks Oniguruma
// for that match. It is checked against Oniguruma on the test corpora and on
// random ASCII text (tokenizer-tests, "ASCII split fast path").
#ifndef STRATA_RUNTIME_TOKENIZER_ASCIISPLIT_H
#define STRATA_RUNTIME_TOKENIZER_ASCIISPLIT_H

#include <cstddef>
#include <string>
#include <string_view>

namespace strata::tok {

class AsciiSplit {
public:
  /// The matcher for `pattern`, or one that matches nothing (`!valid()`)
  /// when the pattern is not one of the two it knows.
  static AsciiSplit forPattern(const std::string &pattern);
  bool valid() const { return maxDigits_ > 0; }

  /// Returned by matchAt when a byte >= 0x80 would decide the match.
  static constexpr size_t kUndecided = static_cast<size_t>(-1);
  /// The end of the pattern's match that starts at `pos` (< text.size()),
  /// as Oniguruma finds it; kUndecided when that needs a non-ASCII byte.
  /// Every character starts a match of these patterns, so a match always
  /// exists and is never empty.
  size_t matchAt(std::string_view text, size_t pos) const;

private:
  int maxDigits_ = 0; // 3: Llama 3, 1: Qwen; 0: not a known pattern
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_ASCIISPLIT_H

// A compiled Oniguruma regular expression (its default syntax, UTF-8), the
// engine and dialect Hugging Face tokenizers runs its Split and Replace
// patterns with, so that \p{L}, \p{N}, \s and look-ahead mean exactly what they
// mean there. Compiled once at load; searching is const and thread-safe.
#ifndef STRATA_RUNTIME_TOKENIZER_REGEX_H
#define STRATA_RUNTIME_TOKENIZER_REGEX_H

#include "runtime/tokenizer/AsciiSplit.h"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::tok {

/// A match or gap: byte offsets [start, end).
struct Span {
  size_t start = 0;
  size_t end = 0;
};

class Regex {
public:
  /// Throws TokenizerError with Oniguruma's message on a bad pattern.
  /// `fastPath`: use the ASCII matcher where it knows the pattern (tests
  /// turn it off to compare).
  explicit Regex(const std::string &pattern, bool fastPath = true);
  ~Regex();
  Regex(const Regex &) = delete;
  Regex &operator=(const Regex &) = delete;

  /// Appends the non-overlapping matches of the pattern in `text`, left to
  /// right. An empty match is reported too; the search then resumes one
  /// character later. `text` must be valid UTF-8.
  void findAll(std::string_view text, std::vector<Span> &out) const;
  /// The same matches, handed to `onMatch` one by one as they are found.
  void forEachMatch(std::string_view text,
                    const std::function<void(Span)> &onMatch) const;

  const std::string &pattern() const { return pattern_; }
  /// Whether matches come from AsciiSplit where the text is ASCII.
  bool hasFastPath() const { return fast_.valid(); }

private:
  std::string pattern_;
  AsciiSplit fast_;
  void *regex_ = nullptr; // OnigRegex, kept out of this header
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_REGEX_H

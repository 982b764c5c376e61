// The added tokens of a tokenizer.json ("added_tokens"): special tokens such
// as <|begin_of_text|> and user-added words. They are found in the text
// before pre-tokenization, leftmost-longest first, as Hugging Face does:
// tokens with "normalized": false in the raw text, the others in the
// normalized text; "single_word" rejects a match inside a word, "lstrip" /
// "rstrip" swallow the whitespace beside it.
#ifndef STRATA_RUNTIME_TOKENIZER_ADDEDTOKENS_H
#define STRATA_RUNTIME_TOKENIZER_ADDEDTOKENS_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tok {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool singleWord = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
};

/// A part of a text: [start, end) and the added token found there, or -1
/// for text between added tokens.
struct TextSegment {
  size_t start = 0;
  size_t end = 0;
  int32_t id = -1;
};

/// Finds one set of added tokens (the raw or the normalized ones) in text.
class AddedTokenMatcher {
public:
  /// `patterns[i]` is what to look for for `tokens[i]` (its content, or its
  /// normalized content); empty patterns are skipped.
  void build(const std::vector<AddedToken> &tokens,
             const std::vector<std::string> &patterns);
  bool empty() const { return nodes_.size() <= 1; }

  /// Cuts `text` into segments covering all of it; empty gaps are left out
  /// (so an empty text gives no segment).
  void split(std::string_view text, std::vector<TextSegment> &out) const;

private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children; // sorted
    int32_t token = -1; // index into tokens_ when a pattern ends here
  };
  int32_t child(int32_t node, unsigned char c) const;
  /// The longest pattern that starts at `pos`: its token index and length.
  bool longestAt(std::string_view text, size_t pos, int32_t &token,
                 size_t &length) const;

  std::vector<Node> nodes_;
  std::vector<AddedToken> tokens_;
  bool firstByte_[256] = {};
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_ADDEDTOKENS_H

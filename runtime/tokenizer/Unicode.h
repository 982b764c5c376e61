// Unicode properties and normalization forms, from utf8proc's tables (the
// library carries the Unicode database; strata keeps none of its own).
#ifndef STRATA_RUNTIME_TOKENIZER_UNICODE_H
#define STRATA_RUNTIME_TOKENIZER_UNICODE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::tok {

/// The White_Space property: separators (Zs, Zl, Zp), U+0009..U+000D and
/// U+0085.
bool isUnicodeWhitespace(uint32_t cp);

/// A "word" character as \w means in Rust's regex crate (which Hugging Face
/// uses for single_word added tokens): letters, marks, decimal and letter
/// numbers, connector punctuation, and the joiners U+200C/U+200D.
bool isUnicodeWordChar(uint32_t cp);

enum class NormalForm { NFC, NFD, NFKC, NFKD };

/// `text` in the given normalization form; `text` must be valid UTF-8.
/// Only the runs of non-ASCII characters (each with the ASCII character
/// before it) go through utf8proc; see the .cpp for why that is exact.
std::string normalizeUnicode(std::string_view text, NormalForm form);

/// The same, with all of `text` through utf8proc at once (the reference
/// that the run-wise form is tested against).
std::string normalizeUnicodeWhole(std::string_view text, NormalForm form);

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_UNICODE_H

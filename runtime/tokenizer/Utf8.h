// UTF-8 helpers shared by the tokenizer stages: sequence lengths, validity,
// and the lossy conversion that turns decoded bytes into text.
#ifndef STRATA_RUNTIME_TOKENIZER_UTF8_H
#define STRATA_RUNTIME_TOKENIZER_UTF8_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::tok {

/// The length of the valid UTF-8 sequence at the start of `s`, or 0 when it
/// does not start with one (overlong forms, surrogates and code points
/// above U+10FFFF are invalid, as in RFC 3629).
size_t validUtf8Prefix(std::string_view s);

/// The byte offset of the first invalid sequence, or npos when all of `s`
/// is valid UTF-8.
size_t findInvalidUtf8(std::string_view s);

/// The bytes of `s` with each maximal invalid subsequence replaced by one
/// U+FFFD, the Unicode "substitution of maximal subparts" (what Rust's
/// String::from_utf8_lossy and the WHATWG decoder do).
std::string utf8Lossy(std::string_view s);

/// The length of the UTF-8 sequence that lead byte `c` announces (1 for
/// bytes that cannot lead one).
inline size_t utf8SequenceLength(unsigned char c) {
  if (c < 0xC0)
    return 1;
  if (c < 0xE0)
    return 2;
  if (c < 0xF0)
    return 3;
  return c < 0xF8 ? 4 : 1;
}

/// Encodes one code point (assumed valid) and appends it.
void appendUtf8(std::string &out, uint32_t codePoint);

/// Decodes the code point at `s[pos]` (valid UTF-8 assumed) and advances
/// `pos` past it.
uint32_t nextCodePoint(std::string_view s, size_t &pos);

extern const char kReplacementChar[]; // U+FFFD, "\xEF\xBF\xBD"

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_UTF8_H

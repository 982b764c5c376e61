#include "runtime/tokenizer/Unicode.h"

#include "runtime/tokenizer/TokenizerError.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

namespace strata::tok {

bool isUnicodeWhitespace(uint32_t cp) {
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x85)
    return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
  case UTF8PROC_CATEGORY_ZS:
  case UTF8PROC_CATEGORY_ZL:
  case UTF8PROC_CATEGORY_ZP:
    return true;
  default:
    return false;
  }
}

bool isUnicodeWordChar(uint32_t cp) {
  if (cp == 0x200C || cp == 0x200D)
    return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
  case UTF8PROC_CATEGORY_LU:
  case UTF8PROC_CATEGORY_LL:
  case UTF8PROC_CATEGORY_LT:
  case UTF8PROC_CATEGORY_LM:
  case UTF8PROC_CATEGORY_LO:
  case UTF8PROC_CATEGORY_MN:
  case UTF8PROC_CATEGORY_MC:
  case UTF8PROC_CATEGORY_ME:
  case UTF8PROC_CATEGORY_ND:
  case UTF8PROC_CATEGORY_NL:
  case UTF8PROC_CATEGORY_PC:
    return true;
  default:
    return false;
  }
}

namespace {

// Appends utf8proc's normalization of `text`.
void appendNormalized(std::string_view text, NormalForm form,
                      std::string &out) {
  int options = UTF8PROC_STABLE;
  switch (form) {
  case NormalForm::NFC:
    options |= UTF8PROC_COMPOSE;
    break;
  case NormalForm::NFD:
    options |= UTF8PROC_DECOMPOSE;
    break;
  case NormalForm::NFKC:
    options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    break;
  case NormalForm::NFKD:
    options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    break;
  }
  utf8proc_uint8_t *mapped = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &mapped,
                   static_cast<utf8proc_option_t>(options));
  if (n < 0)
    throw TokenizerError(std::string("Unicode normalization failed: ") +
                         utf8proc_errmsg(n));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(mapped,
                                                                &std::free);
  out.append(reinterpret_cast<const char *>(mapped), static_cast<size_t>(n));
}

bool isAscii(unsigned char c) { return c < 0x80; }

} // namespace

std::string normalizeUnicodeWhole(std::string_view text, NormalForm form) {
  std::string out;
  appendNormalized(text, form, out);
  return out;
}

std::string normalizeUnicode(std::string_view text, NormalForm form) {
  // Every form maps an ASCII character to itself, and an ASCII character
  // is a starter (combining class 0) that never composes with what comes
  // before it (it ends no canonical decomposition): canonical reordering
  // stops at it, and composition cannot reach across it. So each form of
  // the text is the concatenation of the forms of its pieces cut before
  // each ASCII character, and pure-ASCII pieces are their own forms. Only
  // a run of non-ASCII characters, with the ASCII character before it
  // (which may compose with a combining mark that follows), is handed to
  // utf8proc.
  size_t i = 0;
  while (i < text.size() && isAscii(text[i]))
    ++i;
  if (i == text.size())
    return std::string(text);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  i = 0;
  while (i < text.size()) {
    size_t high = i;
    while (high < text.size() && isAscii(text[high]))
      ++high;
    if (high == text.size()) {
      out.append(text.substr(i));
      break;
    }
    size_t start = high > i ? high - 1 : high;
    size_t end = high;
    while (end < text.size() && !isAscii(text[end]))
      ++end;
    out.append(text.substr(i, start - i));
    appendNormalized(text.substr(start, end - start), form, out);
    i = end;
  }
  return out;
}

} // namespace strata::tok

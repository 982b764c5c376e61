#include "runtime/tokenizer/AsciiSplit.h"

namespace strata::tok {

namespace {

const char kLlama3Pattern[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char kQwenPattern[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The three classes of the pattern restricted to ASCII, where \p{L} is
// [A-Za-z], \p{N} is [0-9] and \s (Unicode White_Space) is [\t\n\v\f\r ].
// Everything else ASCII, controls included, is "other".
enum Class : unsigned char { kOther, kLetter, kDigit, kSpace, kHigh };

struct ClassTable {
  Class of[256];
  constexpr ClassTable() : of() {
    for (int b = 0; b < 256; ++b)
      of[b] = b >= 0x80                                          ? kHigh
              : (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ? kLetter
              : b >= '0' && b <= '9'                             ? kDigit
              : (b >= 0x09 && b <= 0x0D) || b == ' '             ? kSpace
                                                                 : kOther;
  }
};
constexpr ClassTable kClasses;

} // namespace

AsciiSplit AsciiSplit::forPattern(const std::string &pattern) {
  AsciiSplit s;
  if (pattern == kLlama3Pattern)
    s.maxDigits_ = 3;
  else if (pattern == kQwenPattern)
    s.maxDigits_ = 1;
  return s;
}

size_t AsciiSplit::matchAt(std::string_view text, size_t pos) const {
  const auto *s = reinterpret_cast<const unsigned char *>(text.data());
  const size_t n = text.size();
  auto cls = [&](size_t i) { return kClasses.of[s[i]]; };
  // The end of the run of `want` from `i`; kUndecided if it stops at a
  // non-ASCII byte, which might continue it.
  auto runEnd = [&](size_t i, Class want) {
    while (i < n && cls(i) == want)
      ++i;
    return i < n && cls(i) == kHigh ? kUndecided : i;
  };
  const unsigned char c = s[pos];
  const Class k = cls(pos);
  if (k == kHigh)
    return kUndecided;

  // (?i:'s|'t|'re|'ve|'m|'ll|'d): ASCII letters fold only to each other;
  // a non-ASCII byte might fold to one (U+017F to s, for one).
  if (c == '\'' && pos + 1 < n) {
    if (cls(pos + 1) == kHigh)
      return kUndecided;
    unsigned char a = s[pos + 1] | 0x20;
    if (cls(pos + 1) == kLetter) {
      if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return pos + 2;
      if ((a == 'r' || a == 'v' || a == 'l') && pos + 2 < n) {
        if (cls(pos + 2) == kHigh)
          return kUndecided;
        unsigned char b = s[pos + 2] | 0x20;
        if (cls(pos + 2) == kLetter && b == (a == 'l' ? 'l' : 'e'))
          return pos + 3;
      }
    }
  }

  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (k == kLetter)
    return runEnd(pos, kLetter);
  if (k != kDigit && c != '\r' && c != '\n' && pos + 1 < n) {
    Class next = cls(pos + 1);
    if (next == kHigh)
      return kUndecided;
    if (next == kLetter)
      return runEnd(pos + 1, kLetter);
  }

  // \p{N}{1,3} or \p{N}: greedy up to the bound, so a digit beyond it is
  // never looked at.
  if (k == kDigit) {
    size_t end = pos + 1;
    while (end < n && end - pos < static_cast<size_t>(maxDigits_)) {
      if (cls(end) == kHigh)
        return kUndecided;
      if (cls(end) != kDigit)
        break;
      ++end;
    }
    return end;
  }

  // ' ?[^\s\p{L}\p{N}]+[\r\n]*': the optional space needs an "other" after
  // it (giving it back leaves the space, which is not "other").
  size_t otherStart = n;
  if (k == kOther) {
    otherStart = pos;
  } else if (c == ' ' && pos + 1 < n) {
    if (cls(pos + 1) == kHigh)
      return kUndecided;
    if (cls(pos + 1) == kOther)
      otherStart = pos + 1;
  }
  if (otherStart < n) {
    size_t end = runEnd(otherStart, kOther);
    if (end == kUndecided)
      return kUndecided;
    // [\r\n] is ASCII: a non-ASCII byte simply ends it.
    while (end < n && (s[end] == '\r' || s[end] == '\n'))
      ++end;
    return end;
  }

  // What is left starts with white space; take its whole run.
  size_t runStop = runEnd(pos, kSpace);
  if (runStop == kUndecided)
    return kUndecided;
  // \s*[\r\n]+: \s* gives back characters until [\r\n]+ can match, so the
  // match ends after the run's last \r or \n.
  for (size_t i = runStop; i > pos; --i)
    if (s[i - 1] == '\r' || s[i - 1] == '\n')
      return i;
  // \s+(?!\S): the whole run at the end of the text; otherwise all but its
  // last character, which stays white space before the \S.
  if (runStop == n)
    return n;
  if (runStop - pos >= 2)
    return runStop - 1;
  // \s+
  return runStop;
}

} // namespace strata::tok

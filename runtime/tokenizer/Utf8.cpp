#include "runtime/tokenizer/Utf8.h"

namespace strata::tok {

const char kReplacementChar[] = "\xEF\xBF\xBD";

namespace {

// How many bytes of `s` form a prefix of some valid sequence (at least 1
// for an invalid lead byte): the "maximal subpart" that one U+FFFD
// replaces. Returns `full` = true when that prefix is a whole sequence.
size_t maximalSubpart(std::string_view s, bool &full) {
  full = false;
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  if (c < 0x80) {
    full = true;
    return 1;
  }
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF; // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0)
      lo = 0xA0;
    else if (c == 0xED)
      hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0)
      lo = 0x90;
    else if (c == 0xF4)
      hi = 0x8F;
  } else {
    return 1;
  }
  size_t i = 1;
  for (; i < need; ++i) {
    if (i >= s.size())
      return i;
    unsigned char lower = i == 1 ? lo : 0x80, upper = i == 1 ? hi : 0xBF;
    if (b(i) < lower || b(i) > upper)
      return i;
  }
  full = true;
  return need;
}

} // namespace

size_t validUtf8Prefix(std::string_view s) {
  if (s.empty())
    return 0;
  bool full = false;
  size_t n = maximalSubpart(s, full);
  return full ? n : 0;
}

size_t findInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = validUtf8Prefix(s.substr(i));
    if (n == 0)
      return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string utf8Lossy(std::string_view s) {
  if (findInvalidUtf8(s) == std::string_view::npos)
    return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    bool full = false;
    size_t n = maximalSubpart(s.substr(i), full);
    if (full)
      out.append(s.substr(i, n));
    else
      out += kReplacementChar;
    i += n;
  }
  return out;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t nextCodePoint(std::string_view s, size_t &pos) {
  auto b = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(s[i]));
  };
  uint32_t c = b(pos);
  size_t n = utf8SequenceLength(static_cast<unsigned char>(c));
  if (n == 1 || pos + n > s.size()) {
    ++pos;
    return c;
  }
  uint32_t cp = c & (0x7F >> n);
  for (size_t i = 1; i < n; ++i)
    cp = (cp << 6) | (b(pos + i) & 0x3F);
  pos += n;
  return cp;
}

} // namespace strata::tok

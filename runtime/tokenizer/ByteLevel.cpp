#include "runtime/tokenizer/ByteLevel.h"

#include "runtime/tokenizer/Utf8.h"

namespace strata::tok {

const ByteLevelAlphabet &ByteLevelAlphabet::get() {
  static const ByteLevelAlphabet alphabet;
  return alphabet;
}

ByteLevelAlphabet::ByteLevelAlphabet() {
  byteOf_.fill(-1);
  // Printable bytes keep their code point; the rest, in byte order, take
  // U+0100, U+0101, ...
  auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
           (b >= 0xAE && b <= 0xFF);
  };
  uint32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : next++;
    std::string utf8;
    appendUtf8(utf8, cp);
    code_[b] = {{utf8[0], utf8.size() > 1 ? utf8[1] : '\0'},
                static_cast<uint8_t>(utf8.size())};
    byteOf_[cp] = static_cast<int16_t>(b);
  }
}

void ByteLevelAlphabet::encode(std::string_view bytes, std::string &out) const {
  size_t at = out.size();
  out.resize(at + bytes.size() * 2);
  char *p = out.data() + at;
  for (char c : bytes) {
    const Code &code = code_[static_cast<unsigned char>(c)];
    p[0] = code.bytes[0];
    p[1] = code.bytes[1];
    p += code.length;
  }
  out.resize(static_cast<size_t>(p - out.data()));
}

bool ByteLevelAlphabet::decode(std::string_view text, std::string &out) const {
  size_t start = out.size();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t before = pos;
    uint32_t cp = nextCodePoint(text, pos);
    // A byte that is not a whole sequence is not an alphabet character.
    bool whole = validUtf8Prefix(text.substr(before)) == pos - before;
    if (!whole || cp >= byteOf_.size() || byteOf_[cp] < 0) {
      out.resize(start);
      return false;
    }
    out += static_cast<char>(byteOf_[cp]);
  }
  return true;
}

} // namespace strata::tok

// The byte-level alphabet of GPT-2 style tokenizers: each of the 256 byte
// values is shown as one printable code point (printable Latin-1 bytes as
// themselves, the others shifted to U+0100 and up), so that a vocabulary of
// strings can hold arbitrary bytes. The table is computed from that rule,
// not stored.
#ifndef STRATA_RUNTIME_TOKENIZER_BYTELEVEL_H
#define STRATA_RUNTIME_TOKENIZER_BYTELEVEL_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::tok {

class ByteLevelAlphabet {
public:
  static const ByteLevelAlphabet &get();

  /// Appends the byte-level form of `bytes` (each byte as its code point).
  void encode(std::string_view bytes, std::string &out) const;
  /// Appends the bytes that the byte-level text `text` stands for; false
  /// (and `out` unchanged) when a code point of `text` is not in the
  /// alphabet.
  bool decode(std::string_view text, std::string &out) const;

private:
  ByteLevelAlphabet();
  /// UTF-8 of the code point of each byte (all below U+0800: one or two
  /// bytes), kept inline so that encoding is a table copy per byte.
  struct Code {
    char bytes[2];
    uint8_t length;
  };
  std::array<Code, 256> code_;
  /// Byte of code points below 0x144 (the alphabet's largest), -1 outside.
  std::array<int16_t, 0x144> byteOf_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_BYTELEVEL_H

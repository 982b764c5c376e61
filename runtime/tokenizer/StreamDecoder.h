// Incremental decoding for streaming generation: ids go in one at a time,
// text comes out as soon as it is final. Output never ends inside a UTF-8
// character (bytes of a character split over several tokens are held back
// until it is whole), and the concatenation of everything returned equals
// Tokenizer::decode of all ids, including decoders that strip the leading
// space of the first token only (SentencePiece's Strip and Metaspace).
#ifndef STRATA_RUNTIME_TOKENIZER_STREAMDECODER_H
#define STRATA_RUNTIME_TOKENIZER_STREAMDECODER_H

#include "runtime/tokenizer/Tokenizer.h"

#include <string>
#include <vector>

namespace strata::tok {

class StreamDecoder {
public:
  /// `tokenizer` must outlive the decoder.
  explicit StreamDecoder(const Tokenizer &tokenizer, bool skipSpecial = false)
      : tokenizer_(&tokenizer), skipSpecial_(skipSpecial) {}

  /// Takes the next id; returns the text that became final (often empty).
  std::string step(int32_t id);
  /// Returns the text still held back (an incomplete character at the end
  /// of the stream comes out as U+FFFD, as decode gives it) and resets.
  std::string finish();
  /// Forgets everything (a new stream).
  void reset();

private:
  const Tokenizer *tokenizer_;
  bool skipSpecial_;
  /// Whether decode shows `id` (it skips unknown ids, and special ones
  /// when asked).
  bool shows(int32_t id) const;
  /// Whether `id` is a byte-fallback token ("<0x41>").
  bool isByteToken(int32_t id) const;

  // Decoding is redone over a window of recent ids whose first part, with
  // text `prefix_`, was already returned. The window keeps one shown token
  // in front, so that a decoder that treats the first token specially sees
  // the same first token as a full decode would (or none, at the start).
  std::vector<int32_t> window_;
  std::string prefix_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_STREAMDECODER_H

// Generated tokens as text, for streaming: decoded incrementally (complete
// UTF-8 characters only, special tokens skipped) and cut at the first stop
// string, which itself is never shown. Text that could still become a stop
// string is held back until the next tokens decide.
#ifndef STRATA_RUNTIME_TEXTSTREAM_H
#define STRATA_RUNTIME_TEXTSTREAM_H

#include "runtime/tokenizer/StreamDecoder.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <string>
#include <vector>

namespace strata {

class TextStream {
public:
  /// `tokenizer` must outlive the stream. Empty stop strings are ignored.
  TextStream(const tok::Tokenizer &tokenizer, std::vector<std::string> stops);

  /// Takes the next generated token; returns the text that can be shown
  /// now (often empty). Once a stop string has appeared, returns nothing.
  std::string push(int32_t id);
  /// The text still held back at the end of generation (nothing after a
  /// stop string).
  std::string finish();

  bool stopped() const { return stopped_; }
  /// The stop string that ended the text (empty when none did).
  const std::string &stopString() const { return stopString_; }
  /// All text shown so far.
  const std::string &shown() const { return shown_; }

private:
  /// Moves the first `n` held bytes to the output.
  std::string release(size_t n);

  tok::StreamDecoder decoder_;
  std::vector<std::string> stops_;
  std::string held_, shown_, stopString_;
  bool stopped_ = false;
};

} // namespace strata

#endif // STRATA_RUNTIME_TEXTSTREAM_H

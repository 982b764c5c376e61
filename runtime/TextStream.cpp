#include "runtime/TextStream.h"

#include <algorithm>

namespace strata {

TextStream::TextStream(const tok::Tokenizer &tokenizer,
                       std::vector<std::string> stops)
    : decoder_(tokenizer, /*skipSpecial=*/true) {
  for (std::string &s : stops)
    if (!s.empty())
      stops_.push_back(std::move(s));
}

std::string TextStream::release(size_t n) {
  std::string out = held_.substr(0, n);
  held_.erase(0, n);
  shown_ += out;
  return out;
}

std::string TextStream::push(int32_t id) {
  if (stopped_)
    return {};
  held_ += decoder_.step(id);
  // The earliest stop string wins; text before it is shown.
  size_t first = std::string::npos;
  for (const std::string &stop : stops_) {
    // Only the held text can hold a new match: shown text had none, and a
    // match reaching into it would have been held back.
    const size_t at = held_.find(stop);
    if (at < first) {
      first = at;
      stopString_ = stop;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = release(first);
    held_.clear();
    return out;
  }
  // Hold back the longest end of the text that begins some stop string. A
  // stop string starts with a UTF-8 lead byte, so the cut falls between
  // characters.
  size_t hold = 0;
  for (const std::string &stop : stops_) {
    const size_t longest = std::min(stop.size() - 1, held_.size());
    for (size_t k = longest; k > hold; --k)
      if (held_.compare(held_.size() - k, k, stop, 0, k) == 0) {
        hold = k;
        break;
      }
  }
  return release(held_.size() - hold);
}

std::string TextStream::finish() {
  if (stopped_)
    return {};
  held_ += decoder_.finish();
  return release(held_.size());
}

} // namespace strata

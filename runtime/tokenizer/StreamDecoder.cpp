#include "runtime/tokenizer/StreamDecoder.h"

#include "runtime/tokenizer/Utf8.h"

namespace strata::tok {

namespace {

bool endsWithReplacement(const std::string &s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, kReplacementChar) == 0;
}

} // namespace

bool StreamDecoder::shows(int32_t id) const {
  return tokenizer_->idToToken(id) &&
         !(skipSpecial_ && tokenizer_->isSpecial(id));
}

bool StreamDecoder::isByteToken(int32_t id) const {
  auto token = tokenizer_->idToToken(id);
  return token && token->size() == 6 && token->substr(0, 3) == "<0x" &&
         (*token)[5] == '>';
}

std::string StreamDecoder::step(int32_t id) {
  window_.push_back(id);
  std::string text = tokenizer_->decode(window_, skipSpecial_);
  // Not final yet: nothing new, or the end is a character that later
  // bytes may still complete (decoded as U+FFFD for now).
  if (text.size() <= prefix_.size() || endsWithReplacement(text) ||
      text.compare(0, prefix_.size(), prefix_) != 0)
    return {};
  std::string fresh = text.substr(prefix_.size());
  // Keep the window from the newest token that decode does not skip, so
  // that the next decode does not see a different first token. A run of
  // byte-fallback tokens is kept whole: the ByteFallback decoder judges a
  // run's bytes together (all valid UTF-8, or one U+FFFD per byte).
  size_t keep = window_.size();
  while (keep > 0 &&
         (!shows(window_[keep - 1]) || isByteToken(window_[keep - 1])))
    --keep;
  if (keep == 0) {
    keep = window_.size();
    while (keep > 0 && !shows(window_[keep - 1]))
      --keep;
  }
  if (keep > 0) {
    window_.erase(window_.begin(), window_.begin() + (keep - 1));
    prefix_ = tokenizer_->decode(window_, skipSpecial_);
  } else {
    prefix_ = text;
  }
  return fresh;
}

std::string StreamDecoder::finish() {
  std::string text = tokenizer_->decode(window_, skipSpecial_);
  std::string rest = text.compare(0, prefix_.size(), prefix_) == 0
                         ? text.substr(prefix_.size())
                         : std::string();
  reset();
  return rest;
}

void StreamDecoder::reset() {
  window_.clear();
  prefix_.clear();
}

} // namespace strata::tok

#include "runtime/tokenizer/Regex.h"

#include "runtime/tokenizer/TokenizerError.h"
#include "runtime/tokenizer/Utf8.h"

#include <oniguruma.h>

namespace strata::tok {

namespace {

void initializeOnce() {
  static const bool done = [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
    return true;
  }();
  (void)done;
}

// One match-register set per thread, so that searching needs no lock and
// no allocation per call.
struct RegionHolder {
  OnigRegion *region = onig_region_new();
  ~RegionHolder() { onig_region_free(region, 1); }
};

OnigRegion *threadRegion() {
  thread_local RegionHolder holder;
  return holder.region;
}

} // namespace

Regex::Regex(const std::string &pattern, bool fastPath) : pattern_(pattern) {
  if (fastPath)
    fast_ = AsciiSplit::forPattern(pattern);
  initializeOnce();
  OnigRegex regex = nullptr;
  OnigErrorInfo info;
  const auto *begin = reinterpret_cast<const OnigUChar *>(pattern.data());
  int rc = onig_new(&regex, begin, begin + pattern.size(), ONIG_OPTION_NONE,
                    ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
  if (rc != ONIG_NORMAL) {
    OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, rc, &info);
    throw TokenizerError("invalid regular expression: " +
                         std::string(reinterpret_cast<char *>(message)));
  }
  regex_ = regex;
}

Regex::~Regex() {
  if (regex_)
    onig_free(static_cast<OnigRegex>(regex_));
}

void Regex::findAll(std::string_view text, std::vector<Span> &out) const {
  forEachMatch(text, [&](Span s) { out.push_back(s); });
}

void Regex::forEachMatch(std::string_view text,
                         const std::function<void(Span)> &onMatch) const {
  auto *regex = static_cast<OnigRegex>(regex_);
  OnigRegion *region = threadRegion();
  const auto *begin = reinterpret_cast<const OnigUChar *>(text.data());
  const OnigUChar *end = begin + text.size();
  size_t pos = 0;
  while (pos <= text.size()) {
    if (fast_.valid()) {
      // The known patterns never match empty text.
      if (pos == text.size())
        break;
      size_t stop = fast_.matchAt(text, pos);
      if (stop != AsciiSplit::kUndecided) {
        onMatch({pos, stop});
        pos = stop;
        continue;
      }
    }
    int r = onig_search(regex, begin, end, begin + pos, end, region,
                        ONIG_OPTION_NONE);
    if (r == ONIG_MISMATCH)
      break;
    if (r < 0) {
      OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(message, r);
      throw TokenizerError("regular expression search failed: " +
                           std::string(reinterpret_cast<char *>(message)));
    }
    size_t start = static_cast<size_t>(region->beg[0]);
    size_t stop = static_cast<size_t>(region->end[0]);
    onMatch({start, stop});
    if (stop > start) {
      pos = stop;
    } else {
      if (stop >= text.size())
        break;
      pos = stop + utf8SequenceLength(static_cast<unsigned char>(text[stop]));
    }
  }
}

} // namespace strata::tok

#include "runtime/tokenizer/WordCache.h"

namespace strata::tok {

namespace {

// Equality of short byte strings with fixed-size loads: the words are a
// few bytes, where a call to memcmp costs more than the comparison.
bool sameBytes(const char *a, const char *b, size_t n) {
  const auto load64 = loadBytes64;
  const auto load32 = loadBytes32;
  if (n >= 8) {
    for (; n > 8; n -= 8, a += 8, b += 8)
      if (load64(a) != load64(b))
        return false;
    return load64(a + n - 8) == load64(b + n - 8);
  }
  if (n >= 4)
    return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  return n == 0 ||
         (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

} // namespace

bool WordCache::lookup(std::string_view word, uint64_t hash,
                       std::vector<int32_t> &out) const {
  if (slots_.empty())
    return false;
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    const Slot &s = slots_[i];
    if (s.keyLength == 0)
      return false;
    if (s.hash == hash && s.keyLength == word.size() &&
        sameBytes(keys_.data() + s.keyOffset, word.data(), word.size())) {
      out.insert(out.end(), ids_.begin() + s.idsOffset,
                 ids_.begin() + s.idsOffset + s.idsCount);
      return true;
    }
  }
}

void WordCache::insert(std::string_view word, uint64_t hash, const int32_t *ids,
                       size_t count) {
  if (word.empty() || count_ >= maxWords_ ||
      keys_.size() + word.size() + (ids_.size() + count) * sizeof(int32_t) >
          maxBytes_)
    return;
  if (slots_.empty()) {
    // At most half full, so that probes stay short.
    size_t n = 16;
    while (n < maxWords_ * 2)
      n *= 2;
    slots_.assign(n, Slot{0, 0, 0, 0, 0});
    mask_ = n - 1;
  }
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    Slot &s = slots_[i];
    if (s.keyLength == 0) {
      s = {hash, static_cast<uint32_t>(keys_.size()),
           static_cast<uint32_t>(word.size()),
           static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count)};
      keys_.append(word);
      ids_.insert(ids_.end(), ids, ids + count);
      ++count_;
      return;
    }
    if (s.hash == hash && s.keyLength == word.size() &&
        sameBytes(keys_.data() + s.keyOffset, word.data(), word.size()))
      return;
  }
}

} // namespace strata::tok

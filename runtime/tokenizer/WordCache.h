// The BPE model's cache of words seen before: word -> ids, an open-addressing
// table whose keys and ids live in two growing arenas (offsets, so that
// growth moves nothing a slot refers to). A lookup hashes the word once and
// allocates nothing. Bounded in words and bytes; once full, new words are
// simply not added (as Hugging Face's BPE cache does). Not synchronized:
// the owner locks.
#ifndef STRATA_RUNTIME_TOKENIZER_WORDCACHE_H
#define STRATA_RUNTIME_TOKENIZER_WORDCACHE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tok {

/// Fixed-size unaligned loads (a memcpy of constant size compiles to one
/// load; of variable size it would be a library call).
inline uint64_t loadBytes64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t loadBytes32(const char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// A fast 64-bit hash of short strings (the words and tokens of the
/// tokenizer's tables): eight bytes per step, and fixed-size loads for the
/// tail (a memcpy of variable length would be a library call).
inline uint64_t hashBytes(std::string_view s) {
  const char *p = s.data();
  size_t n = s.size();
  const auto load64 = loadBytes64;
  const auto load32 = loadBytes32;
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xff51afd7ed558ccdULL);
  auto mix = [&h](uint64_t v) {
    h = (h ^ v) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  };
  if (n <= 8) {
    // Short: two overlapping 4-byte loads, or three single bytes.
    if (n >= 4)
      mix(load32(p) | load32(p + n - 4) << 32);
    else if (n > 0)
      mix(static_cast<unsigned char>(p[0]) |
          static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
          static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16);
  } else {
    for (; n > 8; n -= 8, p += 8)
      mix(load64(p));
    mix(load64(p + n - 8)); // the last eight bytes, overlapping
  }
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 32;
  return h;
}

class WordCache {
public:
  WordCache(size_t maxWords, size_t maxBytes)
      : maxWords_(maxWords), maxBytes_(maxBytes) {}

  /// Appends the cached ids of `word` (hash `hash`) and returns true, or
  /// returns false when it is not cached.
  bool lookup(std::string_view word, uint64_t hash,
              std::vector<int32_t> &out) const;
  /// Adds `word` unless it is there or the cache is full.
  void insert(std::string_view word, uint64_t hash, const int32_t *ids,
              size_t count);
  size_t size() const { return count_; }

private:
  struct Slot {
    uint64_t hash;
    uint32_t keyOffset;
    uint32_t keyLength; // 0: empty (words are never empty)
    uint32_t idsOffset;
    uint32_t idsCount;
  };
  size_t maxWords_;
  size_t maxBytes_;
  size_t count_ = 0;
  size_t mask_ = 0;
  std::vector<Slot> slots_; // allocated on the first insert
  std::string keys_;
  std::vector<int32_t> ids_;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_WORDCACHE_H

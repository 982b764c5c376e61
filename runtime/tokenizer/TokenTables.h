// The two lookup tables of a BPE vocabulary, both open-addressing hash
// tables built once at load: token text -> id (looked up by string_view,
// with no allocation per lookup), and token-id pair -> merge (rank, result).
#ifndef STRATA_RUNTIME_TOKENIZER_TOKENTABLES_H
#define STRATA_RUNTIME_TOKENIZER_TOKENTABLES_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::tok {

class TokenTable {
public:
  /// Room for `count` tokens with ids below `idLimit`.
  void reserve(size_t count, int32_t idLimit);
  /// Adds `token` with `id`. Returns the token that already holds `id`, or
  /// null when it was free (the caller turns a clash into an error).
  const std::string *insert(std::string_view token, int32_t id);
  /// The id of `token`, or -1.
  int32_t find(std::string_view token) const;
  /// The token of `id`, or null.
  const std::string *token(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < present_.size() && present_[id]
               ? &tokens_[id]
               : nullptr;
  }
  size_t size() const { return count_; }
  /// One more than the largest id.
  int32_t idLimit() const { return static_cast<int32_t>(present_.size()); }

private:
  std::vector<std::string> tokens_;
  std::vector<uint8_t> present_;
  std::vector<int32_t> slots_; // ids; -1 is empty
  size_t mask_ = 0;
  size_t count_ = 0;
};

struct MergeResult {
  int32_t rank = -1; // -1: no merge
  int32_t id = -1;
};

class MergeTable {
public:
  void reserve(size_t count);
  /// Adds or replaces the merge of (left, right).
  void insert(int32_t left, int32_t right, MergeResult result);
  MergeResult find(int32_t left, int32_t right) const {
    uint64_t key = pack(left, right);
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      if (keys_[i] == key)
        return values_[i];
      if (keys_[i] == kEmpty)
        return {};
    }
  }
  size_t size() const { return count_; }

private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static uint64_t pack(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) |
           static_cast<uint32_t>(r);
  }
  static size_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  std::vector<uint64_t> keys_{kEmpty};
  std::vector<MergeResult> values_{MergeResult{}};
  size_t mask_ = 0;
  size_t count_ = 0;
};

} // namespace strata::tok

#endif // STRATA_RUNTIME_TOKENIZER_TOKENTABLES_H

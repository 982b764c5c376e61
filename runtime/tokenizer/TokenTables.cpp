#include "runtime/tokenizer/TokenTables.h"

#include "runtime/tokenizer/WordCache.h"

namespace strata::tok {

namespace {

size_t tableSize(size_t count) {
  // At most half full, so that probes stay short.
  size_t n = 16;
  while (n < count * 2)
    n *= 2;
  return n;
}

size_t hashText(std::string_view s) { return hashBytes(s); }

} // namespace

void TokenTable::reserve(size_t count, int32_t idLimit) {
  tokens_.assign(static_cast<size_t>(idLimit), std::string());
  present_.assign(static_cast<size_t>(idLimit), 0);
  slots_.assign(tableSize(count), -1);
  mask_ = slots_.size() - 1;
  count_ = 0;
}

const std::string *TokenTable::insert(std::string_view token, int32_t id) {
  if (static_cast<size_t>(id) >= present_.size()) {
    tokens_.resize(static_cast<size_t>(id) + 1);
    present_.resize(static_cast<size_t>(id) + 1, 0);
  }
  if (present_[id])
    return &tokens_[id];
  if ((count_ + 1) * 2 > slots_.size()) {
    // Grow and re-insert every id.
    std::vector<int32_t> old;
    old.swap(slots_);
    slots_.assign(tableSize(count_ + 1), -1);
    mask_ = slots_.size() - 1;
    for (int32_t old_id : old)
      if (old_id >= 0)
        for (size_t i = hashText(tokens_[old_id]) & mask_;; i = (i + 1) & mask_)
          if (slots_[i] < 0) {
            slots_[i] = old_id;
            break;
          }
  }
  tokens_[id] = std::string(token);
  present_[id] = 1;
  for (size_t i = hashText(token) & mask_;; i = (i + 1) & mask_)
    if (slots_[i] < 0) {
      slots_[i] = id;
      break;
    }
  ++count_;
  return nullptr;
}

int32_t TokenTable::find(std::string_view token) const {
  if (slots_.empty())
    return -1;
  for (size_t i = hashText(token) & mask_;; i = (i + 1) & mask_) {
    int32_t id = slots_[i];
    if (id < 0)
      return -1;
    if (tokens_[id] == token)
      return id;
  }
}

void MergeTable::reserve(size_t count) {
  keys_.assign(tableSize(count), kEmpty);
  values_.assign(keys_.size(), MergeResult{});
  mask_ = keys_.size() - 1;
  count_ = 0;
}

void MergeTable::insert(int32_t left, int32_t right, MergeResult result) {
  if ((count_ + 1) * 2 > keys_.size()) {
    std::vector<uint64_t> oldKeys;
    std::vector<MergeResult> oldValues;
    oldKeys.swap(keys_);
    oldValues.swap(values_);
    keys_.assign(tableSize(count_ + 1), kEmpty);
    values_.assign(keys_.size(), MergeResult{});
    mask_ = keys_.size() - 1;
    for (size_t j = 0; j < oldKeys.size(); ++j)
      if (oldKeys[j] != kEmpty)
        for (size_t i = hash(oldKeys[j]) & mask_;; i = (i + 1) & mask_)
          if (keys_[i] == kEmpty) {
            keys_[i] = oldKeys[j];
            values_[i] = oldValues[j];
            break;
          }
  }
  uint64_t key = pack(left, right);
  for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
    if (keys_[i] == key) {
      values_[i] = result;
      return;
    }
    if (keys_[i] == kEmpty) {
      keys_[i] = key;
      values_[i] = result;
      ++count_;
      return;
    }
  }
}

} // namespace strata::tok

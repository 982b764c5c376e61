#include "runtime/KvBlockPool.h"

#include "runtime/plan/PlanLimits.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace strata {

KvBlockPool::KvBlockPool(int32_t numBlocks, int32_t blockSize)
    : numBlocks_(numBlocks), blockSize_(blockSize) {
  assert(numBlocks > 0 && blockSize > 0 && (blockSize & (blockSize - 1)) == 0);
  free_.reserve(numBlocks);
  for (int32_t b = numBlocks - 1; b >= 0; --b)
    free_.push_back(b);
  refs_.assign(size_t(numBlocks), 0);
  cached_.resize(size_t(numBlocks));
  releasedAt_.assign(size_t(numBlocks), 0);
}

uint64_t KvBlockPool::chainKey(uint64_t parent, const int32_t *tokens,
                               int64_t count) {
  // FNV-1a over the parent key and the token ids; 0 is reserved for "not
  // cached".
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(parent);
  for (int64_t i = 0; i < count; ++i)
    mix(uint64_t(uint32_t(tokens[i])));
  return h ? h : 1;
}

int32_t KvBlockPool::takeBlock() {
  int32_t block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else {
    block = evictable_.begin()->second;
    evictable_.erase(evictable_.begin());
    byKey_.erase(cached_[size_t(block)].key);
    cached_[size_t(block)] = {};
  }
  refs_[size_t(block)] = 1;
  return block;
}

void KvBlockPool::dropBlock(int32_t block) {
  if (--refs_[size_t(block)] > 0)
    return;
  if (cached_[size_t(block)].key != 0) {
    releasedAt_[size_t(block)] = ++releases_;
    evictable_.emplace(releases_, block);
  } else
    free_.push_back(block);
}

std::vector<int32_t> KvBlockPool::matchPrefix(const int32_t *tokens,
                                              int64_t count) const {
  std::vector<int32_t> blocks;
  if (!prefixCache_)
    return blocks;
  uint64_t parent = 0;
  for (int64_t start = 0; start + blockSize_ <= count; start += blockSize_) {
    const uint64_t key = chainKey(parent, tokens + start, blockSize_);
    auto it = byKey_.find(key);
    if (it == byKey_.end())
      break;
    const Cached &c = cached_[size_t(it->second)];
    if (c.parent != parent ||
        !std::equal(c.tokens.begin(), c.tokens.end(), tokens + start))
      break;
    blocks.push_back(it->second);
    parent = key;
  }
  return blocks;
}

int64_t KvBlockPool::idleAmong(const std::vector<int32_t> &blocks) const {
  int64_t idle = 0;
  for (int32_t b : blocks)
    idle += refs_[size_t(b)] == 0;
  return idle;
}

bool KvBlockPool::addSequence(int64_t seq, const std::vector<int32_t> &prefix) {
  if (seqs_.count(seq))
    return false;
  Sequence s;
  for (int32_t b : prefix) {
    if (refs_[size_t(b)]++ == 0)
      evictable_.erase(releasedAt_[size_t(b)]);
    s.blocks.push_back(b);
    s.keys.push_back(cached_[size_t(b)].key);
  }
  s.length = int64_t(prefix.size()) * blockSize_;
  seqs_.emplace(seq, std::move(s));
  return true;
}

int64_t KvBlockPool::firstUnregistered(int64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : int64_t(it->second.keys.size()) * blockSize_;
}

void KvBlockPool::registerFullBlocks(int64_t seq, const int32_t *tokens,
                                     int64_t first) {
  auto it = seqs_.find(seq);
  if (!prefixCache_ || it == seqs_.end())
    return;
  Sequence &s = it->second;
  while (int64_t(s.keys.size() + 1) * blockSize_ <= s.length) {
    const int64_t start = int64_t(s.keys.size()) * blockSize_;
    const int32_t *blockTokens = tokens + (start - first);
    const uint64_t parent = s.keys.empty() ? 0 : s.keys.back();
    const uint64_t key = chainKey(parent, blockTokens, blockSize_);
    const int32_t block = s.blocks[size_t(s.keys.size())];
    // The first sequence to fill a block with these tokens caches it; a
    // later one with the same prefix computed its own copy, which stays
    // private.
    if (!byKey_.count(key) && cached_[size_t(block)].key == 0) {
      cached_[size_t(block)] = {
          key, parent,
          std::vector<int32_t>(blockTokens, blockTokens + blockSize_)};
      byKey_[key] = block;
    }
    s.keys.push_back(key);
  }
}

bool KvBlockPool::create(int64_t numBlocks, int64_t blockSize, KvBlockPool &out,
                         std::string &error) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (numBlocks <= 0 || numBlocks > kMax) {
    error = "KV block count must be in [1, " + std::to_string(kMax) +
            "], got " + std::to_string(numBlocks);
    return false;
  }
  if (blockSize <= 0 || blockSize > plan::kMaxKvBlockSize ||
      (blockSize & (blockSize - 1))) {
    error = "KV block size must be a power of two in [1, " +
            std::to_string(plan::kMaxKvBlockSize) + "], got " +
            std::to_string(blockSize);
    return false;
  }
  out = KvBlockPool(static_cast<int32_t>(numBlocks),
                    static_cast<int32_t>(blockSize));
  return true;
}

bool KvBlockPool::addSequence(int64_t seq) {
  return seqs_.emplace(seq, Sequence{}).second;
}

bool KvBlockPool::append(int64_t seq, int64_t newTokens,
                         std::vector<int64_t> &slots, std::string &error) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    error = "unknown sequence " + std::to_string(seq);
    return false;
  }
  if (newTokens < 0) {
    error = "cannot append a negative number of tokens (" +
            std::to_string(newTokens) + ")";
    return false;
  }
  Sequence &s = it->second;
  int64_t newLength = s.length + newTokens;
  int64_t blocksNeeded = (newLength + blockSize_ - 1) / blockSize_;
  int64_t extra = blocksNeeded - static_cast<int64_t>(s.blocks.size());
  if (extra > freeBlocks()) {
    error = "KV cache exhausted: sequence " + std::to_string(seq) + " needs " +
            std::to_string(extra) + " more blocks of " +
            std::to_string(blockSize_) + " tokens, " +
            std::to_string(freeBlocks()) + " of " + std::to_string(numBlocks_) +
            " are free";
    return false;
  }
  for (int64_t i = 0; i < extra; ++i)
    s.blocks.push_back(takeBlock());
  slots.clear();
  slots.reserve(newTokens);
  for (int64_t p = s.length; p < newLength; ++p)
    slots.push_back(static_cast<int64_t>(s.blocks[p / blockSize_]) *
                        blockSize_ +
                    p % blockSize_);
  s.length = newLength;
  return true;
}

bool KvBlockPool::truncate(int64_t seq, int64_t length, std::string &error) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    error = "unknown sequence " + std::to_string(seq);
    return false;
  }
  Sequence &s = it->second;
  const int64_t kept = int64_t(s.keys.size()) * blockSize_;
  if (length < kept || length > s.length) {
    error = "cannot shorten sequence " + std::to_string(seq) + " of " +
            std::to_string(s.length) + " tokens to " + std::to_string(length) +
            (length < kept ? " (its first " + std::to_string(kept) +
                                 " tokens are in the prefix cache)"
                           : "");
    return false;
  }
  const size_t blocks = size_t((length + blockSize_ - 1) / blockSize_);
  // Last block first, as release() does.
  while (s.blocks.size() > blocks) {
    dropBlock(s.blocks.back());
    s.blocks.pop_back();
  }
  s.length = length;
  return true;
}

int64_t KvBlockPool::length(int64_t seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : it->second.length;
}

const std::vector<int32_t> &KvBlockPool::blockTable(int64_t seq) const {
  static const std::vector<int32_t> kEmpty;
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? kEmpty : it->second.blocks;
}

int64_t KvBlockPool::exclusiveBlocks(int64_t seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return 0;
  return std::count_if(it->second.blocks.begin(), it->second.blocks.end(),
                       [&](int32_t b) { return refs_[size_t(b)] == 1; });
}

bool KvBlockPool::release(int64_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return false;
  // Returned in reverse so that the next allocation reuses the same ids in
  // the same order, and so that a cached prefix's last blocks are evicted
  // before its first ones.
  for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b)
    dropBlock(*b);
  seqs_.erase(it);
  return true;
}

} // namespace strata

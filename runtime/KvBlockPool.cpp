#include "runtime/KvBlockPool.h"

#include "runtime/plan/PlanLimits.h"

#include <cassert>
#include <limits>

namespace strata {

KvBlockPool::KvBlockPool(int32_t numBlocks, int32_t blockSize)
    : numBlocks_(numBlocks), blockSize_(blockSize) {
  assert(numBlocks > 0 && blockSize > 0 && (blockSize & (blockSize - 1)) == 0);
  free_.reserve(numBlocks);
  for (int32_t b = numBlocks - 1; b >= 0; --b)
    free_.push_back(b);
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
  if (extra > static_cast<int64_t>(free_.size())) {
    error = "KV cache exhausted: sequence " + std::to_string(seq) + " needs " +
            std::to_string(extra) + " more blocks of " +
            std::to_string(blockSize_) + " tokens, " +
            std::to_string(free_.size()) + " of " + std::to_string(numBlocks_) +
            " are free";
    return false;
  }
  for (int64_t i = 0; i < extra; ++i) {
    s.blocks.push_back(free_.back());
    free_.pop_back();
  }
  slots.clear();
  slots.reserve(newTokens);
  for (int64_t p = s.length; p < newLength; ++p)
    slots.push_back(static_cast<int64_t>(s.blocks[p / blockSize_]) *
                        blockSize_ +
                    p % blockSize_);
  s.length = newLength;
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

bool KvBlockPool::release(int64_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return false;
  // Returned in reverse so that the next allocation reuses the same ids in
  // the same order.
  for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b)
    free_.push_back(*b);
  seqs_.erase(it);
  return true;
}

} // namespace strata

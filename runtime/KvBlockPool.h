// The paged KV cache's block bookkeeping (host side).
//
// The cache is a pool of `numBlocks` blocks of `blockSize` token slots each,
// shared by all softmax layers (each layer has its own storage for the same
// block ids). A sequence owns an ordered block table; token position p of the
// sequence lives in block table[p / blockSize] at offset p % blockSize. The
// flat slot index block * blockSize + offset is what kernels write K/V to.
//
// Growing a sequence is all-or-nothing: when the pool cannot supply every
// block a step needs, nothing is allocated and the error says how many
// blocks were needed and how many were free.
#ifndef STRATA_RUNTIME_KVBLOCKPOOL_H
#define STRATA_RUNTIME_KVBLOCKPOOL_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata {

class KvBlockPool {
public:
  /// numBlocks > 0, blockSize a power of two; checked by the caller that
  /// read them from a plan (see create()).
  KvBlockPool(int32_t numBlocks, int32_t blockSize);

  /// Validating factory: returns false and sets `error` for bad sizes.
  static bool create(int64_t numBlocks, int64_t blockSize, KvBlockPool &out,
                     std::string &error);
  KvBlockPool() = default;

  int32_t blockSize() const { return blockSize_; }
  int32_t numBlocks() const { return numBlocks_; }
  int32_t freeBlocks() const { return static_cast<int32_t>(free_.size()); }

  /// Starts tracking a sequence with no tokens. False if it already exists.
  bool addSequence(int64_t seq);
  bool hasSequence(int64_t seq) const { return seqs_.count(seq) != 0; }

  /// Makes room for `newTokens` more tokens after the sequence's current
  /// length and returns their flat slot indices (the write plan of this
  /// step) in `slots`. The length grows by newTokens on success.
  bool append(int64_t seq, int64_t newTokens, std::vector<int64_t> &slots,
              std::string &error);

  /// Tokens cached for the sequence.
  int64_t length(int64_t seq) const;
  const std::vector<int32_t> &blockTable(int64_t seq) const;

  /// Returns the sequence's blocks to the pool; false if unknown.
  bool release(int64_t seq);

private:
  struct Sequence {
    int64_t length = 0;
    std::vector<int32_t> blocks;
  };
  int32_t numBlocks_ = 0;
  int32_t blockSize_ = 0;
  /// Free block ids, popped from the back: the lowest ids are handed out
  /// first, which keeps small workloads compact and tests readable.
  std::vector<int32_t> free_;
  std::unordered_map<int64_t, Sequence> seqs_;
};

} // namespace strata

#endif // STRATA_RUNTIME_KVBLOCKPOOL_H

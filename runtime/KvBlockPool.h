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
//
// Prefix caching (enablePrefixCache, for the serving loop): a full block
// can be registered under the tokens it holds and those before it (a key
// chained from its predecessor's). A block is held by reference: several
// sequences whose prompts start alike share their cached prefix blocks. A
// block no sequence holds any more stays cached, evictable, and is reused
// least recently released first when free blocks run out.
#ifndef STRATA_RUNTIME_KVBLOCKPOOL_H
#define STRATA_RUNTIME_KVBLOCKPOOL_H

#include <cstdint>
#include <map>
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
  /// Blocks a sequence can take: never used, or cached by no sequence.
  int32_t freeBlocks() const {
    return static_cast<int32_t>(free_.size() + evictable_.size());
  }

  /// Starts tracking a sequence with no tokens. False if it already exists.
  bool addSequence(int64_t seq);

  /// Turns prefix caching on (before any sequence is added).
  void enablePrefixCache() { prefixCache_ = true; }
  bool prefixCaching() const { return prefixCache_; }
  /// Blocks that cache the first full blocks of `tokens[0, count)`, in
  /// order, as many as match.
  std::vector<int32_t> matchPrefix(const int32_t *tokens, int64_t count) const;
  /// How many of `blocks` no sequence holds (taking them uses up free
  /// blocks).
  int64_t idleAmong(const std::vector<int32_t> &blocks) const;
  /// Starts tracking a sequence whose first tokens are those cached in
  /// `prefix` (from matchPrefix): its length is their token count. False if
  /// it already exists.
  bool addSequence(int64_t seq, const std::vector<int32_t> &prefix);
  /// Registers the sequence's full blocks not registered yet; `tokens`
  /// holds its tokens from position `first` (the first one not registered,
  /// firstUnregistered()) to its length.
  void registerFullBlocks(int64_t seq, const int32_t *tokens, int64_t first);
  /// Position of the first token of the sequence's first unregistered block.
  int64_t firstUnregistered(int64_t seq) const;
  bool hasSequence(int64_t seq) const { return seqs_.count(seq) != 0; }

  /// Makes room for `newTokens` more tokens after the sequence's current
  /// length and returns their flat slot indices (the write plan of this
  /// step) in `slots`. The length grows by newTokens on success.
  bool append(int64_t seq, int64_t newTokens, std::vector<int64_t> &slots,
              std::string &error);

  /// Shortens the sequence to its first `length` tokens and gives back the
  /// blocks past them (rolling back tokens a step wrote but did not keep:
  /// rejected draft tokens). A block registered in the prefix cache is
  /// never cut into, since others may share it: `length` must keep every
  /// registered block. False with `error` for an unknown sequence, a length
  /// outside [registered tokens, length], or one that cuts a registered
  /// block.
  bool truncate(int64_t seq, int64_t length, std::string &error);

  /// Tokens cached for the sequence.
  int64_t length(int64_t seq) const;
  const std::vector<int32_t> &blockTable(int64_t seq) const;

  /// Blocks that releasing the sequence would make free: those no other
  /// sequence shares (0 for an unknown sequence).
  int64_t exclusiveBlocks(int64_t seq) const;

  /// Returns the sequence's blocks to the pool; false if unknown.
  bool release(int64_t seq);

private:
  struct Sequence {
    int64_t length = 0;
    std::vector<int32_t> blocks;
    /// Keys of its first registered() full blocks.
    std::vector<uint64_t> keys;
  };
  /// What a cached block holds: its key, its predecessor's and its tokens
  /// (compared on lookup, so that a key collision cannot alias two
  /// prefixes).
  struct Cached {
    uint64_t key = 0, parent = 0;
    std::vector<int32_t> tokens;
  };
  static uint64_t chainKey(uint64_t parent, const int32_t *tokens,
                           int64_t count);
  /// A block for a sequence: never used first, else the least recently
  /// released cached one (forgetting what it cached).
  int32_t takeBlock();
  /// Drops one reference; an unreferenced block goes back to the free list,
  /// or to the evictable ones when it is cached.
  void dropBlock(int32_t block);

  int32_t numBlocks_ = 0;
  int32_t blockSize_ = 0;
  /// Free block ids, popped from the back: the lowest ids are handed out
  /// first, which keeps small workloads compact and tests readable.
  std::vector<int32_t> free_;
  std::unordered_map<int64_t, Sequence> seqs_;
  bool prefixCache_ = false;
  std::vector<int32_t> refs_;
  std::vector<Cached> cached_; ///< per block; key 0 when not cached
  std::unordered_map<uint64_t, int32_t> byKey_;
  /// Cached blocks no sequence holds, by release order (least recent
  /// first), and each one's place in it.
  std::map<uint64_t, int32_t> evictable_;
  std::vector<uint64_t> releasedAt_;
  uint64_t releases_ = 0;
};

} // namespace strata

#endif // STRATA_RUNTIME_KVBLOCKPOOL_H

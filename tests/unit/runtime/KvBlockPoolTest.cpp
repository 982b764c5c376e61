// Paged KV bookkeeping: slots follow the block tables, growth is
// all-or-nothing, released blocks are reused, exhaustion is a clear error.
#include "runtime/KvBlockPool.h"

#include <catch2/catch.hpp>

#include <set>

using strata::KvBlockPool;

TEST_CASE("slots of a growing sequence follow its block table") {
  KvBlockPool pool(8, 4);
  REQUIRE(pool.addSequence(7));
  std::vector<int64_t> slots;
  std::string error;
  REQUIRE(pool.append(7, 6, slots, error)); // positions 0..5: blocks 0, 1
  CHECK(slots == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(pool.blockTable(7) == std::vector<int32_t>{0, 1});
  REQUIRE(pool.append(7, 1, slots, error)); // position 6 -> block 1 offset 2
  CHECK(slots == std::vector<int64_t>{6});
  CHECK(pool.length(7) == 7);
  CHECK(pool.freeBlocks() == 6);
}

TEST_CASE("two sequences interleave blocks without sharing slots") {
  KvBlockPool pool(16, 2);
  pool.addSequence(0);
  pool.addSequence(1);
  std::set<int64_t> seen;
  std::vector<int64_t> slots;
  std::string error;
  for (int step = 0; step < 5; ++step)
    for (int64_t seq : {0, 1}) {
      REQUIRE(pool.append(seq, 1, slots, error));
      REQUIRE(slots.size() == 1);
      CHECK(seen.insert(slots[0]).second);
      const auto &table = pool.blockTable(seq);
      int64_t pos = pool.length(seq) - 1;
      CHECK(slots[0] == table[pos / 2] * 2 + pos % 2);
    }
}

TEST_CASE("exhaustion allocates nothing and says how many blocks were "
          "needed") {
  KvBlockPool pool(3, 4);
  pool.addSequence(1);
  std::vector<int64_t> slots;
  std::string error;
  REQUIRE(pool.append(1, 9, slots, error)); // 3 blocks
  REQUIRE_FALSE(pool.append(1, 4, slots, error));
  CHECK(error == "KV cache exhausted: sequence 1 needs 1 more blocks of 4 "
                 "tokens, 0 of 3 are free");
  CHECK(pool.length(1) == 9);
  CHECK(pool.blockTable(1).size() == 3);
  REQUIRE(pool.append(1, 3, slots, error)); // fits in the last block
}

TEST_CASE("released blocks are reused") {
  KvBlockPool pool(2, 4);
  pool.addSequence(1);
  std::vector<int64_t> slots;
  std::string error;
  REQUIRE(pool.append(1, 8, slots, error));
  CHECK(pool.freeBlocks() == 0);
  REQUIRE(pool.release(1));
  CHECK_FALSE(pool.release(1));
  CHECK(pool.freeBlocks() == 2);
  pool.addSequence(2);
  REQUIRE(pool.append(2, 8, slots, error));
  CHECK(pool.blockTable(2) == std::vector<int32_t>{0, 1});
}

TEST_CASE("bad pool sizes and unknown sequences are errors") {
  KvBlockPool pool;
  std::string error;
  CHECK_FALSE(KvBlockPool::create(0, 16, pool, error));
  CHECK(error == "KV block count must be in [1, 2147483647], got 0");
  CHECK_FALSE(KvBlockPool::create(4, 12, pool, error));
  CHECK(error == "KV block size must be a power of two in [1, 4096], got 12");
  REQUIRE(KvBlockPool::create(4, 16, pool, error));
  std::vector<int64_t> slots;
  CHECK_FALSE(pool.append(3, 1, slots, error));
  CHECK(error == "unknown sequence 3");
  pool.addSequence(3);
  CHECK_FALSE(pool.addSequence(3));
  CHECK_FALSE(pool.append(3, -1, slots, error));
}

namespace {

/// Appends `tokens` to `seq` and registers its full blocks.
void feed(KvBlockPool &pool, int64_t seq, const std::vector<int32_t> &tokens) {
  std::vector<int64_t> slots;
  std::string error;
  const int64_t first = pool.firstUnregistered(seq);
  REQUIRE(pool.append(seq, int64_t(tokens.size()) - pool.length(seq), slots,
                      error));
  pool.registerFullBlocks(seq, tokens.data() + first, first);
}

} // namespace

TEST_CASE("prefix caching shares full blocks by their tokens and prefix") {
  KvBlockPool pool(8, 4);
  pool.enablePrefixCache();
  const std::vector<int32_t> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  REQUIRE(pool.addSequence(1));
  feed(pool, 1, a);
  // The two full blocks match; the partial third one does not.
  const std::vector<int32_t> hit = pool.matchPrefix(a.data(), 10);
  CHECK(hit == std::vector<int32_t>(pool.blockTable(1).begin(),
                                    pool.blockTable(1).begin() + 2));
  CHECK(pool.matchPrefix(a.data(), 7).size() == 1);
  // The same second block after a different first one is another prefix.
  const std::vector<int32_t> b{9, 2, 3, 4, 5, 6, 7, 8};
  CHECK(pool.matchPrefix(b.data(), 8).empty());

  // A sequence taking the cached prefix shares the blocks.
  CHECK(pool.idleAmong(hit) == 0);
  REQUIRE(pool.addSequence(2, hit));
  CHECK(pool.length(2) == 8);
  // Releasing either would free only what it does not share.
  CHECK(pool.exclusiveBlocks(1) == 1);
  CHECK(pool.exclusiveBlocks(2) == 0);
  CHECK(pool.freeBlocks() == 8 - 3);
  REQUIRE(pool.release(1));
  // Sequence 2 still holds the two shared blocks; the third is free again.
  CHECK(pool.freeBlocks() == 8 - 2);
  REQUIRE(pool.release(2));
  // Unreferenced but cached: free to take, and still found.
  CHECK(pool.freeBlocks() == 8);
  CHECK(pool.idleAmong(hit) == 2);
  CHECK(pool.matchPrefix(a.data(), 10) == hit);
}

TEST_CASE("cached blocks are evicted least recently released first") {
  KvBlockPool pool(4, 2);
  pool.enablePrefixCache();
  const std::vector<int32_t> a{1, 2, 3, 4}, b{5, 6, 7, 8};
  REQUIRE(pool.addSequence(1));
  feed(pool, 1, a);
  REQUIRE(pool.release(1));
  REQUIRE(pool.addSequence(2));
  feed(pool, 2, b);
  REQUIRE(pool.release(2));
  CHECK(pool.freeBlocks() == 4);
  // Taking two blocks evicts a's, released first (its last block first).
  REQUIRE(pool.addSequence(3));
  std::vector<int64_t> slots;
  std::string error;
  REQUIRE(pool.append(3, 3, slots, error));
  CHECK(pool.matchPrefix(a.data(), 4).empty());
  CHECK(pool.matchPrefix(b.data(), 4).size() == 2);
  // Exhaustion counts the evictable blocks and still allocates nothing.
  REQUIRE(pool.addSequence(4));
  CHECK_FALSE(pool.append(4, 5, slots, error));
  CHECK(error.find("2 of 4 are free") != std::string::npos);
}

TEST_CASE("truncating a sequence rolls back its last tokens and blocks") {
  KvBlockPool pool(4, 4);
  REQUIRE(pool.addSequence(1));
  std::vector<int64_t> slots;
  std::string error;
  REQUIRE(pool.append(1, 11, slots, error)); // blocks 0, 1, 2
  REQUIRE(pool.truncate(1, 5, error));       // keeps blocks 0, 1
  CHECK(pool.length(1) == 5);
  CHECK(pool.blockTable(1) == std::vector<int32_t>{0, 1});
  CHECK(pool.freeBlocks() == 2);
  // The next tokens take the slots after the kept ones, as if the rolled
  // back ones had never been written.
  REQUIRE(pool.append(1, 4, slots, error));
  CHECK(slots == std::vector<int64_t>{5, 6, 7, 8});
  CHECK(pool.blockTable(1) == std::vector<int32_t>{0, 1, 2});
  REQUIRE(pool.truncate(1, 9, error)); // the same length: nothing changes
  REQUIRE(pool.truncate(1, 0, error));
  CHECK(pool.blockTable(1).empty());
  CHECK(pool.freeBlocks() == 4);

  CHECK_FALSE(pool.truncate(1, 1, error));
  CHECK(error == "cannot shorten sequence 1 of 0 tokens to 1");
  CHECK_FALSE(pool.truncate(2, 0, error));
  CHECK(error == "unknown sequence 2");
}

TEST_CASE("truncation never cuts into blocks in the prefix cache") {
  KvBlockPool pool(8, 4);
  pool.enablePrefixCache();
  const std::vector<int32_t> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  REQUIRE(pool.addSequence(1));
  feed(pool, 1, a); // two registered blocks, two tokens in a third
  std::string error;
  CHECK_FALSE(pool.truncate(1, 7, error));
  CHECK(error == "cannot shorten sequence 1 of 10 tokens to 7 (its first 8 "
                 "tokens are in the prefix cache)");
  REQUIRE(pool.truncate(1, 8, error));
  CHECK(pool.blockTable(1).size() == 2);
  CHECK(pool.matchPrefix(a.data(), 10).size() == 2);
}

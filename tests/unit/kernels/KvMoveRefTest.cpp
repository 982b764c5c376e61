// The KV slot move's CPU reference (kernels/cpu/KvMoveRef.h) on a pool small
// enough to check by hand: rows move per head across blocks, in order (a
// move reads what an earlier one wrote), and nothing else changes.
#include "kernels/cpu/KvMoveRef.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace strata::kernels;

TEST_CASE("kv_move reference moves every head's row, in order") {
  // One pool of 2 blocks x 2 heads x 2 rows x 8 fp16 elements (16 bytes).
  KvMoveDims d;
  d.pools = 2;
  d.numBlocks = 2;
  d.numKvHeads = 2;
  d.blockSize = 2;
  d.headDim = 8;
  d.elementBytes = 2;
  const int64_t poolElems = 2 * 2 * 2 * 8;
  std::vector<uint16_t> a(poolElems), b(poolElems);
  // Element value: pool * 1000 + block * 100 + head * 10 + row.
  for (int64_t blk = 0; blk < 2; ++blk)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 8; ++e) {
          const int64_t at = ((blk * 2 + h) * 2 + r) * 8 + e;
          a[at] = uint16_t(blk * 100 + h * 10 + r);
          b[at] = uint16_t(1000 + blk * 100 + h * 10 + r);
        }
  void *pools[2] = {a.data(), b.data()};
  // Slot 3 (block 1, row 1) to slot 1 (block 0, row 1), then slot 1 to
  // slot 2 (block 1, row 0): the second reads what the first wrote.
  const int64_t moves[4] = {3, 1, 1, 2};
  d.moves = 2;
  REQUIRE(kvMoveRef(d, pools, moves).ok());
  auto value = [](const std::vector<uint16_t> &p, int64_t blk, int64_t h,
                  int64_t r) { return p[((blk * 2 + h) * 2 + r) * 8 + 3]; };
  for (int64_t h = 0; h < 2; ++h) {
    CHECK(value(a, 0, h, 0) == 0 + h * 10);           // untouched
    CHECK(value(a, 0, h, 1) == 100 + h * 10 + 1);     // from slot 3
    CHECK(value(a, 1, h, 0) == 100 + h * 10 + 1);     // from slot 1, moved
    CHECK(value(a, 1, h, 1) == 100 + h * 10 + 1);     // source kept
    CHECK(value(b, 0, h, 1) == 1000 + 100 + h * 10 + 1);
    CHECK(value(b, 1, h, 0) == 1000 + 100 + h * 10 + 1);
  }
}

TEST_CASE("kv_move reference refuses slots outside the pool and odd rows") {
  KvMoveDims d;
  d.pools = 1;
  d.numBlocks = 2;
  d.numKvHeads = 1;
  d.blockSize = 4;
  d.headDim = 8;
  d.moves = 1;
  std::vector<uint16_t> pool(2 * 4 * 8);
  void *pools[1] = {pool.data()};
  const int64_t outside[2] = {0, 8};
  const Status s = kvMoveRef(d, pools, outside);
  CHECK_FALSE(s.ok());
  CHECK(s.message() == "kv_move: move 0 (0 -> 8) leaves the pool's 8 slots");
  d.headDim = 4;
  const int64_t fine[2] = {0, 1};
  CHECK(kvMoveRef(d, pools, fine).message() ==
        "kv_move: a head row of 8 bytes is not a multiple of 16");
}

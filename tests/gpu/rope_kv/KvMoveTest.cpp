// The KV slot move on the GPU against its CPU reference
// (kernels/cpu/KvMoveRef.h), on random pools: bytes are copied, so every
// pool must match bit for bit. Moves compact accepted tree paths of
// several sequences (a move reading a slot an earlier one wrote), with
// odd block sizes, both head dims, one and several pools.
#include "kernels/cpu/KvMoveRef.h"
#include "kernels/rope_kv/KvMove.h"
#include "tests/gpu/rope_kv/RopeKvTestSupport.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

using namespace strata::kernels;
using namespace strata::kernels::test;

TEST_CASE("kv_move on the GPU = its CPU reference, bit for bit",
          "[gpu][rope_kv][kv_move]") {
  struct Case {
    int64_t pools, blocks, heads, blockSize, headDim;
  };
  const Case cases[] = {{2, 6, 2, 16, 64}, {12, 9, 8, 5, 128}, {1, 3, 1, 1, 64}};
  std::mt19937_64 rng(testSeed() + 41);
  for (const Case &c : cases) {
    INFO("pools " << c.pools << ", blocks " << c.blocks << ", heads "
                  << c.heads << ", block size " << c.blockSize
                  << ", head dim " << c.headDim);
    KvMoveDims d;
    d.pools = c.pools;
    d.numBlocks = c.blocks;
    d.numKvHeads = c.heads;
    d.blockSize = c.blockSize;
    d.headDim = c.headDim;
    d.elementBytes = 2;
    const int64_t slots = c.blocks * c.blockSize;
    // Sequences of a tree verify: each owns a run of slots; its accepted
    // path picks increasing node indices and moves them down to follow
    // its first slot, in order.
    std::vector<int64_t> moves;
    for (int64_t start = 0; start + 2 < slots; start += 1 + int64_t(rng() % 12)) {
      const int64_t nodes = std::min<int64_t>(slots - start, 2 + rng() % 17);
      int64_t at = 0;
      for (int64_t j = 1; j < nodes; ++j) {
        at += 1 + int64_t(rng() % 3);
        if (at >= nodes)
          break;
        if (at != j) {
          moves.push_back(start + at);
          moves.push_back(start + j);
        }
      }
      start += nodes;
    }
    d.moves = int64_t(moves.size() / 2);
    REQUIRE(d.moves > 0);
    const int64_t poolElems = c.blocks * c.heads * c.blockSize * c.headDim;
    std::vector<uint16_t> pools(size_t(poolElems * c.pools));
    for (uint16_t &v : pools)
      v = uint16_t(rng());
    std::vector<void *> hostPools;
    std::vector<uint16_t> want = pools;
    for (int64_t p = 0; p < c.pools; ++p)
      hostPools.push_back(want.data() + p * poolElems);
    REQUIRE(kvMoveRef(d, hostPools.data(), moves.data()).ok());
    REQUIRE(want != pools);

    DeviceBuffer<uint16_t> poolDev(pools);
    DeviceBuffer<int64_t> movesDev(moves);
    const Status s = kvMove(d, poolDev.get(), poolElems * 2, movesDev.get(),
                            nullptr);
    INFO(s.message());
    REQUIRE(s.ok());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const std::vector<uint16_t> got = poolDev.download();
    const auto bad = std::mismatch(got.begin(), got.end(), want.begin());
    INFO("first difference at element " << (bad.first - got.begin()));
    CHECK(bad.first == got.end());
  }
}

TEST_CASE("kv_move refuses bad shapes before launching",
          "[gpu][rope_kv][kv_move]") {
  KvMoveDims d;
  d.pools = 2;
  d.numBlocks = 4;
  d.numKvHeads = 2;
  d.blockSize = 16;
  d.headDim = 4; // 8-byte rows
  d.moves = 1;
  const int64_t move[2] = {1, 0};
  CHECK_FALSE(kvMoveRef(d, nullptr, move).ok());
  d.headDim = 64;
  const int64_t outside[2] = {64, 0};
  const Status s = validateKvMove(d, outside);
  CHECK_FALSE(s.ok());
  CHECK(s.message() == "kv_move: move 0 (64 -> 0) leaves the pool's 64 slots");
}

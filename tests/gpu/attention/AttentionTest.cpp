// GPU tests of the attention launchers against the CPU reference.
// [small] cases run under compute-sanitizer (memcheck); [race] is the
// subset racecheck runs; [large] covers contexts to 128K tokens.
#include "kernels/attention/AttentionTrace.h"
#include "tests/gpu/attention/AttentionCase.h"

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

using namespace strata::kernels;
using namespace strata::kernels::attention_test;

namespace {
const ActDType kDtypes[] = {ActDType::BF16, ActDType::F16};
}

TEST_CASE("attention prefill, ragged batches", "[attention][small]") {
  for (ActDType dt : kDtypes)
    for (int D : {64, 128})
      for (int G : {1, 4, 8}) {
        AttnCase c;
        c.kind = AttentionKind::Prefill;
        c.dtype = dt;
        c.headDim = D;
        c.group = G;
        c.blockSize = G == 4 ? 32 : 16;
        c.qLens = {1, 37, 130, 7};
        c.prefixLens = {0, 0, 0, 0};
        runAttnCase(c, attnTestRng());
        c.window = 20; // smaller than most sequences
        runAttnCase(c, attnTestRng());
      }
}

TEST_CASE("attention extend onto a paged cache", "[attention][small][race]") {
  for (ActDType dt : kDtypes)
    for (int D : {64, 128})
      for (int G : {1, 4, 8})
        for (int splits : {0, 1, 3, 12}) {
          AttnCase c;
          c.kind = AttentionKind::Extend;
          c.dtype = dt;
          c.headDim = D;
          c.group = G;
          c.blockSize = splits >= 3 ? 32 : 16;
          c.numSplits = splits;
          c.qLens = {1, 17, 70, 5};
          c.prefixLens = {50, 301, 1000, 0};
          c.window = splits == 1 ? 90 : 0;
          runAttnCase(c, attnTestRng());
        }
}

TEST_CASE("attention prefill and extend on 128-key stages",
          "[attention][small]") {
  // A launch bound of 4096 tokens or more at headDim 128 takes 128-key
  // stages with Q in shared memory (rowsWide); the sequences themselves
  // stay short enough for the CPU reference.
  for (ActDType dt : kDtypes)
    for (int G : {1, 4, 8}) {
      AttnCase c;
      c.kind = AttentionKind::Prefill;
      c.dtype = dt;
      c.group = G;
      c.blockSize = G == 4 ? 32 : 16;
      c.maxQLenBound = 4096;
      c.qLens = {1, 37, 700, 130};
      c.prefixLens = {0, 0, 0, 0};
      runAttnCase(c, attnTestRng());
      c.window = 20;
      runAttnCase(c, attnTestRng());
      c.kind = AttentionKind::Extend;
      c.window = G == 8 ? 90 : 0;
      c.qLens = {1, 17, 300, 5};
      c.prefixLens = {50, 301, 1000, 0};
      for (int splits : {0, 1, 3}) {
        c.numSplits = splits;
        runAttnCase(c, attnTestRng());
      }
    }
  AttnCase c;
  c.kind = AttentionKind::Extend;
  c.contiguous = true;
  c.maxQLenBound = 8192;
  c.qLens = {9, 200};
  c.prefixLens = {77, 1500};
  runAttnCase(c, attnTestRng());
  c.contiguous = false;
  c.blockSize = 48; // not a power of two
  runAttnCase(c, attnTestRng());
}

TEST_CASE("attention 128-key stages at racecheck size",
          "[attention][small][race]") {
  // The 128-key configuration at a size compute-sanitizer's racecheck gets
  // through in seconds (the case above took 55 s).
  AttnCase c;
  c.kind = AttentionKind::Prefill;
  c.group = 4;
  c.maxQLenBound = 4096;
  c.qLens = {1, 37, 130};
  c.prefixLens = {0, 0, 0};
  runAttnCase(c, attnTestRng());
  c.kind = AttentionKind::Extend;
  c.qLens = {5, 140};
  c.prefixLens = {300, 200};
  c.numSplits = 3;
  runAttnCase(c, attnTestRng());
}

TEST_CASE("attention rows over more items than one wave of blocks",
          "[attention][small]") {
  // Batches whose rows items (8 sequences x 2 kv heads x 38 row tiles, or
  // 40 trees x 2 x 4) outnumber the blocks one wave holds, so that the
  // launcher does not split them: ragged lengths with most row tiles of
  // the short sequences empty, windows, extends over ragged caches, and a
  // tree verify of many sequences with positions and a window.
  for (ActDType dt : kDtypes)
    for (int D : {64, 128}) {
      AttnCase c;
      c.kind = AttentionKind::Prefill;
      c.dtype = dt;
      c.headDim = D;
      c.group = 8;
      c.qLens = {1, 37, 600, 5, 260, 90, 333, 16};
      c.prefixLens.assign(c.qLens.size(), 0);
      runAttnCase(c, attnTestRng());
      c.window = 100;
      runAttnCase(c, attnTestRng());
      c.kind = AttentionKind::Extend;
      c.window = 0;
      c.prefixLens = {3, 0, 41, 500, 7, 64, 0, 1000};
      runAttnCase(c, attnTestRng());
    }
  AttnCase c;
  c.kind = AttentionKind::Tree;
  c.group = 8;
  c.maxDepth = 6;
  c.treePositions = true;
  c.window = 60;
  for (int i = 0; i < 40; ++i) {
    c.qLens.push_back(64 - (i % 3) * 20);
    c.prefixLens.push_back(10 + 13 * i);
  }
  runAttnCase(c, attnTestRng());
}

namespace {
/// Runs the enclosing scope with a launcher switch (tensor copies, the
/// cluster merge) set as given, and restores its default (on) however the
/// scope ends.
struct Switched {
  void (*set)(bool);
  Switched(void (*setter)(bool), bool on) : set(setter) { set(on); }
  ~Switched() { set(true); }
};
struct TensorCopies : Switched {
  explicit TensorCopies(bool on)
      : Switched(setAttentionTensorCopiesEnabled, on) {}
};
struct ClusterMerge : Switched {
  explicit ClusterMerge(bool on)
      : Switched(setAttentionClusterMergeEnabled, on) {}
};
struct PeerMerge : Switched {
  explicit PeerMerge(bool on) : Switched(setAttentionPeerMergeEnabled, on) {}
};
struct Persistent : Switched {
  explicit Persistent(bool on) : Switched(setAttentionPersistentEnabled, on) {}
};
struct NewKeySlivers : Switched {
  explicit NewKeySlivers(bool on)
      : Switched(setAttentionNewKeySliversEnabled, on) {}
};
} // namespace

TEST_CASE("attention rows with whole tiles copied by cp.async",
          "[attention][small]") {
  // Tensor copies are the default for whole tiles of a paged cache with a
  // power-of-two block size and of a contiguous one; the cp.async path
  // that copies them otherwise, on the same shapes.
  TensorCopies off(false);
  for (ActDType dt : kDtypes)
    for (int D : {64, 128}) {
      AttnCase c;
      c.kind = AttentionKind::Prefill;
      c.dtype = dt;
      c.headDim = D;
      c.group = D == 64 ? 8 : 4;
      c.qLens = {1, 37, 300, 130};
      c.prefixLens = {0, 0, 0, 0};
      runAttnCase(c, attnTestRng());
      c.kind = AttentionKind::Extend;
      c.blockSize = 32;
      c.window = 90;
      c.prefixLens = {50, 301, 1000, 0};
      runAttnCase(c, attnTestRng());
    }
  AttnCase c;
  c.kind = AttentionKind::Prefill;
  c.maxQLenBound = 4096;
  c.qLens = {1, 37, 700, 130};
  c.prefixLens = {0, 0, 0, 0};
  runAttnCase(c, attnTestRng());
  c.kind = AttentionKind::Extend;
  c.contiguous = true;
  c.qLens = {9, 200};
  c.prefixLens = {77, 1500};
  runAttnCase(c, attnTestRng());
  c.kind = AttentionKind::Tree;
  c.contiguous = false;
  c.maxQLenBound = 0;
  c.qLens = {64, 20};
  c.prefixLens = {700, 2000};
  runAttnCase(c, attnTestRng());
}

TEST_CASE("attention rows over pages of 48 slots and of one slot",
          "[attention][small]") {
  // A block size that is not a power of two takes no tensor maps: every
  // tile goes by cp.async, each key's page found by a division. Pages of
  // one slot give every key a page of its own, so every lane of the
  // producer's lookups (AttentionProducer.cuh) holds another page.
  for (int D : {64, 128})
    for (int64_t bs : {48, 1}) {
      AttnCase c;
      c.kind = AttentionKind::Extend;
      c.headDim = D;
      c.group = D == 64 ? 8 : 4;
      c.blockSize = bs;
      c.qLens = {1, 17, 70, 5};
      c.prefixLens = {50, 301, 1000, 0};
      for (int splits : {0, 3}) {
        c.numSplits = splits;
        c.window = splits == 3 ? 90 : 0;
        runAttnCase(c, attnTestRng());
      }
      c.kind = AttentionKind::Tree;
      c.numSplits = 0;
      c.window = 0;
      c.qLens = {9, 64};
      c.prefixLens = {700, 2000};
      runAttnCase(c, attnTestRng());
    }
}

TEST_CASE("attention 128-key stages persistent and one block per item",
          "[attention][small]") {
  // Ragged prefills and extends with more rows items than the GPU holds
  // blocks (2 kv heads, about 200 items with rows; many empty ones
  // between them), so that a persistent block takes several items, one
  // after another through the same stages and the same Q buffer; then the
  // same with one block per item. Each launch's counter says which ran.
  for (bool persistent : {true, false}) {
    Persistent mode(persistent);
    for (ActDType dt : kDtypes) {
      AttnCase c;
      c.kind = AttentionKind::Prefill;
      c.dtype = dt;
      c.group = 4;
      c.maxQLenBound = 4096;
      c.qLens = {1200, 1100, 37, 900};
      c.prefixLens = {0, 0, 0, 0};
      c.window = dt == ActDType::BF16 ? 0 : 300;
      AttentionPath path;
      runAttnCase(c, attnTestRng(), &path);
      CHECK(path.config == AttentionConfig::LongPrefillExtend);
      CHECK(path.persistent == persistent);
      c.kind = AttentionKind::Extend;
      c.blockSize = 32;
      c.qLens = {1500, 37, 1300, 1};
      c.prefixLens = {300, 2000, 0, 90};
      runAttnCase(c, attnTestRng(), &path);
      CHECK(path.config == AttentionConfig::LongPrefillExtend);
      CHECK(path.persistent == persistent);
    }
  }
}

namespace {
/// Caps the persistent grid for the enclosing scope (then no cap again).
struct PersistentCap {
  explicit PersistentCap(int32_t blocks) {
    setAttentionPersistentBlocks(blocks);
  }
  ~PersistentCap() { setAttentionPersistentBlocks(0); }
};
} // namespace

TEST_CASE("attention persistent grid of two blocks at racecheck size",
          "[attention][small][race]") {
  // Two blocks take every item: each runs about nine items with rows in
  // turn (stages, barrier phases, item slots and the Q buffer carried from
  // one to the next) and skips hundreds of empty ones, at a size
  // compute-sanitizer's racecheck gets through. The extend then replays
  // from a CUDA graph with other lengths, its counters reset by the launch
  // before.
  PersistentCap cap(2);
  AttnCase c;
  c.kind = AttentionKind::Prefill;
  c.group = 4;
  c.maxQLenBound = 4096;
  c.qLens = {100, 37, 70};
  c.prefixLens = {0, 0, 0};
  AttentionPath path;
  runAttnCase(c, attnTestRng(), &path); // launched twice, the same way
  CHECK(path.persistent);
  CHECK(path.blocks == 2);
  c.kind = AttentionKind::Extend;
  c.dtype = ActDType::F16;
  c.blockSize = 32;
  c.numSplits = 1;
  c.window = 150;
  c.qLens = {90, 5, 130};
  c.prefixLens = {200, 300, 0};
  runAttnCase(c, attnTestRng());
  c.graphReplay = true;
  runAttnCase(c, attnTestRng(), &path); // the captured launch's path
  CHECK(path.persistent);
  CHECK(path.blocks == 2);
}

TEST_CASE("attention rows take tensor copies where the cache allows them",
          "[attention][small]") {
  // A map the driver refused to encode leaves every tile on cp.async,
  // which every other case would pass: the launch's own encoding here.
  AttentionDims dims;
  dims.batch = 2;
  dims.numQHeads = 8;
  dims.numKvHeads = 2;
  dims.headDim = 128;
  // Room for every cache below: 64 pages of up to 128 slots, or 8192
  // contiguous slots of K and V for 2 sequences.
  const int64_t blocks = 64, elems = 8192 * 2 * 128 * 2 * 2;
  void *k = nullptr, *v = nullptr;
  REQUIRE(cudaMalloc(&k, elems * 2) == cudaSuccess);
  REQUIRE(cudaMalloc(&v, elems * 2) == cudaSuccess);
  auto rows = [&](AttentionKind kind, const KvCacheView &cache,
                  int64_t maxQLen) {
    return attentionTensorCopyRows(kind, dims, cache, maxQLen);
  };
  const auto paged = [&](int64_t bs) {
    return KvCacheView::paged(k, v, blocks, bs, nullptr, 8);
  };
  // A box is a page of one head, at most a stage (64 keys, 128 from 4096
  // tokens of prefill or extend); a contiguous cache's box is a stage.
  CHECK(rows(AttentionKind::Prefill, paged(16), 100) == 16);
  CHECK(rows(AttentionKind::Extend, paged(32), 4096) == 32);
  CHECK(rows(AttentionKind::Tree, paged(8), 64) == 8);
  CHECK(rows(AttentionKind::Tree, paged(128), 64) == 64);
  CHECK(rows(AttentionKind::Prefill, paged(128), 8192) == 128);
  CHECK(rows(AttentionKind::Extend, KvCacheView::contiguous(k, 4096), 100) ==
        64);
  CHECK(rows(AttentionKind::Prefill, KvCacheView::contiguous(k, 8192), 8192) ==
        128);
  dims.headDim = 64; // 64-key stages, a box still 64 elements wide
  CHECK(rows(AttentionKind::Prefill, paged(16), 8192) == 16);
  dims.headDim = 128;
  // What the maps cannot describe, and decode, go by cp.async.
  CHECK(rows(AttentionKind::Prefill, paged(48), 100) == 0);
  CHECK(rows(AttentionKind::Prefill, paged(4), 100) == 0);
  CHECK(rows(AttentionKind::Decode, paged(16), 1) == 0);
  {
    TensorCopies off(false);
    CHECK(rows(AttentionKind::Prefill, paged(16), 100) == 0);
  }
  cudaFree(k);
  cudaFree(v);
}

TEST_CASE("attention rows merge their splits in clusters, by their blocks "
          "or in a kernel",
          "[attention][small]") {
  // Up to 8 splits of a rows item merge inside the item's cluster; else
  // the item's blocks merge them when the GPU holds the whole grid (one
  // block per SM); else, or with both switches off, the merge kernel does.
  // Which one ran is checked, so that a path the device refused cannot
  // be left untested.
  int device = 0, sms = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                 device) == cudaSuccess);
  for (bool cluster : {true, false})
    for (bool peers : {true, false}) {
      ClusterMerge clusterMerge(cluster);
      PeerMerge peerMerge(peers);
      // Split counts and head dims; a cluster of two merges several chunks
      // a thread at once, at both head dims.
      constexpr std::pair<int, int> kSplitsAndDims[] = {
          {2, 128}, {2, 64}, {3, 64}, {5, 128}, {8, 128}, {12, 128}, {16, 128}};
      for (const auto &[splits, headDim] : kSplitsAndDims) {
        AttnCase c;
        c.kind = splits % 2 ? AttentionKind::Tree : AttentionKind::Extend;
        c.dtype = splits == 5 ? ActDType::F16 : ActDType::BF16;
        c.headDim = headDim;
        c.numSplits = splits;
        // 8 splits: 8 items, whose clusters of 8 fit on H100-class GPUs
        // (an H200 holds 15); 12 splits: 144 blocks, more than such a GPU
        // holds; 16: 128.
        c.qLens = {40, 3, 64};
        c.prefixLens = {1200, 9, 700};
        if (splits == 8 || splits == 16) {
          c.qLens.pop_back();
          c.prefixLens.pop_back();
        }
        c.graphReplay = splits == 3; // captured, then replayed
        // 2 row tiles: 64 (or 40) tokens of 4 heads, 128 rows a tile
        const int64_t blocks = 2 * splits * c.numKvHeads * c.qLens.size();
        const bool inClusters = cluster && splits <= 8;
        const bool byPeers = !inClusters && peers && blocks <= sms;
        AttentionPath path;
        runAttnCase(c, attnTestRng(), &path);
        INFO(c.describe() << ", " << blocks << " blocks on " << sms << " SMs");
        CHECK(path.numSplits == splits);
        CHECK(path.merge == (inClusters ? AttentionMerge::Cluster
                             : byPeers  ? AttentionMerge::Peers
                                        : AttentionMerge::Kernel));
      }
    }
}

TEST_CASE("attention new keys in slivers of the first splits or in the "
          "last split",
          "[attention][small]") {
  // Split trees and extends of at most 64 tokens a sequence over caches of
  // few stages a split give their new keys to splits 0, 1, ... in 16-key
  // slivers (Attention.h). Split counts from 2 (several slivers a split)
  // to 16 (splits without one); 1 to 64 new tokens a sequence (a partial
  // last sliver); a cache shorter than a stage a split (splits with a
  // sliver and no keys of their own); windows with and without query
  // positions; paged and contiguous caches. Both ways against the
  // reference, and which path ran is checked.
  for (bool slivers : {true, false}) {
    NewKeySlivers sw(slivers);
    for (int splits : {2, 3, 5, 8, 16}) {
      AttnCase c;
      c.kind = splits % 2 ? AttentionKind::Tree : AttentionKind::Extend;
      c.dtype = splits == 5 ? ActDType::F16 : ActDType::BF16;
      c.headDim = splits == 3 ? 64 : 128;
      c.numSplits = splits;
      // 4 heads a kv head: 32 tokens a row tile, so 64 tokens are two
      // items of 32 and 64 new keys.
      c.qLens = {1, 17, 64, 40};
      c.prefixLens = {300, 500, 5, 200};
      c.window = splits == 5 || splits == 8 ? 120 : 0;
      c.treePositions = splits == 5;
      c.graphReplay = splits == 16;
      // A cache of whole pages (the new keys' full stage by tensor copies),
      // 32-slot pages, a contiguous cache.
      if (splits == 8) {
        c.prefixLens = {256, 512, 64, 128};
        c.blockSize = 32;
      }
      c.contiguous = splits == 3;
      AttentionPath path;
      runAttnCase(c, attnTestRng(), &path);
      INFO(c.describe() << ", slivers " << slivers);
      CHECK(path.config == (c.kind == AttentionKind::Tree
                                ? slivers ? AttentionConfig::TreeVerifySlivers
                                          : AttentionConfig::TreeVerify
                            : slivers ? AttentionConfig::ExtendSlivers
                                      : AttentionConfig::PrefillExtend));
    }
  }
  // Longer sequences, and splits of many stages, keep their new keys in
  // the last split.
  for (int qLen : {65, 16}) {
    AttnCase c;
    c.kind = AttentionKind::Tree;
    c.numSplits = 2;
    c.qLens = {qLen};
    c.prefixLens = {qLen == 65 ? 300 : 2000};
    AttentionPath path;
    runAttnCase(c, attnTestRng(), &path);
    INFO(c.describe());
    CHECK(path.config == AttentionConfig::TreeVerify);
  }
}

TEST_CASE("attention rows whose merging blocks give up waiting",
          "[attention][small]") {
  // With no time to wait, a block merging with its peers leaves its rows to
  // the last split to arrive whenever a sibling is not there yet: every
  // mix of blocks that wait, give up and merge everything must still give
  // the reference's output, and leave the counters at zero for the replay
  // of a captured launch.
  struct NoWait {
    uint32_t before = attentionPeerWaitNs();
    NoWait() { setAttentionPeerWaitNs(0); }
    ~NoWait() { setAttentionPeerWaitNs(before); }
  } noWait;
  ClusterMerge clusters(false);
  for (int splits : {2, 3, 8, 16}) {
    AttnCase c;
    c.kind = splits == 3 ? AttentionKind::Tree : AttentionKind::Extend;
    c.numSplits = splits;
    c.qLens = {40, 3};
    c.prefixLens = {1200, 700};
    c.graphReplay = splits != 2;
    AttentionPath path;
    runAttnCase(c, attnTestRng(), &path);
    INFO(c.describe());
    CHECK(path.merge == AttentionMerge::Peers);
  }
}

TEST_CASE("attention over pages without storage", "[attention][small]") {
  // Table entries of -1 and past the pool inside the sequences read as
  // zeros, in whole tiles (tensor copies or cp.async), in partial ones and
  // in decode.
  for (bool tensor : {true, false}) {
    TensorCopies copies(tensor);
    for (int D : {64, 128}) {
      AttnCase c;
      c.holes = true;
      c.headDim = D;
      c.kind = AttentionKind::Prefill;
      c.qLens = {20, 300, 130};
      c.prefixLens = {0, 0, 0};
      runAttnCase(c, attnTestRng());
      c.maxQLenBound = 4096;
      c.blockSize = 32;
      runAttnCase(c, attnTestRng());
      c.maxQLenBound = 0;
      c.kind = AttentionKind::Extend;
      c.prefixLens = {40, 301, 1000};
      runAttnCase(c, attnTestRng());
      c.kind = AttentionKind::Tree;
      c.qLens = {64, 9, 30};
      runAttnCase(c, attnTestRng());
      c.kind = AttentionKind::Decode;
      c.qLens = {1, 1, 1};
      runAttnCase(c, attnTestRng());
    }
  }
}

TEST_CASE("attention paged decode", "[attention][small][race]") {
  for (ActDType dt : kDtypes)
    for (int D : {64, 128})
      for (int G : {1, 4, 8})
        for (int splits : {0, 1, 4}) {
          AttnCase c;
          c.kind = AttentionKind::Decode;
          c.dtype = dt;
          c.headDim = D;
          c.group = G;
          c.blockSize = G == 8 ? 32 : 16;
          c.numSplits = splits;
          c.qLens = {1, 1, 1, 1, 1};
          c.prefixLens = {0, 14, 32, 699, 2100};
          runAttnCase(c, attnTestRng());
        }
}

TEST_CASE("attention paged decode, windows and layouts", "[attention][small]") {
  for (int64_t window : {1, 100, 5000})
    for (int64_t bs : {1, 16, 32, 48}) {
      AttnCase c;
      c.kind = AttentionKind::Decode;
      c.group = 4;
      c.blockSize = bs;
      c.window = window;
      c.qLens = {1, 1, 1};
      c.prefixLens = {3, 511, 3001};
      runAttnCase(c, attnTestRng());
    }
  AttnCase c;
  c.kind = AttentionKind::Decode;
  c.contiguous = true;
  c.qLens = {1, 1};
  c.prefixLens = {77, 1500};
  runAttnCase(c, attnTestRng());
  c.kind = AttentionKind::Extend;
  c.qLens = {9, 65};
  runAttnCase(c, attnTestRng());
}

TEST_CASE("attention paged decode replayed from a CUDA graph",
          "[attention][small]") {
  for (int splits : {0, 1}) {
    AttnCase c;
    c.kind = AttentionKind::Decode;
    c.group = 8;
    c.numSplits = splits;
    c.graphReplay = true;
    c.qLens = {1, 1, 1};
    c.prefixLens = {40, 3000, 900};
    runAttnCase(c, attnTestRng());
  }
}

TEST_CASE("attention tree verify", "[attention][small][race]") {
  for (ActDType dt : kDtypes)
    for (int D : {64, 128})
      for (int depth = 1; depth <= 8; ++depth) {
        AttnCase c;
        c.kind = AttentionKind::Tree;
        c.dtype = dt;
        c.headDim = D;
        c.group = depth % 3 == 0 ? 1 : (depth % 3 == 1 ? 4 : 8);
        c.blockSize = depth % 2 ? 16 : 32;
        c.maxDepth = depth;
        c.qLens = {1 + depth * 3, 64, 5};
        c.prefixLens = {10, 700, 2000};
        c.numSplits = depth % 4 == 0 ? 1 : 0;
        c.treePositions = depth % 2 == 0;
        c.window = depth == 5 ? 300 : 0;
        runAttnCase(c, attnTestRng());
      }
}

TEST_CASE("a chain tree equals causal extend", "[attention][small]") {
  for (int G : {1, 4, 8}) {
    AttnCase c;
    c.kind = AttentionKind::Extend;
    c.group = G;
    c.qLens = {8, 64, 3};
    c.prefixLens = {100, 1000, 4097};
    std::mt19937_64 rng = attnTestRng();
    std::mt19937_64 same = rng;
    attnTestRng().discard(1);
    std::vector<uint16_t> extend = runAttnCase(c, rng);
    c.kind = AttentionKind::Tree;
    c.treePositions = true; // positions prefix + i: the slots themselves
    for (int32_t n : c.qLens) {
      std::vector<int32_t> chain(n);
      for (int32_t i = 0; i < n; ++i)
        chain[i] = i - 1;
      c.parents.push_back(chain);
    }
    std::vector<uint16_t> tree = runAttnCase(c, same);
    CHECK(tree == extend);
  }
}

TEST_CASE("attention at long contexts", "[attention][large]") {
  // 128K cached tokens: windows smaller and larger than the context.
  for (int64_t window : {0, 4096, 200000}) {
    AttnCase c;
    c.kind = AttentionKind::Decode;
    c.numKvHeads = 1;
    c.group = 8;
    c.window = window;
    c.qLens = {1, 1};
    c.prefixLens = {131071 + 1000, 5000};
    runAttnCase(c, attnTestRng());
  }
  {
    AttnCase c;
    c.kind = AttentionKind::Extend;
    c.numKvHeads = 1;
    c.group = 4;
    c.blockSize = 32;
    c.qLens = {40};
    c.prefixLens = {131072 + 13};
    runAttnCase(c, attnTestRng());
    c.kind = AttentionKind::Tree;
    c.qLens = {64};
    c.window = 8192;
    c.treePositions = true;
    runAttnCase(c, attnTestRng());
  }
  {
    AttnCase c;
    c.kind = AttentionKind::Prefill;
    c.numKvHeads = 2;
    c.group = 4;
    c.qLens = {2049, 333};
    c.prefixLens = {0, 0};
    runAttnCase(c, attnTestRng());
  }
}

TEST_CASE("the workspace bound covers every launch the launcher splits",
          "[attention]") {
  // The CUDA backend allocates attentionWorkspaceBound once for decode,
  // extend and tree verify steps of any shape, and for prefills (whose long
  // launches run persistent, with their counters in the workspace).
  for (AttentionKind kind : {AttentionKind::Prefill, AttentionKind::Extend,
                             AttentionKind::Tree, AttentionKind::Decode})
    for (int D : {64, 128})
      for (int G : {1, 4, 8})
        for (int kvHeads : {1, 2, 8}) {
          AttentionDims d;
          d.numKvHeads = kvHeads;
          d.numQHeads = kvHeads * G;
          d.headDim = D;
          const size_t bound = attentionWorkspaceBound(kind, d);
          for (int64_t batch : {1, 2, 3, 7, 16, 64})
            for (int64_t qLen : {1, 5, 37, 300, 1000, 4096, 5000})
              for (int64_t kvLen : {1, 100, 8192, 131072}) {
                if (kind == AttentionKind::Decode && qLen != 1)
                  continue;
                d.batch = batch;
                AttentionLaunch launch;
                launch.maxQLen = qLen;
                launch.maxKvLen = std::max(kvLen, qLen);
                INFO("kind " << int(kind) << " D " << D << " G " << G
                             << " kv heads " << kvHeads << " batch " << batch
                             << " qLen " << qLen << " kvLen " << kvLen);
                CHECK(attentionWorkspaceBytes(kind, d, launch) <= bound);
              }
        }
}

TEST_CASE("attention rejects a scale that is not positive and finite",
          "[attention]") {
  // The kernels take row maxima over unscaled scores, which is the
  // softmax's maximum only for a positive scale.
  AttentionDims d;
  d.batch = 1;
  d.numQHeads = 8;
  d.numKvHeads = 2;
  d.headDim = 128;
  AttentionTensors t{};
  AttentionLaunch l{};
  l.maxQLen = 1;
  for (float scale : {0.f, -0.125f, std::nanf(""), INFINITY}) {
    d.scale = scale;
    for (Status s : {attentionPrefill(d, t, l, nullptr),
                     attentionDecode(d, t, l, nullptr)}) {
      REQUIRE_FALSE(s);
      CHECK(s.message().find("scale must be a positive finite number") !=
            std::string::npos);
    }
  }
}

TEST_CASE("attention time marks follow the build option", "[attention]") {
  AttentionTraceBlock one;
  // Counts outside [0, capacity], or blocks without a destination, are
  // refused in every build.
  CHECK_FALSE(attentionTrace(AttentionKind::Decode, nullptr, 3).ok());
  CHECK_FALSE(
      attentionTrace(AttentionKind::Decode, &one, kAttentionTraceBlocks + 1)
          .ok());
#ifdef STRATA_ATTENTION_TRACE
  // Two sequences x 2 kv heads x 4 splits, one row tile each: every block
  // has keys, so every record is whole and its marks in order.
  AttnCase c;
  c.kind = AttentionKind::Decode;
  c.qLens = {1, 1};
  c.prefixLens = {700, 2100};
  c.numSplits = 4;
  REQUIRE(attentionTraceClear(AttentionKind::Decode).ok());
  runAttnCase(c, attnTestRng());
  std::vector<AttentionTraceBlock> r(16);
  REQUIRE(attentionTrace(AttentionKind::Decode, r.data(), 16).ok());
  for (const AttentionTraceBlock &b : r) {
    CHECK(b.startNs > 0);
    CHECK(b.startNs <= b.firstTileNs);
    CHECK(b.firstTileNs <= b.loopEndNs);
    CHECK(b.loopEndNs <= b.endNs);
    CHECK(b.tiles > 0);
  }
#else
  // Without the option nothing is recorded, and the reader says why.
  const Status s = attentionTrace(AttentionKind::Decode, &one, 1);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("STRATA_ATTENTION_TRACE") != std::string::npos);
  CHECK_FALSE(attentionTraceClear(AttentionKind::Tree).ok());
#endif
}

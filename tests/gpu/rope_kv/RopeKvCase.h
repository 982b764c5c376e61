// One randomised rope_kv_write check: builds inputs for a case description,
// runs the GPU launcher and the CPU reference on identically poisoned
// outputs, and compares every element of every output.
#ifndef STRATA_TESTS_GPU_ROPE_KV_ROPEKVCASE_H
#define STRATA_TESTS_GPU_ROPE_KV_ROPEKVCASE_H

#include "kernels/common/RopeCosSin.h"
#include "kernels/common/RopeKvTypes.h"
#include "kernels/rope_kv/RopeKvWrite.h"

#include <cstdint>
#include <random>
#include <string>

namespace strata::kernels::test {

struct RopeKvCase {
  RopeKvVariant variant = RopeKvVariant::Packed;
  KvCacheLayout layout = KvCacheLayout::Paged;
  ActDType dtype = ActDType::BF16;
  RopePairingKind pairing = RopePairingKind::Neox;
  bool qkNorm = false;
  int64_t batch = 1;
  int64_t seq = 1;
  int32_t numQHeads = 1;
  int32_t numKvHeads = 1;
  int32_t headDim = 64;
  int32_t rotaryDim = 64;
  /// Give seqLens with random lengths (some tokens are padding).
  bool ragged = false;
  /// Continuous/tree: kvLens[b] is drawn from [minCached, maxCached].
  int64_t minCached = 0;
  int64_t maxCached = 40;
  /// Paged only.
  int64_t blockSize = 16;
  /// Paged only: K and V interleaved per block in one pool.
  bool combinedPool = false;
  /// Contiguous only: capacity beyond the largest slot written.
  int64_t extraCapacity = 3;
  /// One cos/sin table per sequence (each with its own theta).
  bool perSequenceTable = false;
  RopeScalingKind scaling = RopeScalingKind::None;
  /// Rows of the cos/sin table; 0: just enough for the positions drawn.
  int64_t tableRows = 0;
  /// Tree only: make one token's position id invalid (it must be skipped).
  bool invalidPosition = false;
  /// The GPU kernel under test (Auto: the launchers' own choice).
  RopeKvKernel kernel = RopeKvKernel::Auto;

  std::string describe() const;
};

/// Runs one case; reports through Catch2 CHECK/REQUIRE.
void runRopeKvCase(const RopeKvCase &c, std::mt19937_64 &rng);

} // namespace strata::kernels::test

#endif // STRATA_TESTS_GPU_ROPE_KV_ROPEKVCASE_H

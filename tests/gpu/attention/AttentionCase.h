// One GPU attention check: random q and cache (never zeros), a paged pool
// with shuffled block ids and unallocated (-1) table entries, outputs
// poisoned, the kernel and the CPU reference (kernels/cpu/AttentionRef.h)
// on the same inputs, every output row compared.
#ifndef STRATA_TESTS_GPU_ATTENTION_ATTENTIONCASE_H
#define STRATA_TESTS_GPU_ATTENTION_ATTENTIONCASE_H

#include "kernels/attention/Attention.h"
#include "kernels/attention/AttentionSwitches.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace strata::kernels::attention_test {

struct AttnCase {
  AttentionKind kind = AttentionKind::Decode;
  ActDType dtype = ActDType::BF16;
  int32_t numKvHeads = 2;
  int32_t group = 4;
  int32_t headDim = 128;
  int64_t blockSize = 16;
  int64_t window = 0;
  bool contiguous = false;
  /// Per sequence: queries this step and cached tokens before it.
  std::vector<int32_t> qLens;
  std::vector<int32_t> prefixLens;
  /// Tree only: parents per sequence (size qLens[b]); empty = random trees
  /// of depth <= maxDepth.
  std::vector<std::vector<int32_t>> parents;
  int32_t maxDepth = 8;
  /// Tree only: give query positions (prefix + depth) for the window.
  bool treePositions = false;
  /// 0: the launcher's choice.
  int32_t numSplits = 0;
  /// The launch's maxQLen when larger than every qLen (a launch sized for
  /// longer sequences than it gets; picks the 128-key-stage configuration
  /// of long prefills without a long CPU reference). 0: the longest qLen.
  int32_t maxQLenBound = 0;
  /// Paged only: the second and third page of each sequence have no
  /// storage on the GPU (table ids -1 and past the pool), which reads as
  /// zeros; the reference's table names a page of zeros there instead.
  bool holes = false;
  /// Capture the launch into a CUDA graph, then replay it with other
  /// lengths (shorter, up to maxKvLen) and fresh q.
  bool graphReplay = false;

  std::string describe() const;
};

/// Runs the case; REQUIREs agreement with the reference, and that every
/// launch of the case took the same path, one that fits the kind and the
/// split count. Returns the GPU output (for comparisons between
/// launchers) and, when `path` is given, the path the launches took.
std::vector<uint16_t> runAttnCase(const AttnCase &c, std::mt19937_64 &rng,
                                  AttentionPath *path = nullptr);

/// Seed of this run (STRATA_TEST_SEED or fresh), printed once.
std::mt19937_64 &attnTestRng();

} // namespace strata::kernels::attention_test

#endif // STRATA_TESTS_GPU_ATTENTION_ATTENTIONCASE_H

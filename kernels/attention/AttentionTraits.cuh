// The kernel configurations of the attention launchers, each a named
// traits struct: tile shape, warps, stages, loader threads and flags as
// compile-time constants, the invariants the kernels rely on asserted
// once here, and the host's launch shape (threads, shared memory, the
// partials' element size) derived from them. A kernel is instantiated on
// a traits struct and a dtype; the launchers pick a configuration by name
// (AttentionConfig, Attention.h), so no tile size is written twice.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONTRAITS_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONTRAITS_CUH

#include "kernels/attention/Attention.h"
#include "kernels/attention/AttentionDevice.cuh"

#include <algorithm>
#include <cstddef>

namespace strata::kernels::attention_detail {

/// Register split of the wgmma configurations (setmaxnreg): the block
/// starts with 65536 / threads registers per thread (rounded down to 8);
/// the producer keeps what address arithmetic needs and the compute warps
/// take the rest. QS: 128-key stages with Q in shared memory.
template <bool QS> constexpr int kProducerRegs = QS ? 24 : 40;
template <bool QS> constexpr int kComputeRegs = QS ? 240 : 232;

/// Loader threads per key row: 8 make a warp's copy write 128 contiguous
/// bytes of each of 4 key rows (fewer shared-memory wavefronts than 64
/// bytes of each of 8 rows with 4); 4 leave each thread fewer keys to look
/// up before its first copy.
enum LoadersPerRow : int { kLoaders4 = 4, kLoaders8 = 8 };

/// One kernel configuration. Each compute warp owns 16 query rows and a
/// KeysPerWarp-key slice of every shared-memory stage: WarpsM warps stack
/// over the rows, WarpsN warps split a stage's keys. Wgmma: warpgroup MMA
/// (sm_90a) with a producer warpgroup issuing the copies; else mma.sync,
/// every thread copying. QS (derived): Q read from shared memory.
template <AttentionConfig Id, int HeadDim, int WarpsM, int WarpsN,
          int KeysPerWarp, int Stages, bool Wgmma, int Loaders, bool Slivers>
struct AttentionTraits {
  static constexpr AttentionConfig kId = Id;
  static constexpr int kHeadDim = HeadDim;
  static constexpr int kWarpsM = WarpsM;
  static constexpr int kWarpsN = WarpsN;
  static constexpr int kKeysPerWarp = KeysPerWarp;
  static constexpr int kStages = Stages;
  static constexpr bool kWgmma = Wgmma;
  static constexpr int kLoadersPerRow = Loaders;
  /// Split items' new keys in 16-key slivers of the first splits
  /// (AttentionSlivers.cuh): a configuration of its own, so that launches
  /// without slivers keep their code.
  static constexpr bool kSlivers = Slivers;
  /// __launch_bounds__ minimum blocks per SM.
  static constexpr int kMinBlocks = 1;
  /// Blocks per SM when registers, not shared memory, decide (0: shared
  /// memory does): the wgmma block takes every register of its SM.
  static constexpr int kResident = Wgmma ? 1 : 0;
  /// 128-key wgmma stages read Q from shared memory (its 32 registers per
  /// thread of fragments are what the 128-key score tile needs); 64-key
  /// stages keep Q in registers, leaving shared memory's bandwidth to K
  /// and V.
  static constexpr bool kQInSmem = Wgmma && KeysPerWarp == 128;

  static constexpr int kComputeWarps = WarpsM * WarpsN;
  static constexpr int kComputeThreads = 32 * kComputeWarps;
  static constexpr int kProducers = Wgmma ? kProducerThreads : 0;
  static constexpr int kThreads = kComputeThreads + kProducers;
  /// Query rows of a block (a work item's row tile).
  static constexpr int kRows = 16 * WarpsM;
  static constexpr int kStageKeys = KeysPerWarp * WarpsN;
  /// K and V of one stage, T elements.
  static constexpr int kStageBytes = 2 * kStageKeys * HeadDim * 2;
  /// Bytes per element of the split partial outputs: T for rows items
  /// (AttentionMerge.cuh says why), fp32 for decode.
  static constexpr int kPartialBytes = Wgmma ? 2 : 4;

  /// Dynamic shared memory: the stages (wgmma: with room to align them to
  /// 1024 bytes, and with 128-key stages the Q tile after them), or the
  /// block's end if larger, which reuses the stages
  /// (AttentionEpilogue.cuh): rows merged in a cluster stage O as T with
  /// its log-sum-exps (kRowsStageStride), decode every warp's fp32 O and
  /// its m and l.
  static constexpr size_t kStageSmemBytes =
      size_t(Stages) * kStageBytes + (Wgmma ? 1024 : 0) +
      (kQInSmem ? size_t(kRows) * HeadDim * 2 : 0);
  static constexpr size_t kEpilogueSmemBytes =
      Wgmma ? size_t(kRows) * (HeadDim / 2 + 4 + 1) * 4
            : (size_t(kComputeWarps) * 16 * (HeadDim + 8) +
               2 * size_t(kComputeWarps) * 16) *
                  4;
  static constexpr size_t kSmemBytes =
      std::max(kStageSmemBytes, kEpilogueSmemBytes);

  static_assert(HeadDim == 64 || HeadDim == 128, "head dim 64 or 128");
  static_assert(!Wgmma || (WarpsM == 8 && WarpsN == 1 &&
                           (KeysPerWarp == 64 || KeysPerWarp == 128)),
                "wgmma takes two warpgroups of 64 rows sharing 64- or "
                "128-key stages (the turns and the register split assume "
                "two)");
  static_assert(Wgmma || WarpsM == 1,
                "mma.sync blocks are one warp row splitting the keys "
                "(decode's merge of the warps' softmax states)");
  static_assert(kRows <= kThreads, "a block's tokens fit its threads");
  static_assert(kStageBytes % 1024 == 0, "stages keep swizzle atoms aligned");
  static_assert(!Slivers || (Wgmma && !kQInSmem),
                "slivers are a 64-key-stage scheme");
  static_assert(!Wgmma ||
                    kProducers * kProducerRegs<kQInSmem> +
                            kComputeThreads * kComputeRegs<kQInSmem> <=
                        (65536 / kThreads) / 8 * 8 * kThreads,
                "the register split fits the block's registers");
  // Loader places (AttentionBlock.cuh): a thread's key rows are a pass
  // apart, a multiple of the 8-row swizzle period.
  static_assert((HeadDim / 8) % Loaders == 0, "whole chunks per loader");
  static_assert((Wgmma ? kProducers : kComputeThreads) / Loaders % 8 == 0,
                "rows of a loader share a swizzle");
  static_assert(kStageKeys % ((Wgmma ? kProducers : kComputeThreads) /
                              Loaders) ==
                    0,
                "a stage is whole passes");
  static_assert(!Wgmma || kRows * HeadDim / 4 % 256 == 0,
                "whole merge-kernel blocks per row tile");
  static_assert(kSmemBytes <= 227 * 1024, "fits an SM's shared memory");
};

/// Paged decode: 16 query rows (the q heads of one kv head), four warps
/// each taking its own slice of every stage's keys (16 of 64 at headDim
/// 128; 32 of 128 at headDim 64, which the same shared memory affords),
/// three stages deep, two blocks per SM; the warps' softmax states merge
/// through shared memory, split items in their last block.
template <int D>
struct DecodeTraits
    : AttentionTraits<AttentionConfig::PagedDecode, D, 1, 4, D == 64 ? 32 : 16,
                      3, false, kLoaders8, false> {};

/// Prefill and extend: 128 query rows on wgmma (two compute warpgroups
/// sharing each 64-key stage, a producer warpgroup), four stages deep, 8
/// loader threads per key row.
template <int D>
struct PrefillExtendTraits
    : AttentionTraits<AttentionConfig::PrefillExtend, D, 8, 1, 64, 4, true,
                      kLoaders8, false> {};

/// Split extends of at most 64 tokens a sequence over few cached stages:
/// PrefillExtendTraits with the new keys in slivers of the first splits.
template <int D>
struct ExtendSliversTraits
    : AttentionTraits<AttentionConfig::ExtendSlivers, D, 8, 1, 64, 4, true,
                      kLoaders8, true> {};

/// Tree verify: the prefill shape with 4 loader threads per key row (a
/// tree's split holds few tiles, and each loader then looks up fewer keys
/// before its first copy).
template <int D>
struct TreeVerifyTraits
    : AttentionTraits<AttentionConfig::TreeVerify, D, 8, 1, 64, 4, true,
                      kLoaders4, false> {};

/// Split tree verifies of at most 64 tokens a sequence over few cached
/// stages: TreeVerifyTraits with the new keys in slivers.
template <int D>
struct TreeVerifySliversTraits
    : AttentionTraits<AttentionConfig::TreeVerifySlivers, D, 8, 1, 64, 4, true,
                      kLoaders4, true> {};

/// Long prefills and extends at headDim 128 (maxQLen >= 4096): 128-key
/// stages three deep with Q in shared memory, 4 loader threads per key row
/// (the 24-register producer keeps fewer keys per thread); runs persistent
/// when its items outnumber the blocks the GPU holds.
struct LongPrefillExtendTraits
    : AttentionTraits<AttentionConfig::LongPrefillExtend, 128, 8, 1, 128, 3,
                      true, kLoaders4, false> {};

// A configuration with slivers shares its workspace plan with the one
// without them (the plan is made before the choice of slivers).
template <typename A, typename B>
constexpr bool kSameShape =
    A::kRows == B::kRows && A::kStageKeys == B::kStageKeys &&
    A::kStages == B::kStages && A::kThreads == B::kThreads &&
    A::kSmemBytes == B::kSmemBytes && A::kPartialBytes == B::kPartialBytes &&
    A::kResident == B::kResident && A::kWgmma == B::kWgmma;
static_assert(kSameShape<PrefillExtendTraits<64>, ExtendSliversTraits<64>> &&
              kSameShape<PrefillExtendTraits<128>, ExtendSliversTraits<128>> &&
              kSameShape<PrefillExtendTraits<64>, TreeVerifyTraits<64>> &&
              kSameShape<PrefillExtendTraits<128>, TreeVerifyTraits<128>> &&
              kSameShape<TreeVerifyTraits<64>, TreeVerifySliversTraits<64>> &&
              kSameShape<TreeVerifyTraits<128>, TreeVerifySliversTraits<128>>,
              "slivers and loader counts leave the launch shape alone");

/// The host's view of a configuration: what the split count, the
/// workspace and the launch need, all read from its traits.
struct Config {
  AttentionConfig id = AttentionConfig::PagedDecode;
  int headDim = 0;
  int threads = 0;
  int rows = 0;
  int stageKeys = 0;
  int stages = 0;
  int partialBytes = 0;
  int resident = 0; // blocks per SM when registers decide (0: smem does)
  bool wgmma = false;
  bool qInSmem = false; // 128-key stages: the persistent-capable shape
  size_t smemBytes = 0;

  template <typename Tr> static constexpr Config of() {
    Config c;
    c.id = Tr::kId;
    c.headDim = Tr::kHeadDim;
    c.threads = Tr::kThreads;
    c.rows = Tr::kRows;
    c.stageKeys = Tr::kStageKeys;
    c.stages = Tr::kStages;
    c.partialBytes = Tr::kPartialBytes;
    c.resident = Tr::kResident;
    c.wgmma = Tr::kWgmma;
    c.qInSmem = Tr::kQInSmem;
    c.smemBytes = Tr::kSmemBytes;
    return c;
  }
};

/// The configuration `id` at `headDim` (64 or 128). LongPrefillExtend
/// exists at headDim 128 only; configId never picks it at 64.
inline Config hostConfig(AttentionConfig id, int headDim) {
  const bool d64 = headDim == 64;
  switch (id) {
  case AttentionConfig::PagedDecode:
    return d64 ? Config::of<DecodeTraits<64>>()
               : Config::of<DecodeTraits<128>>();
  case AttentionConfig::PrefillExtend:
    return d64 ? Config::of<PrefillExtendTraits<64>>()
               : Config::of<PrefillExtendTraits<128>>();
  case AttentionConfig::ExtendSlivers:
    return d64 ? Config::of<ExtendSliversTraits<64>>()
               : Config::of<ExtendSliversTraits<128>>();
  case AttentionConfig::TreeVerify:
    return d64 ? Config::of<TreeVerifyTraits<64>>()
               : Config::of<TreeVerifyTraits<128>>();
  case AttentionConfig::TreeVerifySlivers:
    return d64 ? Config::of<TreeVerifySliversTraits<64>>()
               : Config::of<TreeVerifySliversTraits<128>>();
  case AttentionConfig::LongPrefillExtend:
    return Config::of<LongPrefillExtendTraits>();
  }
  return Config{};
}

} // namespace strata::kernels::attention_detail

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONTRAITS_CUH

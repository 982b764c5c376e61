// Per-block time marks of the attention kernels, read back on the host:
// a diagnostic for taking a launch's time apart, recorded only by a build
// with the CMake option STRATA_ATTENTION_TRACE (AttentionTrace.cuh holds
// the device side).
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONTRACE_H
#define STRATA_KERNELS_ATTENTION_ATTENTIONTRACE_H

#include "kernels/attention/Attention.h"

#include <cstdint>

namespace strata::kernels {

/// One block's time marks (AttentionTrace.cuh): %globaltimer ns at its
/// start, when its first key tile had landed, at the end of its main loop
/// and at its end; its SM and its key tiles. Blocks without rows (and, in
/// a rows launch, blocks without tiles) leave firstTileNs 0.
struct AttentionTraceBlock {
  uint64_t startNs = 0, firstTileNs = 0, loopEndNs = 0, endNs = 0;
  int32_t sm = 0, tiles = 0;
};
/// Blocks a launch records, by linear block index (x fastest).
constexpr int64_t kAttentionTraceBlocks = 8192;

/// Copies the records of the first `blocks` blocks of the last launch of
/// `kind` (decode, or the rows kernels of prefill, extend and tree, which
/// share one record) to `out` (host memory), after synchronising the
/// device. Only a build with the CMake option STRATA_ATTENTION_TRACE
/// records; any other build returns a failed Status saying so. Blocks that
/// did not run in that launch keep older records: clear them first with
/// attentionTraceClear.
Status attentionTrace(AttentionKind kind, AttentionTraceBlock *out,
                      int64_t blocks);
/// Zeroes the records of `kind`'s kernels (same builds as attentionTrace).
Status attentionTraceClear(AttentionKind kind);


} // namespace strata::kernels

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONTRACE_H

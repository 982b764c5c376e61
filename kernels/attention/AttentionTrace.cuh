// Per-block time marks of the attention kernel, for taking a launch's time
// apart: built only with the CMake option STRATA_ATTENTION_TRACE (a
// diagnostic build; the default build compiles every mark to nothing, and
// its code is the same as without them). Each block that has rows records,
// from %globaltimer (ns, one clock for the whole GPU): its start, when its
// first key tile had landed, the end of its main loop, the end of its
// epilogue (merges included), its SM and its tile count; the last launch's
// records are read with attentionTrace (AttentionTrace.h). The marks cost a
// few instructions and one store per block.
#ifndef STRATA_KERNELS_ATTENTION_ATTENTIONTRACE_CUH
#define STRATA_KERNELS_ATTENTION_ATTENTIONTRACE_CUH

#include "kernels/attention/AttentionTrace.h"

#ifdef STRATA_ATTENTION_TRACE
#include "kernels/common/Barriers.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace strata::kernels::attention_detail {

/// Records of the blocks of the last launch of each kernel translation
/// unit (decode, rows), by linear block index; blocks past the capacity
/// are not recorded.
static __device__ AttentionTraceBlock gAttentionTrace[kAttentionTraceBlocks];

__device__ __forceinline__ void attentionTraceStore(const uint64_t (&t)[3],
                                                    int tiles, int64_t blk) {
  if (blk < 0)
    blk =
        (int64_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (blk >= kAttentionTraceBlocks)
    return;
  uint32_t smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  AttentionTraceBlock &r = gAttentionTrace[blk];
  r.startNs = t[0];
  r.firstTileNs = t[1];
  r.loopEndNs = t[2];
  r.endNs = globalTimerNs();
  r.sm = int32_t(smid);
  r.tiles = tiles;
}

/// This translation unit's records: copied to `out` (host memory), or
/// zeroed when `out` is null.
static inline cudaError_t attentionTraceCopy(AttentionTraceBlock *out,
                                             int64_t blocks) {
  if (!out) {
    void *records = nullptr;
    if (cudaError_t e = cudaGetSymbolAddress(&records, gAttentionTrace);
        e != cudaSuccess)
      return e;
    return cudaMemset(records, 0, sizeof(gAttentionTrace));
  }
  return cudaMemcpyFromSymbol(out, gAttentionTrace,
                              size_t(blocks) * sizeof(AttentionTraceBlock));
}

} // namespace strata::kernels::attention_detail

// The block's marks, from its start.
#define STRATA_ATTN_TRACE_BEGIN                                                \
  uint64_t traceMarks_[3] = {globalTimerNs(), 0, 0}
// Mark i (1: first tile landed, 2: main loop done) where `cond` holds.
#define STRATA_ATTN_TRACE_MARK(cond, i)                                        \
  do {                                                                         \
    if (cond)                                                                  \
      traceMarks_[i] = globalTimerNs();                                        \
  } while (0)
// A persistent block's item starts where `cond` holds: its marks count
// from here.
#define STRATA_ATTN_TRACE_RESTART(cond) STRATA_ATTN_TRACE_MARK(cond, 0)
// The block's record, by the thread `who`, at record `at` (a persistent
// block's item: the index its block would have had in a grid of one block
// per item), or at its own linear index where `at` < 0.
#define STRATA_ATTN_TRACE_END(who, tiles, at)                                  \
  do {                                                                         \
    if (who)                                                                   \
      attentionTraceStore(traceMarks_, tiles, at);                             \
  } while (0)
#else
#define STRATA_ATTN_TRACE_BEGIN
#define STRATA_ATTN_TRACE_MARK(cond, i)
#define STRATA_ATTN_TRACE_RESTART(cond)
#define STRATA_ATTN_TRACE_END(who, tiles, at)
#endif

#endif // STRATA_KERNELS_ATTENTION_ATTENTIONTRACE_CUH

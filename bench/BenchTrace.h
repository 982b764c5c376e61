// Prints the per-block time marks of the last attention launch (a build
// with -DSTRATA_ATTENTION_TRACE=ON; AttentionTrace.cuh): how a launch's
// time divides into the blocks' starts, their first tiles, main loops and
// ends, how their ends spread, and how long an SM stays idle between the
// blocks it runs one after another.
#ifndef STRATA_BENCH_BENCHTRACE_H
#define STRATA_BENCH_BENCHTRACE_H

#include "kernels/attention/AttentionTrace.h"

#include <cstdint>
#include <string>

namespace strata::bench {

/// Reads the records of the first `blocks` blocks of the last launch of
/// `kind` and prints their summary under the heading `what`; prints why
/// when there are none.
void printAttentionTrace(kernels::AttentionKind kind, int64_t blocks,
                         const std::string &what);

} // namespace strata::bench

#endif // STRATA_BENCH_BENCHTRACE_H

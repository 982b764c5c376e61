// The benchmark groups of strata-bench-kernels; each kernel topic adds one
// function here and one call in BenchMain.cpp.
#ifndef STRATA_BENCH_BENCHCASES_H
#define STRATA_BENCH_BENCHCASES_H

#include "bench/BenchUtil.h"

#include <string>

namespace strata::bench {

/// The machine's copy bandwidth right now, to read the other rows against.
void runReferenceBenches(const BenchOptions &options, BenchReport &report);

void runRopeKvBenches(const BenchOptions &options, BenchReport &report);

} // namespace strata::bench

#endif // STRATA_BENCH_BENCHCASES_H

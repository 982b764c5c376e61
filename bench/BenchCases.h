// The benchmark groups of strata-bench-kernels; each kernel topic adds one
// function here and one call in BenchMain.cpp.
#ifndef STRATA_BENCH_BENCHCASES_H
#define STRATA_BENCH_BENCHCASES_H

#include "bench/BenchUtil.h"

#include <string>

namespace strata::bench {

struct BenchOptions {
  std::string filter;
  bool quick = false;
  bool wants(const std::string &name) const {
    return filter.empty() || name.find(filter) != std::string::npos;
  }
  int iters(int full) const { return quick ? 10 : full; }
};

/// The machine's copy bandwidth right now, to read the other rows against.
void runReferenceBenches(const BenchOptions &options, BenchReport &report);

void runRopeKvBenches(const BenchOptions &options, BenchReport &report);

} // namespace strata::bench

#endif // STRATA_BENCH_BENCHCASES_H

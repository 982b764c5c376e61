// strata-bench-kernels: runs the kernel benchmarks, prints one markdown
// table and optionally writes the same rows as JSON.
//
//   strata-bench-kernels [--json FILE] [--filter TEXT] [--quick]
//
// --filter keeps the cases whose name contains TEXT; --quick runs fewer
// iterations (for smoke tests, not for figures).
#include "bench/BenchCases.h"
#include "bench/BenchUtil.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace strata::bench;

int main(int argc, char **argv) {
  BenchOptions options;
  std::string device;
  if (int code = startBench(argc, argv, options, device))
    return code;

  BenchReport report;
  runReferenceBenches(options, report);
  runRopeKvBenches(options, report);

  return finishBench(report, options, device);
}

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
  std::string jsonPath;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--json" || arg == "--filter") && i + 1 < argc) {
      (arg == "--json" ? jsonPath : options.filter) = argv[++i];
    } else if (arg == "--quick") {
      options.quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--json FILE] [--filter TEXT] [--quick]\n",
                   argv[0]);
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "error: no CUDA device\n");
    return 1;
  }
  std::string device = deviceDescription();
  std::printf("device: %s\n\n", device.c_str());

  BenchReport report;
  runReferenceBenches(options, report);
  runRopeKvBenches(options, report);

  std::printf("\n");
  report.printMarkdown();
  if (!jsonPath.empty() && !report.writeJson(jsonPath, device))
    return 1;
  return 0;
}

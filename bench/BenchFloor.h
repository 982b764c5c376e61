// Launch floors for the attention benchmark: what an empty kernel and a
// kernel that only streams a case's bytes take, timed like the cases
// (BenchFloor.cu).
#ifndef STRATA_BENCH_BENCHFLOOR_H
#define STRATA_BENCH_BENCHFLOOR_H

#include "bench/BenchUtil.h"

#include <string>
#include <vector>

namespace strata::bench {

/// Bytes a case must read (its "bytes" column), with its names for the row,
/// and the decode it stands for: `batch` sequences of `context` cached keys
/// over `kvHeads` heads of 128 (bf16), cut into `splits` per head.
struct FloorCase {
  double bytes;
  std::string shape; ///< the row's shape column
  std::string what;  ///< the case, for the row's note
  int batch = 0, context = 0, kvHeads = 0, splits = 0;
};

/// Adds rows "floor: empty kernel", and per case "floor: stream read",
/// "floor: 4 KB chunks read" (the same bytes in shuffled 4 KB chunks) and
/// "floor: staged cp.async|bulk" (those chunks through shared-memory
/// stages) and "floor: decode's pages of 16|64 slots" (the blocks, pages
/// and addresses of the case's decode, through the same stages), each with
/// an events row and a graph row (addEventAndGraphRows).
/// The filter sees a case's row name and shape ("floor: stream read decode
/// b=16 ctx=4096").
void addLaunchFloorRows(const BenchOptions &options, BenchReport &report,
                        const std::vector<FloorCase> &cases);

} // namespace strata::bench

#endif // STRATA_BENCH_BENCHFLOOR_H

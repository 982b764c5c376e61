#include "bench/BenchTrace.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace strata::bench {

using kernels::AttentionTraceBlock;

namespace {

/// "min p10 median p90 max" of `v` (sorted here), in us.
void printQuantiles(const char *name, std::vector<double> v) {
  if (v.empty())
    return;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[size_t(q * double(v.size() - 1))]; };
  std::printf("  %-22s %8.2f %8.2f %8.2f %8.2f %8.2f\n", name, v.front(),
              at(0.1), at(0.5), at(0.9), v.back());
}

} // namespace

void printAttentionTrace(kernels::AttentionKind kind, int64_t blocks,
                         const std::string &what) {
  blocks = std::min(blocks, kernels::kAttentionTraceBlocks);
  std::vector<AttentionTraceBlock> r(size_t(std::max<int64_t>(blocks, 0)));
  if (kernels::Status s = kernels::attentionTrace(kind, r.data(), blocks); !s) {
    std::printf("trace %s: %s\n", what.c_str(), s.message().c_str());
    return;
  }
  // Blocks without rows leave no record (all zero).
  r.erase(std::remove_if(
              r.begin(), r.end(),
              [](const AttentionTraceBlock &b) { return b.startNs == 0; }),
          r.end());
  if (r.empty()) {
    std::printf("trace %s: no block recorded\n", what.c_str());
    return;
  }
  uint64_t t0 = r.front().startNs;
  for (const AttentionTraceBlock &b : r)
    t0 = std::min(t0, b.startNs);
  std::vector<double> start, first, loop, end, done, tiles;
  std::map<int32_t, double> smDone;
  for (const AttentionTraceBlock &b : r) {
    start.push_back((b.startNs - t0) / 1e3);
    if (b.firstTileNs) {
      first.push_back((b.firstTileNs - b.startNs) / 1e3);
      loop.push_back((b.loopEndNs - b.firstTileNs) / 1e3);
      end.push_back((b.endNs - b.loopEndNs) / 1e3);
    }
    done.push_back((b.endNs - t0) / 1e3);
    tiles.push_back(b.tiles);
    double &d = smDone[b.sm];
    d = std::max(d, (b.endNs - t0) / 1e3);
  }
  std::vector<double> sms;
  for (const auto &kv : smDone)
    sms.push_back(kv.second);
  // Where an SM runs blocks one after another (more blocks than fit at
  // once), the time from one block's end to the next one's start there.
  std::sort(r.begin(), r.end(),
            [](const AttentionTraceBlock &a, const AttentionTraceBlock &b) {
              return a.sm != b.sm ? a.sm < b.sm : a.startNs < b.startNs;
            });
  std::vector<double> gaps;
  for (size_t i = 1; i < r.size(); ++i)
    if (r[i].sm == r[i - 1].sm && r[i].startNs >= r[i - 1].endNs)
      gaps.push_back((r[i].startNs - r[i - 1].endNs) / 1e3);
  std::printf("trace %s: %zu blocks on %zu SMs; us from the first block's "
              "start\n  %-22s %8s %8s %8s %8s %8s\n",
              what.c_str(), r.size(), sms.size(), "", "min", "p10", "median",
              "p90", "max");
  printQuantiles("block start", start);
  printQuantiles("first tile landed", first);
  printQuantiles("rest of main loop", loop);
  printQuantiles("block end", end);
  printQuantiles("block done", done);
  printQuantiles("SM done", sms);
  printQuantiles("SM idle between blocks", gaps);
  printQuantiles("tiles", tiles);
}

} // namespace strata::bench

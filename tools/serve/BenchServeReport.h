// What `strata bench-serve` reports: the requests that completed and
// failed, throughput over the run, and the mean, median and 99th percentile
// of TTFT, TPOT, ITL and end-to-end latency, as a markdown table or one
// JSON object.
#ifndef STRATA_TOOLS_SERVE_BENCHSERVEREPORT_H
#define STRATA_TOOLS_SERVE_BENCHSERVEREPORT_H

#include "tools/serve/BenchServe.h"
#include "tools/serve/BenchServeLoad.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace strata::serve {

/// The `p`th percentile (0 to 100) of sorted values, interpolated linearly
/// between the two nearest ranks (numpy's default, which vLLM's figures
/// use). `sorted` must not be empty.
double percentile(const std::vector<double> &sorted, double p);

/// Mean, median and 99th percentile; all 0 with count 0 for no values.
struct Distribution {
  size_t count = 0;
  double mean = 0;
  double median = 0;
  double p99 = 0;
};
Distribution distributionOf(std::vector<double> values);

struct BenchServeReport {
  std::string tool;    ///< "strata bench-serve" or "strata-bench"
  std::string version; ///< the tool's
  std::string model;   ///< the served model's id
  BenchServeSettings settings;
  int64_t completed = 0;
  int64_t failed = 0;
  /// The message of the first request (in the order they were planned)
  /// that failed.
  std::string firstError;
  double seconds = 0;       ///< the run's duration
  int64_t inputTokens = 0;  ///< usage.prompt_tokens of completed requests
  int64_t outputTokens = 0; ///< usage.completion_tokens of completed ones
  /// In milliseconds, over completed requests. TPOT is (latency - TTFT) /
  /// (output tokens - 1) of each request with at least two output tokens;
  /// ITL every gap between two chunks carrying text.
  Distribution ttft, tpot, itl, e2el;

  double requestThroughput() const;
  double inputThroughput() const;
  double outputThroughput() const;
};

/// The report of a measured run.
BenchServeReport summarize(const BenchServeSettings &settings,
                           const LoadResult &run);

void printReportMarkdown(FILE *out, const BenchServeReport &report);
void printReportJson(FILE *out, const BenchServeReport &report);

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_BENCHSERVEREPORT_H

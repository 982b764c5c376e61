// What `strata bench` / `strata-bench` measured and how it is printed: a
// markdown table (one row per test and batch size, tokens/s as mean ±
// standard deviation) or JSON holding every run's raw figures and the
// metadata needed to compare runs across machines and builds.
#ifndef STRATA_TOOLS_COMMON_BENCHREPORT_H
#define STRATA_TOOLS_COMMON_BENCHREPORT_H

#include "tools/common/DecodeRoofline.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace strata::tools {

/// Mean and sample standard deviation (n - 1; 0 for fewer than two values).
struct Stats {
  double mean = 0;
  double stddev = 0;
};
Stats meanAndStddev(const std::vector<double> &values);

/// One test (ppN or tgN) at one batch size, over its timed repetitions.
struct BenchResult {
  std::string test; ///< "pp512", "tg128", "tg128@d512"
  bool decode = false;
  int64_t batch = 1;
  /// Tokens each run processes: pp B*N prompt tokens, tg B*steps.
  int64_t tokensPerRun = 0;
  /// tg: decode steps per run (each feeds one token of every sequence).
  int64_t stepsPerRun = 0;
  std::vector<double> seconds; ///< one per timed run
  /// tg only: each timed run's prefill of the prompts before its decode
  /// steps (with --depth, the offline engine's prompt phase).
  std::vector<double> promptSeconds;
  /// tg only: the cached context a step reads, averaged over the steps,
  /// and the bytes a step must move at that context.
  double meanContext = 0;
  DecodeStepBytes stepBytes;
  /// tg only: the activations the step's launches read and write
  /// (decodeActivationBytes), which fusion changes; not part of stepBytes.
  double activationBytes = 0;

  std::vector<double> tokensPerSecond() const;
  /// tg: mean seconds per decode step.
  double stepSeconds() const;
  /// tg: the ideal step time at `bandwidthGBs` over the measured one.
  double rooflineFraction(double bandwidthGBs) const;
};

/// Where and on what the benchmark ran; printed above the table and
/// stored in the JSON.
struct BenchMetadata {
  std::string tool;    ///< "strata bench" or "strata-bench"
  std::string version; ///< the tool's version
  std::string host;    ///< host name
  std::string cpu;     ///< CPU model, when the system says
  unsigned cpuThreads = 0;
  std::string device;     ///< "cpu" or "cuda"
  std::string deviceName; ///< the GPU's or the CPU's name
  std::string deviceWhy;  ///< why this device ("--device", "default: ...")
  bool cudaGraphs = false;
  bool dependentLaunch = false;
  bool decodeGemv = false;
  std::string model;
  std::string planSource; ///< the plan file, or the model it was compiled from
  int64_t planMaxTokens = 0, planMaxBatch = 0;
  std::vector<std::string> programs;
  std::string fusions; ///< plan::describeFusions
  std::vector<std::string> fusionsOn, fusionsOff;
  std::string weights;        ///< "random (seed 42)" or the checkpoint path
  double weightBytes = 0;     ///< read by each decode step
  double planWeightBytes = 0; ///< all weights the plan lists
  int64_t promptTokens = 0, genTokens = 0, depth = 1, repetitions = 0;
  std::vector<int64_t> batches;
  double bandwidthGBs = kH200ReadBandwidthGBs;
};

void printMarkdown(FILE *out, const BenchMetadata &meta,
                   const std::vector<BenchResult> &results);

/// The lines above the table: model, plan, fusions, device, runs and
/// roofline, and a blank line.
void printMarkdownHeader(FILE *out, const BenchMetadata &meta);

/// `rows` as a markdown table, the first row its header: the first column
/// left-aligned, the others right-aligned, each as wide as its widest
/// cell.
void printMarkdownTable(FILE *out,
                        const std::vector<std::vector<std::string>> &rows);
void printJson(FILE *out, const BenchMetadata &meta,
               const std::vector<BenchResult> &results);

} // namespace strata::tools

#endif // STRATA_TOOLS_COMMON_BENCHREPORT_H

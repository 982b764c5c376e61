// Small shared pieces of the kernel benchmarks: CUDA-event timing (median of
// many runs after warm-up, optionally through a CUDA graph), rotating input
// sets, and a report printed as a markdown table and written as JSON.
//
// Every case states the bytes it must move (each input read once, each
// output written once) and the ceiling it is held against: 4.25 TB/s for
// kernels that read and write (a device-to-device copy, read + write
// counted) and 4.14 TB/s for read-only kernels, both measured on the H200.
#ifndef STRATA_BENCH_BENCHUTIL_H
#define STRATA_BENCH_BENCHUTIL_H

#include "kernels/common/DeviceBuffer.h"
#include "kernels/common/Status.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::bench {

constexpr double kCopyCeilingGBs = 4250.0;
constexpr double kReadCeilingGBs = 4140.0;

/// Exits with a message when a CUDA call fails (benchmarks have no caller to
/// hand an error to).
void checkCuda(cudaError_t err, const char *what);
#define BENCH_CUDA(expr) ::strata::bench::checkCuda((expr), #expr)

/// Exits with its message when a launcher's Status is a failure.
void checkStatus(const kernels::Status &status);

/// The Check of kernels::BasicDeviceBuffer in a benchmark: a CUDA failure
/// ends the run through checkCuda.
struct ExitOnCudaError {
  static void check(cudaError_t err, const char *what) { checkCuda(err, what); }
};

template <typename E>
using DeviceBuffer = kernels::BasicDeviceBuffer<E, ExitOnCudaError>;

struct BenchRow {
  std::string name;
  std::string shape;
  double bytes = 0;
  double us = 0;
  /// "copy" (4.25 TB/s) or "read" (4.14 TB/s).
  std::string ceiling = "copy";
  /// Free text: the target and how the time was taken.
  std::string note;

  double gbs() const { return us > 0 ? bytes / us / 1e3 : 0; }
  double fraction() const {
    return gbs() / (ceiling == "read" ? kReadCeilingGBs : kCopyCeilingGBs);
  }
};

class BenchReport {
public:
  void add(BenchRow row);
  void printMarkdown() const;
  /// Returns false (after printing why) when the file cannot be written.
  bool writeJson(const std::string &path, const std::string &device) const;
  const std::vector<BenchRow> &rows() const { return rows_; }

private:
  std::vector<BenchRow> rows_;
};

/// Median time in microseconds of `run(i)` (which enqueues work on
/// `stream`), each run bracketed by its own pair of events, after `warmup`
/// untimed runs. `i` counts all runs, so callers can rotate input sets.
/// hostUs (optional): the host's time per timed run to enqueue it with its
/// events; where it nears the median, the host, not the GPU, sets the time.
double medianUs(cudaStream_t stream, int warmup, int iters,
                const std::function<void(int)> &run, double *hostUs = nullptr);

/// Median time per call in microseconds of `perGraph` calls of `run(i)`
/// captured into one CUDA graph and replayed `iters` times: launch gaps
/// shrink to what a graph-replaying runtime sees.
double graphMedianUsPerCall(cudaStream_t stream, int perGraph, int iters,
                            const std::function<void(int)> &run);

/// Adds `row` twice: timed as one launch between two events (median of
/// `eventIters` after `sets` warm-up runs; launch latency included), and
/// per call of back-to-back calls replayed from a CUDA graph (what a
/// graph-replaying runtime sees between its kernels; max(sets, 20) calls
/// per graph, median of `graphIters` replays). `run(set)` enqueues one call
/// on input set `set` of `sets`; the notes get " (events, one launch)" and
/// " (graph, per call)".
void addEventAndGraphRows(BenchReport &report, cudaStream_t stream, int sets,
                          int eventIters, int graphIters, BenchRow row,
                          const std::function<void(int)> &run);

/// Input sets needed so that rotating through them touches at least
/// `minBytes` (default: about ten times the 50 MB L2), hence no set is still
/// in L2 when it comes round again.
int rotatingSets(double bytesPerSet, double minBytes = 512.0 * 1024 * 1024);

/// "NVIDIA H200 (132 SMs, 141 GB)" for the current device.
std::string deviceDescription();

/// The command line every benchmark binary takes:
///   [--json FILE] [--filter TEXT] [--quick]
/// --filter keeps the cases whose name contains TEXT; --quick runs fewer
/// iterations (for smoke tests, not for figures).
struct BenchOptions {
  std::string filter;
  std::string jsonPath;
  bool quick = false;
  bool wants(const std::string &name) const {
    return filter.empty() || name.find(filter) != std::string::npos;
  }
  int iters(int full) const { return quick ? 10 : full; }
};

/// Parses the command line and checks that a CUDA device exists, printing
/// it. Returns 0 to go on, else the exit code (2: bad arguments, 1: no
/// device) after saying why. `device` receives deviceDescription().
int startBench(int argc, char **argv, BenchOptions &options,
               std::string &device);

/// Prints the report's table and writes its JSON when asked; the exit code.
int finishBench(const BenchReport &report, const BenchOptions &options,
                const std::string &device);

} // namespace strata::bench

#endif // STRATA_BENCH_BENCHUTIL_H

#include "bench/BenchUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace strata::bench {

void checkCuda(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return;
  std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(err));
  std::exit(1);
}

void checkStatus(const kernels::Status &status) {
  if (status)
    return;
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  std::exit(1);
}

void BenchReport::add(BenchRow row) { rows_.push_back(std::move(row)); }

void BenchReport::printMarkdown() const {
  std::printf("| case | shape | MB moved | time (us) | GB/s | ceiling | "
              "of ceiling | note |\n");
  std::printf("|---|---|---:|---:|---:|---|---:|---|\n");
  for (const BenchRow &r : rows_)
    std::printf("| %s | %s | %.2f | %.2f | %.0f | %s %.2f TB/s | %.1f%% | %s "
                "|\n",
                r.name.c_str(), r.shape.c_str(), r.bytes / 1e6, r.us, r.gbs(),
                r.ceiling.c_str(),
                (r.ceiling == "read" ? kReadCeilingGBs : kCopyCeilingGBs) / 1e3,
                100.0 * r.fraction(), r.note.c_str());
}

namespace {
/// `v` rounded to `decimals` places: the JSON keeps the precision the
/// table shows, not the timer's noise digits.
double rounded(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}
} // namespace

bool BenchReport::writeJson(const std::string &path,
                            const std::string &device) const {
  using Json = nlohmann::ordered_json;
  Json doc = {{"device", device}, {"rows", Json::array()}};
  for (const BenchRow &r : rows_)
    doc["rows"].push_back({{"name", r.name},
                           {"shape", r.shape},
                           {"ceiling", r.ceiling},
                           {"bytes", rounded(r.bytes, 0)},
                           {"us", rounded(r.us, 3)},
                           {"gbs", rounded(r.gbs(), 1)},
                           {"fraction_of_ceiling", rounded(r.fraction(), 4)},
                           {"note", r.note}});
  std::ofstream os(path);
  if (!os) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return false;
  }
  os << doc.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  return bool(os);
}

namespace {
double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
}
} // namespace

double medianUs(cudaStream_t stream, int warmup, int iters,
                const std::function<void(int)> &run, double *hostUs) {
  for (int i = 0; i < warmup; ++i)
    run(i);
  std::vector<cudaEvent_t> events(2 * iters);
  for (auto &e : events)
    BENCH_CUDA(cudaEventCreate(&e));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    BENCH_CUDA(cudaEventRecord(events[2 * i], stream));
    run(warmup + i);
    BENCH_CUDA(cudaEventRecord(events[2 * i + 1], stream));
  }
  if (hostUs)
    *hostUs = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - start)
                  .count() /
              iters;
  BENCH_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> ms(iters);
  for (int i = 0; i < iters; ++i)
    BENCH_CUDA(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]));
  for (auto &e : events)
    BENCH_CUDA(cudaEventDestroy(e));
  return median(ms) * 1e3;
}

double graphMedianUsPerCall(cudaStream_t stream, int perGraph, int iters,
                            const std::function<void(int)> &run) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BENCH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < perGraph; ++i)
    run(i);
  BENCH_CUDA(cudaStreamEndCapture(stream, &graph));
  BENCH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  double us = medianUs(stream, 3, iters,
                       [&](int) { BENCH_CUDA(cudaGraphLaunch(exec, stream)); });
  BENCH_CUDA(cudaGraphExecDestroy(exec));
  BENCH_CUDA(cudaGraphDestroy(graph));
  return us / perGraph;
}

void addEventAndGraphRows(BenchReport &report, cudaStream_t stream, int sets,
                          int eventIters, int graphIters, BenchRow row,
                          const std::function<void(int)> &run) {
  auto rotated = [&](int i) { run(i % sets); };
  BenchRow events = row;
  events.us = medianUs(stream, sets, eventIters, rotated);
  events.note += " (events, one launch)";
  report.add(events);
  row.us =
      graphMedianUsPerCall(stream, std::max(sets, 20), graphIters, rotated);
  row.note += " (graph, per call)";
  report.add(row);
}

int rotatingSets(double bytesPerSet, double minBytes) {
  return std::max(2, int(std::ceil(minBytes / bytesPerSet)));
}

std::string deviceDescription() {
  int dev = 0;
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDevice(&dev));
  BENCH_CUDA(cudaGetDeviceProperties(&prop, dev));
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%s (%d SMs, %.0f GB, L2 %d MB)", prop.name,
                prop.multiProcessorCount, prop.totalGlobalMem / 1e9,
                prop.l2CacheSize >> 20);
  return buf;
}

int startBench(int argc, char **argv, BenchOptions &options,
               std::string &device) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--json" || arg == "--filter") && i + 1 < argc) {
      (arg == "--json" ? options.jsonPath : options.filter) = argv[++i];
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
  device = deviceDescription();
  std::printf("device: %s\n\n", device.c_str());
  return 0;
}

int finishBench(const BenchReport &report, const BenchOptions &options,
                const std::string &device) {
  std::printf("\n");
  report.printMarkdown();
  if (!options.jsonPath.empty() && !report.writeJson(options.jsonPath, device))
    return 1;
  return 0;
}

} // namespace strata::bench

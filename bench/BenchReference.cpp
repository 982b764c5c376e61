// Reference rows: what a plain device-to-device copy reaches on this device
// right now, so the kernel rows can be read against the machine as found.
#include "bench/BenchCases.h"

namespace strata::bench {

void runReferenceBenches(const BenchOptions &options, BenchReport &report) {
  if (!options.wants("copy"))
    return;
  const size_t bytes = size_t(1) << 30; // 1 GiB each way, far beyond L2
  void *src = nullptr, *dst = nullptr;
  BENCH_CUDA(cudaMalloc(&src, bytes));
  BENCH_CUDA(cudaMalloc(&dst, bytes));
  BENCH_CUDA(cudaMemset(src, 0x5a, bytes));
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  double us = medianUs(stream, 3, options.iters(30), [&](int) {
    BENCH_CUDA(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  BenchRow row;
  row.name = "copy (cudaMemcpy D2D)";
  row.shape = "1 GiB";
  row.bytes = 2.0 * bytes; // read + write
  row.us = us;
  row.note = "the machine's copy bandwidth now";
  report.add(row);
  BENCH_CUDA(cudaStreamDestroy(stream));
  BENCH_CUDA(cudaFree(src));
  BENCH_CUDA(cudaFree(dst));
}

} // namespace strata::bench

// strata-bench-lightning: lightning attention prefill and decode on the
// shapes of a MiniMax-Text-01-style linear layer (64 heads, headDim 128).
// Prints a markdown table and optionally writes the rows as JSON.
//
//   strata-bench-lightning [--json FILE] [--filter TEXT] [--quick]
//
// Bytes counted: q, k, v read once, out written once, each named state slot
// read and written once (fp32 [headDim, headDim] per head). The ceiling is
// the measured copy bandwidth (read + write). Prefill also reports its
// tensor-core rate against the ~790 TFLOP/s bf16 GEMM ceiling; its flops are
// those of the chunked algorithm (per 64-token chunk and head: scores,
// scores x V, q x state and the state update).
#include "bench/BenchFill.cuh"
#include "bench/BenchUtil.h"
#include "kernels/linear_attention/DecayRange.h"
#include "kernels/linear_attention/LightningAttention.h"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace strata::bench;
using namespace strata::kernels;

namespace {

constexpr double kBf16TflopCeiling = 790.0;

__global__ void fillConstant(float *p, int64_t n, float value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = value * ((i % 7) - 3);
}

/// Prefill of `batch` sequences of `len` tokens each.
void benchPrefill(const BenchOptions &o, BenchReport &report, int batch,
                  int len, int heads, int hd, int tile, const char *target) {
  std::string name = "lightning_prefill bf16 tile=" +
                     (tile ? std::to_string(tile) : std::string("auto"));
  if (!o.wants(name))
    return;
  const int64_t tokens = int64_t(batch) * len;
  const int64_t elems = tokens * heads * hd;
  DeviceBuffer<__nv_bfloat16> q(elems), k(elems), v(elems), out(elems);
  DeviceBuffer<float> state(int64_t(batch) * heads * hd * hd), decay(heads);
  DeviceBuffer<int32_t> slots(batch), cu(batch + 1);
  fillNormalBf16<<<1024, 256>>>(q.get(), elems, 1);
  fillNormalBf16<<<1024, 256>>>(k.get(), elems, 2);
  fillNormalBf16<<<1024, 256>>>(v.get(), elems, 3);
  fillConstant<<<1024, 256>>>(state.get(), int64_t(batch) * heads * hd * hd,
                              0.5f);
  BENCH_CUDA(cudaGetLastError());
  std::vector<int32_t> hostSlots(batch), hostCu(batch + 1);
  for (int b = 0; b <= batch; ++b) {
    if (b < batch)
      hostSlots[b] = b;
    hostCu[b] = b * len;
  }
  std::vector<float> rates = logSpacedDecayRates(heads);
  slots.upload(hostSlots);
  cu.upload(hostCu);
  decay.upload(rates);

  LightningDims dims;
  dims.batch = batch;
  dims.numHeads = heads;
  dims.headDim = hd;
  dims.numSlots = batch;
  dims.dtype = ActDType::BF16;
  LightningTensors t{q.get(),     k.get(),     v.get(),     out.get(),
                     state.get(), slots.get(), decay.get(), cu.get()};
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  // One set of inputs is several times the L2 at the target shape.
  double us = medianUs(stream, 3, o.quick ? 5 : 30, [&](int) {
    checkStatus(lightningPrefillTiled(dims, t, tile, stream));
  });
  BENCH_CUDA(cudaStreamDestroy(stream));

  double bytes = 4.0 * elems * 2 + 2.0 * batch * heads * hd * hd * 4;
  double chunks = double(batch) * heads * std::ceil(len / 64.0);
  double flops = chunks * (4.0 * 64 * 64 * hd + 4.0 * 64 * hd * hd);
  double tflops = flops / us / 1e6;
  char note[256];
  std::snprintf(note, sizeof(note),
                "%.0f TFLOP/s (%.1f%% of %.0f); %s; events, median", tflops,
                100.0 * tflops / kBf16TflopCeiling, kBf16TflopCeiling, target);
  char shape[128];
  std::snprintf(shape, sizeof(shape), "b=%d len=%d H=%d d=%d", batch, len,
                heads, hd);
  report.add({name, shape, bytes, us, "copy", note});
}

/// One decode step for `batch` sequences; the named slots rotate through
/// enough of the state tensor that none is still in L2 when it comes back.
void benchDecode(const BenchOptions &o, BenchReport &report, int batch,
                 int heads, int hd, bool graph, const char *target,
                 int cols = 0, bool prefetch = false) {
  std::string name =
      std::string("lightning_decode bf16") + (graph ? " graph" : "") +
      (cols ? " cols=" + std::to_string(cols) + (prefetch ? " pf256" : "")
            : std::string());
  if (!o.wants(name))
    return;
  const double stateBytes = double(batch) * heads * hd * hd * 4;
  const int sets = rotatingSets(2 * stateBytes);
  const int64_t numSlots = int64_t(batch) * sets;
  const int64_t elems = int64_t(batch) * heads * hd;
  DeviceBuffer<__nv_bfloat16> q(elems), k(elems), v(elems), out(elems);
  DeviceBuffer<float> state(numSlots * heads * hd * hd), decay(heads);
  DeviceBuffer<int32_t> slots(numSlots);
  fillNormalBf16<<<1024, 256>>>(q.get(), elems, 4);
  fillNormalBf16<<<1024, 256>>>(k.get(), elems, 5);
  fillNormalBf16<<<1024, 256>>>(v.get(), elems, 6);
  fillConstant<<<4096, 256>>>(state.get(), numSlots * heads * hd * hd, 0.25f);
  BENCH_CUDA(cudaGetLastError());
  std::vector<int32_t> hostSlots(numSlots);
  for (int64_t i = 0; i < numSlots; ++i)
    hostSlots[i] = static_cast<int32_t>(i);
  std::vector<float> rates = logSpacedDecayRates(heads);
  slots.upload(hostSlots);
  decay.upload(rates);

  LightningDims dims;
  dims.batch = batch;
  dims.numHeads = heads;
  dims.headDim = hd;
  dims.numSlots = numSlots;
  dims.dtype = ActDType::BF16;
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  auto run = [&](int i) {
    LightningTensors t{q.get(),     k.get(),
                       v.get(),     out.get(),
                       state.get(), slots.get() + int64_t(i % sets) * batch,
                       decay.get(), nullptr};
    checkStatus(lightningDecodeTiled(dims, t, cols, prefetch, stream));
  };
  double us = graph ? graphMedianUsPerCall(stream, std::max(sets, 20),
                                           o.quick ? 5 : 50, run)
                    : medianUs(stream, sets, o.quick ? 20 : 200, run);
  BENCH_CUDA(cudaStreamDestroy(stream));

  double bytes = 2 * stateBytes + 4.0 * elems * 2;
  char shape[128];
  std::snprintf(shape, sizeof(shape), "b=%d H=%d d=%d", batch, heads, hd);
  std::string note =
      std::string(target) + "; " +
      (graph ? "CUDA graph replay, per call" : "events per launch, median") +
      "; " + std::to_string(sets) + " slot sets rotated";
  report.add({name, shape, bytes, us, "copy", note});
}

} // namespace

int main(int argc, char **argv) {
  BenchOptions options;
  std::string device;
  if (int code = startBench(argc, argv, options, device))
    return code;

  BenchReport report;
  const char *prefillTarget = "target <= 500 us";
  for (int tile : {0, 32, 64})
    benchPrefill(options, report, 1, 8192, 64, 128, tile, prefillTarget);
  benchPrefill(options, report, 8, 2048, 64, 128, 0, "varlen batch");
  benchPrefill(options, report, 1, 8192, 64, 64, 0, "headDim 64");
  for (int batch : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    const char *target = batch <= 16   ? "target <= 6 us"
                         : batch >= 64 ? "target >= 3800 GB/s"
                                       : "";
    benchDecode(options, report, batch, 64, 128, false, target);
    if (batch <= 16)
      benchDecode(options, report, batch, 64, 128, true, target);
  }
  // Block shapes and load flavours of the decode kernel, for choosing the
  // launcher's default.
  for (int batch : {1, 2, 16, 64, 256})
    for (int cols : {16, 32, 64, 128})
      for (bool prefetch : {false, true})
        benchDecode(options, report, batch, 64, 128, batch <= 16, "tuning",
                    cols, prefetch);
  return finishBench(report, options, device);
}

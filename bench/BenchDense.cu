// strata-bench-dense: the dense decoder kernels on Llama-3-8B shapes
// (hidden 4096, intermediate 14336, 32 q / 8 kv heads of 128, vocab 128256).
//
//   strata-bench-dense [--json FILE] [--filter TEXT] [--quick]
//
// Memory-bound kernels count each input read once and each output written
// once, against the copy ceiling (4.25 TB/s). Decode GEMMs count the weight
// bytes (plus x and y) against the read ceiling (4.14 TB/s); large GEMMs
// also report TFLOP/s against ~790 TFLOP/s (bf16, measured). Read-only rows
// stream each decode projection's weight bytes with no arithmetic: what a
// decode GEMV of that size can reach per call, kernel boundaries included.
// Argmax and sampling report time per call inside a CUDA graph. Inputs
// rotate over enough sets that none is still in L2 when it comes round
// again.
#include "bench/BenchUtil.h"
#include "kernels/common/DependentLaunch.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/elementwise/Elementwise.h"
#include "kernels/gemm/Gemm.h"
#include "kernels/norm/RmsNorm.h"
#include "kernels/sampling/Sampling.h"

#include <cuda_bf16.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace strata::bench;
using namespace strata::kernels;

namespace {

constexpr double kBf16TflopCeiling = 790.0;

__device__ float hashUniform(uint64_t i, uint32_t seed) {
  uint32_t x = uint32_t(i) * 0x9e3779b9u ^ uint32_t(i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return (x >> 8) * (1.0f / 16777216.0f);
}

__global__ void fillBf16(__nv_bfloat16 *p, int64_t n, uint32_t seed,
                         float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn((hashUniform(i, seed) * 2.f - 1.f) * scale +
                               (i % 2 ? 1e-3f : -1e-3f));
}

__global__ void fillF32(float *p, int64_t n, uint32_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = (hashUniform(i, seed) * 2.f - 1.f) * scale;
}

__global__ void fillIds(int32_t *p, int64_t n, int32_t vocab) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = int32_t((i * 2654435761ull) % uint64_t(vocab));
}

/// n elements of E, randomly filled.
template <typename E> struct Buf {
  E *p = nullptr;
  explicit Buf(size_t n, uint32_t seed = 1, float scale = 1.f) {
    BENCH_CUDA(cudaMalloc(&p, n * sizeof(E) + 16));
    if constexpr (std::is_same_v<E, float>)
      fillF32<<<1024, 256>>>(p, int64_t(n), seed, scale);
    else if constexpr (std::is_same_v<E, int32_t>)
      fillIds<<<1024, 256>>>(p, int64_t(n), int32_t(scale));
    else
      fillBf16<<<1024, 256>>>(reinterpret_cast<__nv_bfloat16 *>(p), int64_t(n),
                              seed, scale);
    BENCH_CUDA(cudaGetLastError());
  }
  ~Buf() { cudaFree(p); }
  Buf(const Buf &) = delete;
  Buf &operator=(const Buf &) = delete;
};
using Bf16Buf = Buf<uint16_t>;

void benchMemoryBound(const BenchOptions &o, BenchReport &report,
                      cudaStream_t s, int64_t tokens) {
  const int64_t H = 4096, I = 14336, V = 128256;
  std::string tok = std::to_string(tokens) + " x ";
  double rowBytes = double(tokens) * H * 2;
  if (o.wants("rms_norm")) {
    int sets = rotatingSets(2 * rowBytes);
    std::vector<std::unique_ptr<Bf16Buf>> x, out;
    for (int i = 0; i < sets; ++i) {
      x.push_back(std::make_unique<Bf16Buf>(tokens * H, i));
      out.push_back(std::make_unique<Bf16Buf>(tokens * H, i + 99));
    }
    Bf16Buf w(H, 7);
    addEventAndGraphRows(report, s, sets, o.iters(100), o.quick ? 5 : 30,
                         {"rms_norm", tok + "4096 bf16", 2 * rowBytes + H * 2,
                          0, "copy", "target >= 80%"},
                         [&](int i) {
                           checkStatus(rmsNorm(ActDType::BF16, tokens, H,
                                               x[i]->p, w.p, 1e-5f, out[i]->p,
                                               s));
                         });
  }
  if (o.wants("add_rms_norm")) {
    int sets = rotatingSets(4 * rowBytes);
    std::vector<std::unique_ptr<Bf16Buf>> x, res, out;
    for (int i = 0; i < sets; ++i) {
      x.push_back(std::make_unique<Bf16Buf>(tokens * H, i));
      res.push_back(std::make_unique<Bf16Buf>(tokens * H, i + 50));
      out.push_back(std::make_unique<Bf16Buf>(tokens * H, i + 99));
    }
    Bf16Buf w(H, 7);
    // sum written over the residual: the in-place form the runtime uses.
    addEventAndGraphRows(report, s, sets, o.iters(100), o.quick ? 5 : 30,
                         {"add_rms_norm", tok + "4096 bf16 (sum in place)",
                          4 * rowBytes + H * 2, 0, "copy", "target >= 80%"},
                         [&](int i) {
                           checkStatus(addRmsNorm(
                               ActDType::BF16, tokens, H, x[i]->p, res[i]->p,
                               w.p, 1e-5f, 1.f, 1.f, out[i]->p, res[i]->p, s));
                         });
  }
  if (o.wants("silu_mul")) {
    double bytes = 3.0 * tokens * I * 2;
    int sets = rotatingSets(bytes);
    std::vector<std::unique_ptr<Bf16Buf>> gu, out;
    for (int i = 0; i < sets; ++i) {
      gu.push_back(std::make_unique<Bf16Buf>(tokens * 2 * I, i, 4.f));
      out.push_back(std::make_unique<Bf16Buf>(tokens * I, i + 9));
    }
    addEventAndGraphRows(report, s, sets, o.iters(100), o.quick ? 5 : 30,
                         {"silu_mul (fused gate_up)", tok + "14336 bf16", bytes,
                          0, "copy", "target >= 80%"},
                         [&](int i) {
                           checkStatus(siluMulFused(ActDType::BF16, tokens, I,
                                                    gu[i]->p, out[i]->p, s));
                         });
  }
  if (o.wants("embedding")) {
    int sets = rotatingSets(2 * rowBytes);
    Bf16Buf table(V * H, 3);
    std::vector<std::unique_ptr<Buf<int32_t>>> ids;
    std::vector<std::unique_ptr<Bf16Buf>> out;
    for (int i = 0; i < sets; ++i) {
      ids.push_back(std::make_unique<Buf<int32_t>>(tokens, 0, float(V - i)));
      out.push_back(std::make_unique<Bf16Buf>(tokens * H, i));
    }
    addEventAndGraphRows(
        report, s, sets, o.iters(100), o.quick ? 5 : 30,
        {"embedding", tok + "4096 bf16 (vocab 128256)",
         2 * rowBytes + tokens * 4.0, 0, "copy", "target >= 80%"},
        [&](int i) {
          checkStatus(embedding(ActDType::BF16, tokens, V, H, ids[i]->p,
                                table.p, out[i]->p, s));
        });
  }
}

// A plain streaming read of `vecs` 16-byte vectors (one per thread and
// step, four steps in flight), launched like the GEMV: dependent launch,
// everything read before the wait, one word per block written after it.
// Per call in a graph, it is what any decode GEMV over the same bytes could
// reach on this machine, kernel boundaries included.
__global__ void __launch_bounds__(512)
    readOnly(const uint4 *p, int64_t vecs, uint32_t *out) {
  uint32_t acc = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < vecs; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      v[j] = __ldcs(p + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  for (; i < vecs; i += stride) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  pdlWait();
  pdlLaunchDependents();
  acc = __reduce_xor_sync(~0u, acc);
  if (threadIdx.x % 32 == 0)
    atomicXor(out + blockIdx.x, acc);
}

// The same bytes read in 64-byte pieces from 8 rows per warp load, with all
// 16-row slabs at the same columns at once (the access pattern of a GEMV
// whose threads each read back exactly what they copied): the reference for
// why the GEMV copies whole 512-byte row segments instead.
__global__ void __launch_bounds__(512)
    readRowPieces(const uint4 *p, int64_t n, int kv, uint32_t *out) {
  uint32_t acc = 0;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / 32;
  const int64_t gw = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
  const int64_t slabs = n / 16, units = slabs * (kv / 4);
  for (int64_t u = gw; u < units; u += 2 * warps) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int64_t uu = u + j * warps < units ? u + j * warps : u;
      const uint4 *r0 = p + ((uu % slabs) * 16 + g) * kv + 4 * (uu / slabs) + t;
      v[2 * j] = __ldcs(r0);
      v[2 * j + 1] = __ldcs(r0 + 8 * kv);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  pdlWait();
  pdlLaunchDependents();
  acc = __reduce_xor_sync(~0u, acc);
  if (threadIdx.x % 32 == 0)
    atomicXor(out + blockIdx.x, acc);
}

struct Proj {
  const char *name;
  int64_t n, k;
  bool logits = false; // fp32 output
};
const std::vector<Proj> kLlama8B = {{"qkv", 6144, 4096},
                                    {"o", 4096, 4096},
                                    {"gate_up", 28672, 4096},
                                    {"down", 4096, 14336}};
// Decode also runs the vocabulary projection (1 GB of weights, fp32 logits).
const std::vector<Proj> kLlama8BDecode = [] {
  std::vector<Proj> v = kLlama8B;
  v.push_back({"lm_head", 128256, 4096, true});
  return v;
}();

void benchGemm(const BenchOptions &o, BenchReport &report, GemmRunner &runner,
               cudaStream_t s, int64_t m, GemmPath path, const char *tag) {
  for (const Proj &p : m <= 16 ? kLlama8BDecode : kLlama8B) {
    std::string name = std::string("linear ") + tag + " " + p.name;
    if (!o.wants(name))
      continue;
    double wBytes = double(p.n) * p.k * 2;
    double bytes = wBytes + double(m) * (p.k * 2 + p.n * (p.logits ? 4 : 2));
    int sets = m <= 16 ? rotatingSets(wBytes) : 2;
    std::vector<std::unique_ptr<Bf16Buf>> w;
    for (int i = 0; i < sets; ++i)
      w.push_back(std::make_unique<Bf16Buf>(p.n * p.k, i, 0.05f));
    Bf16Buf x(m * p.k, 77), y(m * p.n * (p.logits ? 2 : 1), 78);
    auto run = [&](int i) {
      GemmArgs a;
      a.m = m;
      a.n = p.n;
      a.k = p.k;
      a.x = x.p;
      a.w = w[i % sets]->p;
      a.y = y.p;
      a.f32Out = p.logits;
      checkStatus(runner.linear(a, s, path));
    };
    run(0); // plans the shape outside the timed region and the graph
    BENCH_CUDA(cudaStreamSynchronize(s));
    double us = m <= 16 ? graphMedianUsPerCall(s, std::max(sets, 20),
                                               o.quick ? 5 : 50, run)
                        : medianUs(s, 3, o.quick ? 5 : 30, run);
    double tflops = 2.0 * m * p.n * p.k / us / 1e6;
    char note[160];
    if (m <= 16)
      std::snprintf(note, sizeof(note), "target >= 85%% (graph, per call)");
    else
      std::snprintf(note, sizeof(note), "%.0f TFLOP/s = %.1f%% of 790", tflops,
                    100.0 * tflops / kBf16TflopCeiling);
    report.add({name,
                "m " + std::to_string(m) + ", n " + std::to_string(p.n) +
                    ", k " + std::to_string(p.k),
                bytes, us, "read", note});
  }
}

/// The read-only reference over each decode projection's weight bytes.
void benchReadOnly(const BenchOptions &o, BenchReport &report, cudaStream_t s) {
  int sms = 0;
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned blocks = unsigned(sms) * 4;
  Buf<int32_t> out(blocks, 0, 1.f); // zeros
  for (const Proj &p : kLlama8B) {
    std::string name = std::string("linear read-only ") + p.name;
    if (!o.wants(name))
      continue;
    const double bytes = double(p.n) * p.k * 2;
    const int sets = rotatingSets(bytes);
    std::vector<std::unique_ptr<Bf16Buf>> w;
    for (int i = 0; i < sets; ++i)
      w.push_back(std::make_unique<Bf16Buf>(p.n * p.k, i, 0.05f));
    auto run = [&](int i) {
      BENCH_CUDA(launchDependent(
          readOnly, dim3(blocks), dim3(512), 0, s,
          reinterpret_cast<const uint4 *>(w[i % sets]->p), int64_t(bytes / 16),
          reinterpret_cast<uint32_t *>(out.p)));
    };
    run(0);
    BENCH_CUDA(cudaStreamSynchronize(s));
    const double us =
        graphMedianUsPerCall(s, std::max(sets, 20), o.quick ? 5 : 50, run);
    const std::string shape =
        "n " + std::to_string(p.n) + ", k " + std::to_string(p.k);
    report.add({name, shape, bytes, us, "read",
                "plain read of the weight bytes (graph, per call): what a "
                "decode GEMV of this size can reach"});
    auto runPieces = [&](int i) {
      BENCH_CUDA(
          launchDependent(readRowPieces, dim3(blocks), dim3(512), 0, s,
                          reinterpret_cast<const uint4 *>(w[i % sets]->p), p.n,
                          int(p.k / 8), reinterpret_cast<uint32_t *>(out.p)));
    };
    runPieces(0);
    BENCH_CUDA(cudaStreamSynchronize(s));
    report.add({name + ", 64-byte row pieces", shape, bytes,
                graphMedianUsPerCall(s, std::max(sets, 20), o.quick ? 5 : 50,
                                     runPieces),
                "read", "8 rows x 64 B per warp load (graph, per call)"});
  }
}

void benchSampling(const BenchOptions &o, BenchReport &report, cudaStream_t s,
                   int64_t rows, int64_t vocab) {
  std::string shape =
      std::to_string(rows) + " x " + std::to_string(vocab) + " fp32";
  int sets = rotatingSets(double(rows) * vocab * 4);
  std::vector<std::unique_ptr<Buf<float>>> logits;
  for (int i = 0; i < sets; ++i)
    logits.push_back(std::make_unique<Buf<float>>(rows * vocab, i, 8.f));
  Buf<int32_t> ids(rows, 0, 1.f);
  if (o.wants("argmax")) {
    size_t wsBytes = argmaxWorkspaceBytes(rows, vocab);
    void *ws = nullptr;
    BENCH_CUDA(cudaMalloc(&ws, wsBytes));
    BENCH_CUDA(cudaMemset(ws, 0, wsBytes));
    auto run = [&](int i) {
      checkStatus(
          argmaxRows(logits[i % sets]->p, rows, vocab, ids.p, ws, wsBytes, s));
    };
    double us =
        graphMedianUsPerCall(s, std::max(sets, 20), o.quick ? 5 : 50, run);
    report.add({"argmax", shape, double(rows) * vocab * 4, us, "read",
                "target <= 10 us at batch 1 (graph, per call)"});
    cudaFree(ws);
  }
  if (o.wants("sample")) {
    std::vector<SampleRowParams> hp(rows);
    for (int64_t r = 0; r < rows; ++r) {
      hp[r].temperature = 0.8;
      hp[r].topK = 50;
      hp[r].topP = 0.9;
      hp[r].seed = 1;
      hp[r].seqId = uint64_t(r);
    }
    SampleRowParams *dp = nullptr;
    BENCH_CUDA(cudaMalloc(&dp, rows * sizeof(SampleRowParams)));
    BENCH_CUDA(cudaMemcpy(dp, hp.data(), rows * sizeof(SampleRowParams),
                          cudaMemcpyHostToDevice));
    auto run = [&](int i) {
      checkStatus(sampleRows(logits[i % sets]->p, rows, vocab, dp, ids.p, s));
    };
    double us =
        graphMedianUsPerCall(s, std::max(sets, 20), o.quick ? 5 : 20, run);
    report.add({"sample T=0.8 top-k 50 top-p 0.9", shape,
                double(rows) * vocab * 4, us, "read", "graph, per call"});
    hp[0].topK = 0;
    for (auto &h : hp)
      h.topK = 0;
    BENCH_CUDA(cudaMemcpy(dp, hp.data(), rows * sizeof(SampleRowParams),
                          cudaMemcpyHostToDevice));
    us = graphMedianUsPerCall(s, std::max(sets, 20), o.quick ? 5 : 20, run);
    report.add({"sample T=0.8 top-p 0.9", shape, double(rows) * vocab * 4, us,
                "read", "graph, per call"});
    cudaFree(dp);
  }
}

} // namespace

int main(int argc, char **argv) {
  BenchOptions o;
  std::string device;
  if (int code = startBench(argc, argv, o, device))
    return code;
  cudaStream_t s;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BenchReport report;
  for (int64_t tokens : {int64_t(4096), int64_t(16384)})
    benchMemoryBound(o, report, s, tokens);
  GemmRunner runner;
  checkStatus(runner.init());
  benchReadOnly(o, report, s);
  for (int64_t m : {1, 4, 8, 16}) {
    benchGemm(o, report, runner, s, m, GemmPath::CublasLt, "cublasLt");
    benchGemm(o, report, runner, s, m, GemmPath::Gemv, "gemv");
    // The same GEMV with each call waiting for the previous one to finish:
    // what dependent launch contributes.
    setDependentLaunchEnabled(false);
    benchGemm(o, report, runner, s, m, GemmPath::Gemv, "gemv-serial");
    setDependentLaunchEnabled(true);
  }
  for (int64_t m : {4096, 8192})
    benchGemm(o, report, runner, s, m, GemmPath::CublasLt, "cublasLt");
  benchSampling(o, report, s, 1, 128256);
  benchSampling(o, report, s, 64, 128256);
  benchSampling(o, report, s, 1, 262144);
  return finishBench(report, o, device);
}

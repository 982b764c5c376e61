// strata-bench-attention: paged decode, tree verify, a short extend and
// causal prefill on the attention shapes of a Llama-3-8B-style layer (32 q
// heads, 8 kv heads, headDim 128, bf16, paged cache with 16-token blocks).
//
//   strata-bench-attention [--json FILE] [--filter TEXT] [--quick]
//
// Bytes counted: every visible K and V row read once, q read and out
// written once; held against the read-only ceiling (4.14 TB/s). Prefill
// also reports TFLOP/s (4 * Hq * D * sum of visible keys: QK^T and PV,
// causal counted as the lower triangle) against ~790 TFLOP/s and against a
// fixed SDPA figure (kSdpaPrefillTflops) for a first reading; the ratio in
// docs/benchmarks.md is taken against bench/attention_sdpa.py run in the
// same call, since SDPA's own rate moves between calls. Rows named "cp.async"
// repeat a prefill, a tree and an extend with tensor copies switched off
// (Attention.h), for comparison, and rows named "new-keys-in-last-split"
// trees over short caches whose new keys stay in their last split instead
// of going in slivers to the first splits. Rows named "floor" come first:
// an empty kernel and kernels that only read the decode targets' bytes
// (BenchFloor.cu). Rows named "host_enqueue" give the host's time per
// launch, in the time column; "host_enqueue floor" rows the same for
// launches of an empty kernel, so that the launchers' own host code is
// the difference. Rows named "pages=N" use pages of N slots (48: not a
// power of two; 1: a page per token; both copy every tile by cp.async).
#include "bench/BenchFill.cuh"
#include "bench/BenchFloor.h"
#include "bench/BenchTrace.h"
#include "bench/BenchUtil.h"
#include "kernels/attention/Attention.h"
#include "kernels/attention/AttentionSwitches.h"
#include "kernels/attention/AttentionTrace.h"
#include "kernels/common/Pdl.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace strata::bench;
using namespace strata::kernels;

namespace {

constexpr double kBf16TflopCeiling = 790.0;
constexpr double kSdpaPrefillTflops = 610.0;
constexpr int kHq = 32, kHkv = 8, kD = 128, kBlock = 16;

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

/// Case-name suffix for the split merges switched off.
std::string mergeSuffix() {
  const bool cluster = attentionClusterMergeEnabled(),
             peers = attentionPeerMergeEnabled();
  return cluster && peers ? ""
         : cluster        ? " no-peer-merge"
         : peers          ? " no-cluster-merge"
                          : " merge-kernel";
}

/// A batch of equal sequences over a paged cache of `block`-slot pages:
/// `prefix` cached tokens plus `qLen` new ones each; the cache is
/// replicated `sets` times so that rotating through them defeats L2.
struct Setup {
  int batch, qLen, prefix, block, sets = 1;
  int64_t blocksPerSeq, setElems;
  AttentionDims dims;
  AttentionLaunch launch;
  std::unique_ptr<DeviceBuffer<__nv_bfloat16>> k, v, q, out;
  std::unique_ptr<DeviceBuffer<int32_t>> cu, kv, tables, parents;
  std::unique_ptr<DeviceBuffer<unsigned char>> ws;

  Setup(AttentionKind kind, int batch_, int qLen_, int prefix_, bool tree,
        int32_t numSplits = 0, int block_ = kBlock)
      : batch(batch_), qLen(qLen_), prefix(prefix_), block(block_) {
    const int64_t kvLen = prefix + qLen;
    blocksPerSeq = (kvLen + block - 1) / block;
    const int64_t blocks = batch * blocksPerSeq;
    setElems = blocks * kHkv * block * kD;
    sets = rotatingSets(2.0 * setElems * 2);
    k = std::make_unique<DeviceBuffer<__nv_bfloat16>>(setElems * sets);
    v = std::make_unique<DeviceBuffer<__nv_bfloat16>>(setElems * sets);
    const int64_t qElems = int64_t(batch) * qLen * kHq * kD;
    q = std::make_unique<DeviceBuffer<__nv_bfloat16>>(qElems);
    out = std::make_unique<DeviceBuffer<__nv_bfloat16>>(qElems);
    fillNormalBf16<<<4096, 256>>>(k->get(), setElems * sets, 1);
    fillNormalBf16<<<4096, 256>>>(v->get(), setElems * sets, 2);
    fillNormalBf16<<<1024, 256>>>(q->get(), qElems, 3);
    BENCH_CUDA(cudaGetLastError());
    // Pages of a sequence scattered over the pool, as a block allocator
    // that has run for a while leaves them.
    std::vector<int32_t> ids(blocks);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
    std::vector<int32_t> cuHost(batch + 1), kvHost(batch, int32_t(kvLen));
    for (int b = 0; b <= batch; ++b)
      cuHost[b] = b * qLen;
    cu = std::make_unique<DeviceBuffer<int32_t>>(batch + 1);
    kv = std::make_unique<DeviceBuffer<int32_t>>(batch);
    tables = std::make_unique<DeviceBuffer<int32_t>>(blocks);
    cu->upload(cuHost);
    kv->upload(kvHost);
    tables->upload(ids);
    if (tree) {
      // A tree of depth 8: eight branches of eight-token chains.
      std::vector<int32_t> par(int64_t(batch) * qLen);
      for (int b = 0; b < batch; ++b)
        for (int i = 0; i < qLen; ++i)
          par[b * qLen + i] = i % 8 == 0 ? -1 : i - 1;
      parents = std::make_unique<DeviceBuffer<int32_t>>(par.size());
      parents->upload(par);
    }
    dims.batch = batch;
    dims.numQHeads = kHq;
    dims.numKvHeads = kHkv;
    dims.headDim = kD;
    dims.dtype = ActDType::BF16;
    dims.scale = 1.0f / std::sqrt(float(kD));
    launch.maxQLen = qLen;
    launch.maxKvLen = kvLen;
    launch.numSplits = numSplits;
    launch.workspaceBytes = attentionWorkspaceBytes(kind, dims, launch);
    ws = std::make_unique<DeviceBuffer<unsigned char>>(launch.workspaceBytes);
    BENCH_CUDA(
        cudaMemset(ws->get(), 0, std::max<size_t>(launch.workspaceBytes, 1)));
    launch.workspace = ws->get();
  }

  AttentionTensors tensors(int set) const {
    AttentionTensors t;
    t.q = q->get();
    t.out = out->get();
    t.cuQLens = cu->get();
    t.kvLens = kv->get();
    t.parentIds = parents ? parents->get() : nullptr;
    t.cache = KvCacheView::paged(k->get() + int64_t(set % sets) * setElems,
                                 v->get() + int64_t(set % sets) * setElems,
                                 batch * blocksPerSeq, block, tables->get(),
                                 blocksPerSeq);
    return t;
  }
};

Status launchKind(AttentionKind kind, const Setup &s, int set,
                  cudaStream_t stream, AttentionPath *path = nullptr) {
  AttentionTensors t = s.tensors(set);
  switch (kind) {
  case AttentionKind::Prefill:
    return attentionPrefill(s.dims, t, s.launch, stream, path);
  case AttentionKind::Extend:
    return attentionExtend(s.dims, t, s.launch, stream, path);
  case AttentionKind::Decode:
    return attentionDecode(s.dims, t, s.launch, stream, path);
  case AttentionKind::Tree:
    return attentionTree(s.dims, t, s.launch, stream, path);
  }
  return Status::error("kind");
}

/// Bytes a decode, tree or extend case must move: every visible K and V
/// row read once, q read and out written once.
double cachedBytes(int batch, int context, int qLen) {
  const double kvBytes = double(batch) * (context + qLen) * kHkv * kD * 2 * 2;
  const double qBytes = 2.0 * batch * qLen * kHq * kD * 2;
  return kvBytes + qBytes;
}

/// The floor rows' case for decode at `batch` x `context` (BenchFloor.h),
/// with the split count the launcher picks.
FloorCase decodeFloor(int batch, int context) {
  AttentionDims dims;
  dims.batch = batch;
  dims.numQHeads = kHq;
  dims.numKvHeads = kHkv;
  dims.headDim = kD;
  dims.dtype = ActDType::BF16;
  AttentionLaunch launch;
  launch.maxQLen = 1;
  launch.maxKvLen = context + 1;
  const std::string k = std::to_string(context / 1024) + "K";
  FloorCase c{cachedBytes(batch, context, 1),
              "decode b=" + std::to_string(batch) +
                  " ctx=" + std::to_string(context),
              "decode b=" + std::to_string(batch) + " " + k};
  c.batch = batch;
  c.context = context;
  c.kvHeads = kHkv;
  c.splits = attentionNumSplits(AttentionKind::Decode, dims, launch);
  return c;
}

#ifdef STRATA_ATTENTION_TRACE
/// The block marks of the last launch of `kind` on `s` (a trace build;
/// AttentionTrace.cuh): every block of its grid, 16 rows a block for
/// decode and 128 for the rows kernels.
void printTrace(AttentionKind kind, const Setup &s, const std::string &what) {
  const int rows = kind == AttentionKind::Decode ? 16 : 128;
  const int64_t rowTiles = (int64_t(s.qLen) * (kHq / kHkv) + rows - 1) / rows;
  printAttentionTrace(kind,
                      int64_t(s.batch) * kHkv * rowTiles *
                          attentionNumSplits(kind, s.dims, s.launch),
                      what);
}
#endif

/// Decode, a tree or an extend of qLen tokens over `context` cached tokens.
double benchCached(const BenchOptions &o, BenchReport &report,
                   AttentionKind kind, int batch, int context, int qLen,
                   bool graph, const std::string &target, int32_t numSplits = 0,
                   int block = kBlock) {
  const bool tree = kind == AttentionKind::Tree;
  std::string name =
      std::string(tree                            ? "tree_verify"
                  : kind == AttentionKind::Extend ? "extend"
                                                  : "paged_decode") +
      " bf16" + (graph ? " graph" : "") +
      (attentionTensorCopiesEnabled() ? "" : " cp.async") + mergeSuffix() +
      (attentionNewKeySliversEnabled() ? "" : " new-keys-in-last-split") +
      (numSplits ? " splits=" + std::to_string(numSplits) : std::string()) +
      (block != kBlock ? " pages=" + std::to_string(block) : std::string());
  if (!o.wants(name))
    return 0;
  Setup s(kind, batch, qLen, context, tree, numSplits, block);
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  AttentionPath path;
  auto run = [&](int i) {
    checkStatus(launchKind(kind, s, i, stream, &path));
  };
#ifdef STRATA_ATTENTION_TRACE
  checkStatus(attentionTraceClear(kind));
#endif
  double hostUs = 0;
  double us = graph
                  ? graphMedianUsPerCall(stream, std::max(s.sets, 20),
                                         o.quick ? 5 : 50, run)
                  : medianUs(stream, s.sets, o.quick ? 20 : 200, run, &hostUs);
  BENCH_CUDA(cudaStreamDestroy(stream));
#ifdef STRATA_ATTENTION_TRACE
  printTrace(kind, s,
             name + " b=" + std::to_string(batch) +
                 " ctx=" + std::to_string(context));
#endif
  char shape[160];
  std::snprintf(shape, sizeof(shape),
                "b=%d ctx=%d q=%d Hq=%d Hkv=%d d=%d bs=%d", batch, context,
                qLen, kHq, kHkv, kD, block);
  std::string note =
      target +
      "; splits=" + std::to_string(attentionNumSplits(kind, s.dims, s.launch)) +
      (path.merge == AttentionMerge::Cluster ? " in clusters"
       : path.merge == AttentionMerge::Peers ? " by their blocks"
                                             : "") +
      "; " +
      (graph ? std::string("graph replay")
             : "events, median; host " + fixed(hostUs, 1) + " us a launch") +
      "; " + std::to_string(s.sets) + " cache sets rotated";
  report.add(
      {name, shape, cachedBytes(batch, context, qLen), us, "read", note});
  return us;
}

/// Holds its stream until the host sets *release (mapped host memory).
__global__ void holdStreamKernel(volatile int *release) {
  while (*release == 0) {
  }
}

/// The host's median time per launch of `launch(i)`, enqueued behind a
/// kernel that holds the stream, so that nothing runs meanwhile and the
/// host never waits for the GPU: what an eagerly launched step pays per
/// kernel on the host. Adds the row `name`.
template <typename Launch>
void hostEnqueueRow(const BenchOptions &o, BenchReport &report,
                    const std::string &name, const std::string &shape,
                    const std::string &what, Launch &&launch) {
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  launch(0, stream); // first-call setup
  BENCH_CUDA(cudaStreamSynchronize(stream));
  int *release = nullptr, *releaseDev = nullptr;
  BENCH_CUDA(cudaHostAlloc(&release, sizeof(int), cudaHostAllocMapped));
  BENCH_CUDA(cudaHostGetDevicePointer(&releaseDev, release, 0));
  // Far fewer launches than the launch queue holds: a launch that waited
  // for room would wait for the held stream, and the host holds it.
  const int launches = o.quick ? 20 : 100;
  std::vector<double> perLaunch;
  for (int round = 0; round < 9; ++round) {
    *release = 0;
    holdStreamKernel<<<1, 1, 0, stream>>>(releaseDev);
    BENCH_CUDA(cudaGetLastError());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
      launch(i, stream);
    perLaunch.push_back(std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - start)
                            .count() /
                        launches);
    *release = 1;
    BENCH_CUDA(cudaStreamSynchronize(stream));
  }
  BENCH_CUDA(cudaStreamDestroy(stream));
  BENCH_CUDA(cudaFreeHost(release));
  std::sort(perLaunch.begin(), perLaunch.end());
  report.add({name, shape, 0, perLaunch[perLaunch.size() / 2], "read",
              what +
                  "host us per launch, enqueued behind a held stream "
                  "(median of 9 x " +
                  std::to_string(launches) + "); no GPU time"});
}

void benchHostEnqueue(const BenchOptions &o, BenchReport &report,
                      AttentionKind kind, int batch, int context, int qLen) {
  const std::string name =
      std::string("host_enqueue ") +
      (kind == AttentionKind::Decode ? "paged_decode" : "tree_verify");
  if (!o.wants(name))
    return;
  Setup s(kind, batch, qLen, context, kind == AttentionKind::Tree);
  char shape[96];
  std::snprintf(shape, sizeof(shape), "b=%d ctx=%d q=%d", batch, context, qLen);
  hostEnqueueRow(o, report, name, shape, "", [&](int i, cudaStream_t stream) {
    checkStatus(launchKind(kind, s, i, stream));
  });
}

/// As large as the attention kernels' parameter block.
struct LaunchParams512 {
  unsigned char bytes[512];
};
__global__ void emptyParamsKernel(LaunchParams512) {}

/// The same host time for launches that do nothing on the GPU: an empty
/// kernel by the triple-chevron launch, and one taking a 512-byte
/// parameter (as the attention kernels do) by the launch the attention
/// launchers make (cudaLaunchKernelEx with the dependent-launch
/// attribute, Pdl.cuh), without and with clusters of two. What the
/// attention rows take beyond those is the launchers' own host code.
void benchHostEnqueueFloors(const BenchOptions &o, BenchReport &report) {
  const std::string name = "host_enqueue floor";
  if (!o.wants(name))
    return;
  hostEnqueueRow(o, report, name, "empty kernel", "<<<264, 128>>>; ",
                 [](int, cudaStream_t stream) {
                   emptyParamsKernel<<<264, 128, 0, stream>>>({});
                   BENCH_CUDA(cudaGetLastError());
                 });
  hostEnqueueRow(o, report, name, "dependent launch",
                 "cudaLaunchKernelEx, 264 blocks of 128, 512-byte parameter; ",
                 [](int, cudaStream_t stream) {
                   BENCH_CUDA(launchDependent(emptyParamsKernel, dim3(264),
                                              dim3(128), 0, stream,
                                              LaunchParams512{}));
                 });
  hostEnqueueRow(o, report, name, "dependent launch, clusters of 2",
                 "the same in clusters of two blocks; ",
                 [](int, cudaStream_t stream) {
                   BENCH_CUDA(launchDependentClusters(
                       emptyParamsKernel, dim3(264), dim3(128), 0, stream, 2u,
                       LaunchParams512{}));
                 });
}

void benchPrefill(const BenchOptions &o, BenchReport &report, int batch,
                  int len, const std::string &target, int block = kBlock) {
  std::string name =
      std::string("prefill_causal bf16") +
      (attentionTensorCopiesEnabled() ? "" : " cp.async") +
      (attentionPersistentEnabled() ? "" : " block-per-item") +
      (block != kBlock ? " pages=" + std::to_string(block) : std::string());
  if (!o.wants(name))
    return;
  Setup s(AttentionKind::Prefill, batch, len, 0, false, 0, block);
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
#ifdef STRATA_ATTENTION_TRACE
  checkStatus(attentionTraceClear(AttentionKind::Prefill));
#endif
  double us = medianUs(stream, 2, o.quick ? 5 : 30, [&](int i) {
    checkStatus(launchKind(AttentionKind::Prefill, s, i, stream));
  });
  BENCH_CUDA(cudaStreamDestroy(stream));
#ifdef STRATA_ATTENTION_TRACE
  printTrace(AttentionKind::Prefill, s,
             name + " b=" + std::to_string(batch) +
                 " len=" + std::to_string(len));
#endif
  const double visible = double(len) * (len + 1) / 2 * batch;
  const double flops = 4.0 * kHq * kD * visible;
  const double tflops = flops / us / 1e6;
  const double bytes = double(batch) * len * (2 * kHq + 2 * kHkv) * kD * 2;
  char note[256];
  std::snprintf(note, sizeof(note),
                "%.0f TFLOP/s = %.1f%% of %.0f, %.2fx SDPA's %.0f; %s", tflops,
                100.0 * tflops / kBf16TflopCeiling, kBf16TflopCeiling,
                tflops / kSdpaPrefillTflops, kSdpaPrefillTflops,
                target.c_str());
  char shape[128];
  std::snprintf(shape, sizeof(shape), "b=%d len=%d Hq=%d Hkv=%d d=%d bs=%d",
                batch, len, kHq, kHkv, kD, block);
  report.add({name, shape, bytes, us, "read", note});
}

} // namespace

int main(int argc, char **argv) {
  BenchOptions options;
  std::string device;
  if (int code = startBench(argc, argv, options, device))
    return code;

  BenchReport report;
  // What one launch of nothing, and one that only streams the decode
  // targets' bytes, take on this device as found: the floor of the
  // event-timed targets.
  addLaunchFloorRows(options, report,
                     {decodeFloor(1, 8192), decodeFloor(1, 32768),
                      decodeFloor(16, 4096), decodeFloor(16, 8192)});
  const AttentionKind dec = AttentionKind::Decode;
  double decode8k =
      benchCached(options, report, dec, 1, 8192, 1, false, "target <= 14 us");
  benchCached(options, report, dec, 1, 8192, 1, true, "target <= 14 us");
  for (int ctx : {32768, 131072})
    benchCached(options, report, dec, 1, ctx, 1, false, "target >= 3.3 TB/s");
  for (int batch : {16, 32, 64})
    for (int ctx : {4096, 8192, 16384}) {
      if (double(batch) * ctx > 64.0 * 8192)
        continue;
      benchCached(options, report, dec, batch, ctx, 1, false,
                  "target >= 3.7 TB/s");
    }
  // The shortest context of each rate target again, per call in a graph
  // (how the engine replays a decode step): one launch between events
  // also times the launch's start.
  benchCached(options, report, dec, 1, 32768, 1, true, "target >= 3.3 TB/s");
  // b=16 8K too: with events it is the other batch-16 case short of its
  // target.
  for (int ctx : {4096, 8192})
    benchCached(options, report, dec, 16, ctx, 1, true, "target >= 3.7 TB/s");
  double tree = benchCached(options, report, AttentionKind::Tree, 1, 8192, 64,
                            false, "target <= 1.5x decode b=1 8K");
  benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, true, "graph");
  // Split counts around the launcher's choice, for tuning it; a tree over
  // a short context shows a block's fixed cost.
  for (int32_t splits : {16, 24, 33, 48, 66, 99})
    benchCached(options, report, dec, 1, 8192, 1, true, "tuning", splits);
  // The two event-timed targets still missed: a long context at batch 1
  // and the shortest context at batch 16 (the launcher picks 33 and 2).
  for (int32_t splits : {16, 24, 33})
    benchCached(options, report, dec, 1, 32768, 1, false, "tuning", splits);
  for (int32_t splits : {1, 2, 3})
    benchCached(options, report, dec, 16, 4096, 1, false, "tuning", splits);
  for (int32_t splits : {4, 16})
    benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, true,
                "tuning", splits);
  benchCached(options, report, AttentionKind::Tree, 1, 1024, 64, true,
              "fixed cost");
  // Between them: the new keys go in slivers up to 12 stages of cached
  // keys a split (2K: 5, 4K: 9 with 8 splits; 8K: 17).
  for (int ctx : {2048, 4096})
    benchCached(options, report, AttentionKind::Tree, 1, ctx, 64, true,
                "context sweep");
  // A short extend over a long cache (a chat turn): 32 blocks unsplit.
  benchCached(options, report, AttentionKind::Extend, 1, 8192, 100, false,
              "split as the launcher picks");
  benchCached(options, report, AttentionKind::Extend, 1, 8192, 100, false,
              "one split", 1);
  // Two such turns: 64 items of 2 splits, one cluster each.
  benchCached(options, report, AttentionKind::Extend, 2, 8192, 100, false,
              "split as the launcher picks");
  benchPrefill(options, report, 1, 8192, "target >= SDPA");
  benchPrefill(options, report, 4, 2048, "varlen batch");
  benchHostEnqueueFloors(options, report);
  benchHostEnqueue(options, report, dec, 1, 8192, 1);
  benchHostEnqueue(options, report, AttentionKind::Tree, 1, 8192, 64);
  // Pages of 64 slots: a tensor copy (one box per page and 64 columns) then
  // moves 8 KB instead of 2 KB.
  benchPrefill(options, report, 1, 8192, "target >= SDPA", 64);
  benchPrefill(options, report, 4, 2048, "varlen batch", 64);
  benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, true, "graph",
              0, 64);
  benchCached(options, report, AttentionKind::Extend, 1, 8192, 100, false,
              "split as the launcher picks", 0, 64);
  benchCached(options, report, dec, 1, 8192, 1, true, "target <= 14 us", 0, 64);
  benchCached(options, report, dec, 16, 4096, 1, false, "target >= 3.7 TB/s", 0,
              64);
  // Pages of 48 slots, not a power of two: no tensor maps, every tile by
  // cp.async with a division per lookup; and pages of one slot (a page
  // per token): no tensor maps either, every key its own lookup.
  for (int page : {48, 1}) {
    benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, true,
                "graph", 0, page);
    benchCached(options, report, AttentionKind::Extend, 1, 8192, 100, false,
                "split as the launcher picks", 0, page);
  }
  benchPrefill(options, report, 1, 8192, "target >= SDPA", 1);
  benchCached(options, report, dec, 16, 4096, 1, false, "target >= 3.7 TB/s", 0,
              1);
  // One block per rows item instead of a persistent grid, for comparison.
  setAttentionPersistentEnabled(false);
  benchPrefill(options, report, 1, 8192, "tuning");
  setAttentionPersistentEnabled(true);
  // Whole tiles by cp.async instead of tensor copies, for comparison.
  setAttentionTensorCopiesEnabled(false);
  benchPrefill(options, report, 1, 8192, "tuning");
  benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, true,
              "tuning");
  benchCached(options, report, AttentionKind::Extend, 1, 8192, 100, false,
              "tuning");
  setAttentionTensorCopiesEnabled(true);
  // The new keys of split trees and extends in their last split instead
  // of in slivers of the first splits, for comparison.
  setAttentionNewKeySliversEnabled(false);
  for (int ctx : {1024, 2048, 4096})
    benchCached(options, report, AttentionKind::Tree, 1, ctx, 64, true,
                "tuning");
  setAttentionNewKeySliversEnabled(true);
  // Split rows merged by their own blocks instead of inside their
  // clusters, then by the merge kernel, for comparison.
  setAttentionClusterMergeEnabled(false);
  benchCached(options, report, AttentionKind::Extend, 2, 8192, 100, false,
              "tuning");
  setAttentionPeerMergeEnabled(false);
  benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, false,
              "tuning");
  benchCached(options, report, AttentionKind::Tree, 1, 8192, 64, true,
              "tuning");
  benchCached(options, report, AttentionKind::Extend, 1, 8192, 100, false,
              "tuning");
  benchCached(options, report, AttentionKind::Extend, 2, 8192, 100, false,
              "tuning");
  setAttentionClusterMergeEnabled(true);
  setAttentionPeerMergeEnabled(true);
  int code = finishBench(report, options, device);
  if (decode8k > 0 && tree > 0)
    std::printf("\ntree verify (64 tokens) / decode (1 token) at 8K: %.2fx\n",
                tree / decode8k);
  return code;
}

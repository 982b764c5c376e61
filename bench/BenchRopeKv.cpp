// rope_kv_write benchmarks: every variant and cache layout at prefill sizes
// (Llama-3-8B-like heads: 32 q / 8 kv, headDim 128, bf16), at 4096 tokens
// also through the per-thread kernel that Auto leaves to small launches,
// and decode steps (one token per sequence) at batch 1..64.
//
// Bytes counted per token: qkv read once ((Hq + 2 Hkv) * D * 2), the rotated
// outputs written once (packed: q and k in place plus K and V to the cache;
// continuous/tree: q out plus K and V), one cos/sin row (rotaryDim * 4), and
// the int32 index reads (kvLens, posIds, block-table entries). The kernel
// reads and writes, so the copy ceiling (4.25 TB/s) applies.
#include "bench/BenchCases.h"
#include "kernels/common/RopeCosSin.h"
#include "kernels/rope_kv/RopeKvWrite.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

namespace strata::bench {

using namespace strata::kernels;

namespace {

struct Shape {
  RopeKvVariant variant;
  KvCacheLayout layout;
  int64_t batch, seq;
  int64_t cached; // tokens already in the cache (continuous/tree)
  bool qkNorm = false;
  int32_t hq = 32, hkv = 8, headDim = 128, rotaryDim = 128;
  int64_t blockSize = 16;
  RopeKvKernel kernel = RopeKvKernel::Auto;

  int64_t heads() const { return hq + 2 * int64_t(hkv); }
  int64_t tokens() const { return batch * seq; }
  int64_t slotsPerSeq() const { return cached + seq; }
  std::string text() const {
    std::ostringstream os;
    os << "b" << batch << " x " << seq << " tok, " << hq << "/" << hkv
       << " heads, D" << headDim << ", cached " << cached
       << (layout == KvCacheLayout::Paged ? ", paged 16" : ", contiguous")
       << (qkNorm ? ", qk-norm" : "")
       << (kernel == RopeKvKernel::PerThread ? ", per-thread kernel" : "");
    return os.str();
  }
  double bytes() const {
    const double e = 2; // bf16
    const double t = double(tokens());
    const bool packed = variant == RopeKvVariant::Packed;
    double read = t * heads() * headDim * e + t * rotaryDim * 4.0;
    if (!packed)
      read += batch * 4.0;
    if (variant == RopeKvVariant::Tree)
      read += t * 4.0;
    if (layout == KvCacheLayout::Paged)
      read += batch * double((seq + blockSize - 1) / blockSize + 1) * 4.0;
    if (qkNorm)
      read += 2.0 * headDim * e;
    double written = t * (packed ? hq + hkv : hq) * headDim * e +
                     t * 2.0 * hkv * headDim * e;
    return read + written;
  }
};

/// One set of device inputs and outputs for a shape; several are rotated
/// through so that each launch reads from DRAM, not from L2. Buffers a
/// layout does not use (V and block tables of a contiguous cache) stay null.
struct InputSet {
  std::unique_ptr<DeviceBuffer<uint16_t>> qkv, qOut, k, v;
  std::unique_ptr<DeviceBuffer<int32_t>> kvLens, posIds, blockTables;
  int64_t numBlocks = 0, maxBlocks = 0, capacity = 0;

  InputSet(const Shape &s, const std::vector<uint16_t> &qkvHost,
           std::mt19937_64 &rng) {
    qkv = std::make_unique<DeviceBuffer<uint16_t>>(qkvHost);
    qOut =
        std::make_unique<DeviceBuffer<uint16_t>>(s.tokens() * s.hq * s.headDim);
    std::vector<int32_t> lens(s.batch, int32_t(s.cached)), pos(s.tokens());
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t t = 0; t < s.seq; ++t)
        pos[b * s.seq + t] = int32_t(s.cached + t);
    kvLens = std::make_unique<DeviceBuffer<int32_t>>(lens);
    posIds = std::make_unique<DeviceBuffer<int32_t>>(pos);
    if (s.layout == KvCacheLayout::Paged) {
      maxBlocks = (s.slotsPerSeq() + s.blockSize - 1) / s.blockSize;
      numBlocks = s.batch * maxBlocks;
      std::vector<int32_t> ids(numBlocks);
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), rng); // pages are scattered
      blockTables = std::make_unique<DeviceBuffer<int32_t>>(ids);
      size_t pool = size_t(numBlocks) * s.hkv * s.blockSize * s.headDim;
      k = std::make_unique<DeviceBuffer<uint16_t>>(pool);
      v = std::make_unique<DeviceBuffer<uint16_t>>(pool);
    } else {
      capacity = s.slotsPerSeq();
      k = std::make_unique<DeviceBuffer<uint16_t>>(size_t(s.batch) * 2 * s.hkv *
                                                   capacity * s.headDim);
    }
  }
  KvCacheView view(const Shape &s) const {
    return s.layout == KvCacheLayout::Paged
               ? KvCacheView::paged(k->get(), v->get(), numBlocks, s.blockSize,
                                    blockTables->get(), maxBlocks)
               : KvCacheView::contiguous(k->get(), capacity);
  }
};

void launch(const Shape &s, const InputSet &in, const CosSinCache &cs,
            const QkNormParams &norm, cudaStream_t stream) {
  RopeKvDims d;
  d.batch = s.batch;
  d.seq = s.seq;
  d.numQHeads = s.hq;
  d.numKvHeads = s.hkv;
  d.headDim = s.headDim;
  d.rotaryDim = s.rotaryDim;
  d.dtype = ActDType::BF16;
  RopeKvArgs args;
  switch (s.variant) {
  case RopeKvVariant::Packed:
    args = RopeKvArgs::packed(d, in.qkv->get(), cs, norm, in.view(s), nullptr);
    break;
  case RopeKvVariant::Continuous:
    args =
        RopeKvArgs::continuous(d, in.qkv->get(), in.qOut->get(),
                               in.kvLens->get(), cs, norm, in.view(s), nullptr);
    break;
  case RopeKvVariant::Tree:
    args = RopeKvArgs::tree(d, in.qkv->get(), in.qOut->get(), in.kvLens->get(),
                            in.posIds->get(), cs, norm, in.view(s), nullptr);
    break;
  }
  checkStatus(launchRopeKvWrite(args, stream, s.kernel));
}

void runShape(const Shape &s, bool decode, const BenchOptions &options,
              BenchReport &report) {
  std::string name = std::string("rope_kv ") + ropeKvVariantName(s.variant) +
                     (decode ? " decode" : "") +
                     (s.kernel == RopeKvKernel::PerThread ? " per-thread" : "");
  if (!options.wants(name))
    return;
  std::mt19937_64 rng(42);
  // Random bf16 in +-[0.25, 2): never zeros, which could run faster.
  std::vector<uint16_t> qkvHost(size_t(s.tokens() * s.heads() * s.headDim));
  std::uniform_int_distribution<uint32_t> bits(0x3e80, 0x3fff);
  for (auto &x : qkvHost)
    x = uint16_t(bits(rng) | ((rng() & 1) << 15));

  RopeTableSpec spec;
  spec.theta = 500000.0;
  spec.rotaryDim = s.rotaryDim;
  spec.maxPos = s.slotsPerSeq();
  std::vector<float> table;
  checkStatus(buildRopeCosSin(spec, table));
  DeviceBuffer<float> tableDev(table);
  CosSinCache cs{tableDev.get(), 1, spec.maxPos};
  // Q and K norm weights of 1.0 (bf16 0x3f80), one row each.
  DeviceBuffer<uint16_t> weights(
      std::vector<uint16_t>(2 * size_t(s.headDim), 0x3f80));
  QkNormParams norm;
  if (s.qkNorm)
    norm = {weights.get(), weights.get() + s.headDim, 1e-6f};

  int sets = decode ? 1 : rotatingSets(s.bytes());
  std::vector<std::unique_ptr<InputSet>> in;
  for (int i = 0; i < sets; ++i)
    in.push_back(std::make_unique<InputSet>(s, qkvHost, rng));
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  auto run = [&](int i) { launch(s, *in[i % sets], cs, norm, stream); };

  BenchRow row;
  row.name = name;
  row.shape = s.text();
  row.bytes = s.bytes();
  if (decode) {
    row.us = graphMedianUsPerCall(stream, 100, options.iters(50), run);
    row.note = "target <= 3 us/call; CUDA graph of 100 calls, per call";
    report.add(row);
    row.us = medianUs(stream, 10, options.iters(200), run);
    row.note = "single launch between events (includes launch latency)";
    report.add(row);
  } else {
    row.note =
        "target >= 3.2 TB/s; " + std::to_string(sets) + " rotating input sets";
    addEventAndGraphRows(report, stream, sets, options.iters(300),
                         options.iters(30), row, run);
  }
  BENCH_CUDA(cudaStreamSynchronize(stream));
  BENCH_CUDA(cudaStreamDestroy(stream));
  in.clear();
}

} // namespace

void runRopeKvBenches(const BenchOptions &options, BenchReport &report) {
  for (int64_t batch : {1, 4})
    for (RopeKvVariant v : {RopeKvVariant::Packed, RopeKvVariant::Continuous,
                            RopeKvVariant::Tree})
      for (KvCacheLayout layout :
           {KvCacheLayout::Paged, KvCacheLayout::Contiguous}) {
        Shape s{v, layout, batch, 4096, v == RopeKvVariant::Packed ? 0 : 512};
        runShape(s, false, options, report);
        // The per-thread kernel on the same shape, for comparison.
        if (batch == 1) {
          s.kernel = RopeKvKernel::PerThread;
          runShape(s, false, options, report);
        }
      }
  Shape qwen{RopeKvVariant::Packed, KvCacheLayout::Paged, 1, 4096, 0, true};
  runShape(qwen, false, options, report);
  for (int64_t batch : {1, 8, 32, 64}) {
    Shape s{RopeKvVariant::Continuous, KvCacheLayout::Paged, batch, 1, 4000};
    runShape(s, true, options, report);
  }
  Shape tree{RopeKvVariant::Tree, KvCacheLayout::Paged, 16, 8, 4000};
  runShape(tree, true, options, report);
}

} // namespace strata::bench

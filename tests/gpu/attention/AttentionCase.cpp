#include "tests/gpu/attention/AttentionCase.h"

#include "kernels/cpu/AttentionRef.h"
#include "kernels/cpu/CpuAccess.h"
#include "tests/gpu/GpuTestSupport.h"

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace strata::kernels::attention_test {

namespace {

using test::DeviceBuffer;
using test::kPoison;

std::vector<uint16_t> randomNormal(std::mt19937_64 &rng, size_t n, ActDType t) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint16_t> v(n);
  for (auto &x : v)
    x = floatToHalfBits(t, normal(rng));
  return v;
}

const char *kindName(AttentionKind k) {
  switch (k) {
  case AttentionKind::Prefill:
    return "prefill";
  case AttentionKind::Extend:
    return "extend";
  case AttentionKind::Decode:
    return "decode";
  case AttentionKind::Tree:
    return "tree";
  }
  return "?";
}

Status launch(AttentionKind k, const AttentionDims &d,
              const AttentionTensors &t, const AttentionLaunch &l,
              cudaStream_t s, AttentionPath *path) {
  switch (k) {
  case AttentionKind::Prefill:
    return attentionPrefill(d, t, l, s, path);
  case AttentionKind::Extend:
    return attentionExtend(d, t, l, s, path);
  case AttentionKind::Decode:
    return attentionDecode(d, t, l, s, path);
  case AttentionKind::Tree:
    return attentionTree(d, t, l, s, path);
  }
  return Status::error("unknown kind");
}

/// Whether `config` is one that a launch of `kind` may take.
bool configServes(AttentionConfig config, AttentionKind kind) {
  switch (config) {
  case AttentionConfig::PagedDecode:
    return kind == AttentionKind::Decode;
  case AttentionConfig::PrefillExtend:
  case AttentionConfig::LongPrefillExtend:
    return kind == AttentionKind::Prefill || kind == AttentionKind::Extend;
  case AttentionConfig::ExtendSlivers:
    return kind == AttentionKind::Extend;
  case AttentionConfig::TreeVerify:
  case AttentionConfig::TreeVerifySlivers:
    return kind == AttentionKind::Tree;
  }
  return false;
}

/// Random tree of n nodes whose depth (root = 1) stays <= maxDepth.
std::vector<int32_t> randomTree(std::mt19937_64 &rng, int32_t n,
                                int32_t maxDepth) {
  std::vector<int32_t> parent(n), depth(n);
  for (int32_t i = 0; i < n; ++i) {
    for (;;) {
      int32_t p = int32_t(rng() % (i + 1)) - 1;
      int32_t dp = p < 0 ? 1 : depth[p] + 1;
      if (dp <= maxDepth) {
        parent[i] = p;
        depth[i] = dp;
        break;
      }
    }
  }
  return parent;
}

/// Compares every row and head; returns the largest relative error.
double compare(const std::vector<uint16_t> &gpu,
               const std::vector<uint16_t> &ref, int64_t rows, int32_t heads,
               int32_t D, ActDType t) {
  double worst = 0;
  int64_t unwritten = 0, bad = 0;
  for (int64_t r = 0; r < rows * heads; ++r) {
    double num = 0, den = 0;
    for (int32_t e = 0; e < D; ++e) {
      uint16_t g = gpu[r * D + e];
      if (g == kPoison)
        ++unwritten;
      float gv = halfBitsToFloat(t, g), rv = halfBitsToFloat(t, ref[r * D + e]);
      if (!std::isfinite(gv))
        ++bad;
      num += double(gv - rv) * (gv - rv);
      den += double(rv) * rv;
    }
    worst = std::max(worst, std::sqrt(num / std::max(den, 1e-12)));
  }
  INFO("unwritten " << unwritten << ", non-finite " << bad);
  REQUIRE(unwritten == 0);
  REQUIRE(bad == 0);
  return worst;
}

} // namespace

std::mt19937_64 &attnTestRng() {
  static std::mt19937_64 rng(test::testSeed());
  return rng;
}

std::string AttnCase::describe() const {
  std::ostringstream os;
  os << kindName(kind) << (dtype == ActDType::BF16 ? " bf16" : " fp16")
     << " Hkv=" << numKvHeads << " G=" << group << " D=" << headDim
     << (contiguous ? " contiguous" : " bs=" + std::to_string(blockSize))
     << " window=" << window << " splits=" << numSplits
     << (graphReplay ? " graph" : "") << (holes ? " holes" : "")
     << (attentionTensorCopiesEnabled() ? "" : " cp.async")
     << (attentionClusterMergeEnabled() ? "" : " no-cluster-merge")
     << (attentionPeerMergeEnabled() ? "" : " no-peer-merge")
     << (attentionPersistentEnabled() ? "" : " block-per-item")
     << (attentionPersistentBlocks() > 0
             ? " persistent-blocks=" +
                   std::to_string(attentionPersistentBlocks())
             : "")
     << (maxQLenBound ? " maxQLen=" + std::to_string(maxQLenBound) : "")
     << " q=[";
  for (size_t i = 0; i < qLens.size(); ++i)
    os << (i ? "," : "") << qLens[i] << "+" << prefixLens[i];
  os << "]";
  return os.str();
}

std::vector<uint16_t> runAttnCase(const AttnCase &c, std::mt19937_64 &rng,
                                  AttentionPath *pathOut) {
  INFO(c.describe());
  const int64_t batch = int64_t(c.qLens.size());
  REQUIRE(c.prefixLens.size() == c.qLens.size());
  const int32_t Hkv = c.numKvHeads, Hq = c.numKvHeads * c.group, D = c.headDim;
  std::vector<int32_t> cuQ(batch + 1, 0), kvLens(batch);
  for (int64_t b = 0; b < batch; ++b) {
    cuQ[b + 1] = cuQ[b] + c.qLens[b];
    kvLens[b] = c.prefixLens[b] + c.qLens[b];
  }
  const int64_t totalQ = cuQ[batch];
  const int32_t maxKv = *std::max_element(kvLens.begin(), kvLens.end());

  // Cache: shuffled block ids, one spare -1 entry per table, a few blocks
  // no table names.
  const int64_t bs = c.contiguous ? 1 : c.blockSize;
  const int64_t maxBlocks = (maxKv + bs - 1) / bs + 1;
  int64_t numBlocks = 0, cacheElems = 0, capacity = maxKv + 5;
  std::vector<int32_t> tables, refTables;
  int64_t zeroBlock = -1; // holes: the reference's page of zeros
  auto pages = [&](int64_t b) { return (kvLens[b] + bs - 1) / bs; };
  if (c.contiguous) {
    cacheElems = batch * 2 * Hkv * capacity * D;
  } else {
    int64_t used = 0;
    for (int64_t b = 0; b < batch; ++b)
      used += pages(b);
    numBlocks = used + 3;
    std::vector<int32_t> ids(numBlocks);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    tables.assign(batch * maxBlocks, -1);
    int64_t next = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < pages(b); ++j)
        tables[b * maxBlocks + j] = ids[next++];
    refTables = tables;
    if (c.holes) {
      zeroBlock = numBlocks++;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 1; j < std::min<int64_t>(3, pages(b)); ++j) {
          refTables[b * maxBlocks + j] = int32_t(zeroBlock);
          tables[b * maxBlocks + j] = j == 1 ? -1 : int32_t(numBlocks + 7);
        }
    }
    cacheElems = numBlocks * Hkv * bs * D;
  }
  std::vector<uint16_t> kHost = randomNormal(rng, cacheElems, c.dtype);
  std::vector<uint16_t> vHost = c.contiguous
                                    ? std::vector<uint16_t>()
                                    : randomNormal(rng, cacheElems, c.dtype);
  // Slots past each sequence and pages no table names hold NaN: a kernel
  // must neither read them nor let a masked weight multiply them.
  auto fillRow = [&](std::vector<uint16_t> &buf, int64_t row, uint16_t x) {
    std::fill_n(buf.begin() + row * D, D, x);
  };
  if (c.contiguous) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t plane = 0; plane < 2 * Hkv; ++plane)
        for (int64_t s = kvLens[b]; s < capacity; ++s)
          fillRow(kHost, (b * 2 * Hkv + plane) * capacity + s, kPoison);
  } else {
    std::vector<char> named(numBlocks, 0);
    for (int32_t id : refTables)
      if (id >= 0)
        named[id] = 1;
    for (int64_t b = 0; b < batch; ++b) {
      if (pages(b) == 0)
        continue;
      const int32_t last = refTables[b * maxBlocks + pages(b) - 1];
      if (last == zeroBlock)
        continue;
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t s = kvLens[b]; s < pages(b) * bs; ++s) {
          fillRow(kHost, (last * Hkv + h) * bs + s % bs, kPoison);
          fillRow(vHost, (last * Hkv + h) * bs + s % bs, kPoison);
        }
    }
    for (int64_t id = 0; id < numBlocks; ++id)
      for (int64_t r = 0; r < Hkv * bs; ++r) {
        const bool zero = id == zeroBlock;
        if (named[id] && !zero)
          continue;
        fillRow(kHost, id * Hkv * bs + r, zero ? 0 : kPoison);
        fillRow(vHost, id * Hkv * bs + r, zero ? 0 : kPoison);
      }
  }
  std::vector<uint16_t> qHost = randomNormal(rng, totalQ * Hq * D, c.dtype);

  std::vector<int32_t> parents, positions;
  const bool tree = c.kind == AttentionKind::Tree;
  if (tree) {
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<int32_t> p = c.parents.empty()
                                   ? randomTree(rng, c.qLens[b], c.maxDepth)
                                   : c.parents[b];
      REQUIRE(int64_t(p.size()) == c.qLens[b]);
      std::vector<int32_t> depth(p.size());
      for (size_t i = 0; i < p.size(); ++i) {
        depth[i] = p[i] < 0 ? 1 : depth[p[i]] + 1;
        parents.push_back(p[i]);
        positions.push_back(c.prefixLens[b] + depth[i] - 1);
      }
    }
  }

  DeviceBuffer<uint16_t> q(qHost.size()), out(totalQ * Hq * D);
  DeviceBuffer<uint16_t> kDev(cacheElems), vDev(c.contiguous ? 1 : cacheElems);
  DeviceBuffer<int32_t> cuDev(batch + 1), kvDev(batch),
      tabDev(std::max<size_t>(tables.size(), 1)),
      parDev(std::max<size_t>(parents.size(), 1)),
      posDev(std::max<size_t>(positions.size(), 1));
  q.upload(qHost);
  kDev.upload(kHost);
  if (!c.contiguous) {
    vDev.upload(vHost);
    tabDev.upload(tables);
  }
  cuDev.upload(cuQ);
  kvDev.upload(kvLens);
  if (tree) {
    parDev.upload(parents);
    posDev.upload(positions);
  }

  AttentionDims dims;
  dims.batch = batch;
  dims.numQHeads = Hq;
  dims.numKvHeads = Hkv;
  dims.headDim = D;
  dims.dtype = c.dtype;
  dims.scale = 1.3f / std::sqrt(float(D));
  dims.slidingWindow = c.window;
  AttentionTensors t;
  t.q = q.get();
  t.out = out.get();
  t.cuQLens = cuDev.get();
  t.kvLens = kvDev.get();
  t.parentIds = tree ? parDev.get() : nullptr;
  t.positions = tree && c.treePositions ? posDev.get() : nullptr;
  t.cache = c.contiguous ? KvCacheView::contiguous(kDev.get(), capacity)
                         : KvCacheView::paged(kDev.get(), vDev.get(), numBlocks,
                                              bs, tabDev.get(), maxBlocks);
  AttentionLaunch l;
  l.maxQLen = std::max(*std::max_element(c.qLens.begin(), c.qLens.end()),
                       c.maxQLenBound);
  l.maxKvLen = maxKv;
  l.numSplits = c.numSplits;
  l.workspaceBytes = attentionWorkspaceBytes(c.kind, dims, l);
  DeviceBuffer<unsigned char> ws(std::max<size_t>(l.workspaceBytes, 16));
  CUDA_REQUIRE(cudaMemset(ws.get(), 0, std::max<size_t>(l.workspaceBytes, 16)));
  // Only what the launcher asks for: a launch that needs no workspace gets
  // none.
  l.workspace = l.workspaceBytes ? ws.get() : nullptr;
  const int32_t splits = attentionNumSplits(c.kind, dims, l);
  INFO("splits " << splits << ", workspace " << l.workspaceBytes);

  // Host view of the same operands for the reference.
  AttentionTensors h = t;
  std::vector<uint16_t> refOut;
  h.q = qHost.data();
  h.cuQLens = cuQ.data();
  h.kvLens = kvLens.data();
  h.parentIds = tree ? parents.data() : nullptr;
  h.positions = tree && c.treePositions ? positions.data() : nullptr;
  h.cache = c.contiguous
                ? KvCacheView::contiguous(kHost.data(), capacity)
                : KvCacheView::paged(kHost.data(), vHost.data(), numBlocks, bs,
                                     refTables.data(), maxBlocks);
  const double tol = c.dtype == ActDType::BF16 ? 1.5e-2 : 4e-3;

  auto check = [&]() {
    std::vector<uint16_t> gpu = out.download();
    refOut.assign(gpu.size(), kPoison);
    h.out = refOut.data();
    Status rs = attentionRef(dims, h);
    INFO(rs.message());
    REQUIRE(rs.ok());
    double err = compare(gpu, refOut, totalQ, Hq, D, c.dtype);
    INFO("max relative error per row " << err);
    CHECK(err < tol);
    return gpu;
  };

  cudaStream_t stream;
  CUDA_REQUIRE(cudaStreamCreate(&stream));
  CUDA_REQUIRE(cudaMemset(out.get(), 0xff, totalQ * Hq * D * 2));
  std::vector<uint16_t> result;
  AttentionPath path;
  if (!c.graphReplay) {
    Status s = launch(c.kind, dims, t, l, stream, &path);
    INFO(s.message());
    REQUIRE(s.ok());
    result = check();
    // A second launch reuses the workspace (split or persistent): the
    // counters must be back at 0. It takes the same path.
    if (l.workspaceBytes > 0) {
      CUDA_REQUIRE(cudaMemset(out.get(), 0xff, totalQ * Hq * D * 2));
      AttentionPath again;
      REQUIRE(launch(c.kind, dims, t, l, stream, &again).ok());
      check();
      CHECK(again.config == path.config);
      CHECK(again.merge == path.merge);
      CHECK(again.persistent == path.persistent);
      CHECK(again.blocks == path.blocks);
    }
  } else {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_REQUIRE(
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    Status s = launch(c.kind, dims, t, l, stream, &path);
    CUDA_REQUIRE(cudaStreamEndCapture(stream, &graph));
    INFO(s.message());
    REQUIRE(s.ok());
    CUDA_REQUIRE(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_REQUIRE(cudaGraphLaunch(exec, stream));
    result = check();
    // Same graph, other lengths (cached tokens only shrink: the tables
    // were sized for the first ones) and fresh queries.
    for (int64_t b = 0; b < batch; ++b)
      kvLens[b] = c.qLens[b] + int32_t(rng() % (c.prefixLens[b] + 1));
    kvDev.upload(kvLens);
    qHost = randomNormal(rng, qHost.size(), c.dtype);
    q.upload(qHost);
    h.q = qHost.data();
    CUDA_REQUIRE(cudaMemset(out.get(), 0xff, totalQ * Hq * D * 2));
    CUDA_REQUIRE(cudaGraphLaunch(exec, stream));
    check();
    CUDA_REQUIRE(cudaGraphExecDestroy(exec));
    CUDA_REQUIRE(cudaGraphDestroy(graph));
  }
  CUDA_REQUIRE(cudaStreamDestroy(stream));
  // The path fits the launch: its kind's configuration, the planned split
  // count, a merge exactly when it split (decode's by its last block).
  INFO("configuration " << attentionConfigName(path.config) << ", merge "
                        << int(path.merge));
  CHECK(path.launched);
  CHECK(configServes(path.config, c.kind));
  CHECK(path.numSplits == splits);
  CHECK((path.merge == AttentionMerge::None) == (splits == 1));
  if (splits > 1)
    CHECK((path.merge == AttentionMerge::LastBlock) ==
          (c.kind == AttentionKind::Decode));
  CHECK(path.blocks > 0);
  if (c.kind == AttentionKind::Decode)
    CHECK(path.tensorCopyRows == 0);
  if (pathOut)
    *pathOut = path;
  return result;
}

} // namespace strata::kernels::attention_test

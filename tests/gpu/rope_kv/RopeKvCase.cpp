#include "RopeKvCase.h"

#include "RopeKvTestSupport.h"
#include "kernels/cpu/RopeKvWriteRef.h"
#include "kernels/rope_kv/RopeKvWrite.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <tuple>

namespace strata::kernels::test {

std::string RopeKvCase::describe() const {
  std::ostringstream os;
  os << ropeKvVariantName(variant) << " "
     << (layout == KvCacheLayout::Paged
             ? (combinedPool ? "paged(combined)" : "paged")
             : "contiguous")
     << " " << (dtype == ActDType::BF16 ? "bf16" : "fp16") << " "
     << (pairing == RopePairingKind::Neox ? "neox" : "gptj")
     << (qkNorm ? " qk-norm" : "") << " batch=" << batch << " seq=" << seq
     << " Hq=" << numQHeads << " Hkv=" << numKvHeads << " D=" << headDim
     << " rot=" << rotaryDim << (ragged ? " ragged" : "") << " cached=["
     << minCached << "," << maxCached << "]";
  if (layout == KvCacheLayout::Paged)
    os << " blockSize=" << blockSize;
  if (perSequenceTable)
    os << " per-seq-table";
  if (scaling == RopeScalingKind::Llama3)
    os << " llama3";
  if (invalidPosition)
    os << " invalid-pos";
  if (kernel != RopeKvKernel::Auto)
    os << (kernel == RopeKvKernel::Streamed ? " streamed" : " per-thread");
  os << " seed=" << testSeed();
  return os.str();
}

namespace {

/// Tables are expensive at a million positions: build each once.
const std::vector<float> &cachedTable(const RopeTableSpec &spec) {
  static std::map<std::tuple<double, int32_t, int64_t, int>, std::vector<float>>
      tables;
  auto key = std::make_tuple(spec.theta, spec.rotaryDim, spec.maxPos,
                             int(spec.scaling.kind));
  auto it = tables.find(key);
  if (it == tables.end()) {
    std::vector<float> table;
    REQUIRE(buildRopeCosSin(spec, table).ok());
    it = tables.emplace(key, std::move(table)).first;
  }
  return it->second;
}

} // namespace

void runRopeKvCase(const RopeKvCase &c, std::mt19937_64 &rng) {
  INFO(c.describe());
  const bool packed = c.variant == RopeKvVariant::Packed;
  const bool tree = c.variant == RopeKvVariant::Tree;
  const int64_t numHeads = c.numQHeads + 2 * int64_t(c.numKvHeads);
  const int64_t D = c.headDim;

  RopeKvDims dims;
  dims.batch = c.batch;
  dims.seq = c.seq;
  dims.numQHeads = c.numQHeads;
  dims.numKvHeads = c.numKvHeads;
  dims.headDim = c.headDim;
  dims.rotaryDim = c.rotaryDim;
  dims.pairing = c.pairing;
  dims.dtype = c.dtype;

  // Inputs.
  std::vector<uint16_t> qkv =
      randomAct(rng, c.dtype, c.batch * c.seq * numHeads * D, 0.25f, 2.0f);
  std::vector<uint16_t> qWeight = randomAct(rng, c.dtype, D, 0.5f, 1.5f);
  std::vector<uint16_t> kWeight = randomAct(rng, c.dtype, D, 0.5f, 1.5f);
  std::vector<int32_t> kvLens(c.batch, 0), seqLens(c.batch, int32_t(c.seq));
  std::uniform_int_distribution<int64_t> cached(c.minCached, c.maxCached);
  for (int64_t b = 0; b < c.batch; ++b) {
    if (!packed)
      kvLens[b] = int32_t(cached(rng));
    if (c.ragged && b > 0) // sequence 0 stays full length
      seqLens[b] =
          int32_t(std::uniform_int_distribution<int64_t>(0, c.seq - 1)(rng));
  }
  std::vector<int32_t> posIds(c.batch * c.seq);
  int64_t maxSlotEnd = 0, maxPosition = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    maxSlotEnd = std::max(maxSlotEnd, kvLens[b] + c.seq);
    for (int64_t t = 0; t < c.seq; ++t) {
      // A draft tree: token t sits at some depth <= t below the cached
      // prefix, so positions repeat and are not the slot order.
      int64_t depth =
          t == 0 ? 0 : std::uniform_int_distribution<int64_t>(0, t)(rng);
      posIds[b * c.seq + t] = int32_t(kvLens[b] + depth);
    }
  }
  maxPosition = maxSlotEnd; // exclusive bound of any position used
  if (c.tableRows) {
    REQUIRE(c.tableRows >= maxSlotEnd);
    maxPosition = c.tableRows;
  }
  if (tree && c.invalidPosition)
    posIds[c.batch * c.seq - 1] = int32_t(maxPosition); // == maxPos below

  // cos/sin table(s): [cacheBatch, maxPos, rotaryDim].
  RopeTableSpec spec;
  spec.rotaryDim = c.rotaryDim;
  spec.maxPos = maxPosition;
  spec.scaling.kind = c.scaling;
  spec.scaling.factor = 8.0;
  const int64_t cacheBatch = c.perSequenceTable ? c.batch : 1;
  std::vector<float> tableStore;
  const float *tableHost = nullptr;
  if (cacheBatch == 1) {
    spec.theta = 500000.0;
    tableHost = cachedTable(spec).data();
  } else {
    for (int64_t b = 0; b < cacheBatch; ++b) {
      spec.theta = 10000.0 * (b + 1);
      const auto &one = cachedTable(spec);
      tableStore.insert(tableStore.end(), one.begin(), one.end());
    }
    tableHost = tableStore.data();
  }
  const size_t tableSize = size_t(cacheBatch * maxPosition * c.rotaryDim);

  // Caches, poisoned.
  const bool paged = c.layout == KvCacheLayout::Paged;
  int64_t maxBlocks = 0, numBlocks = 0, blockStride = 0, capacity = 0;
  std::vector<int32_t> blockTables;
  size_t kSize = 0, vSize = 0;
  if (paged) {
    maxBlocks = (maxSlotEnd + c.blockSize - 1) / c.blockSize + 1;
    blockTables.assign(c.batch * maxBlocks, -1);
    // Physical blocks only for the blocks written and the one before them
    // (holding cached tokens that must survive); the rest stay unallocated.
    std::vector<std::pair<int64_t, int64_t>> wanted;
    for (int64_t b = 0; b < c.batch; ++b) {
      int64_t first = std::max<int64_t>(0, kvLens[b] / c.blockSize - 1);
      int64_t last = (kvLens[b] + c.seq - 1) / c.blockSize;
      for (int64_t l = first; l <= last; ++l)
        wanted.emplace_back(b, l);
    }
    numBlocks = int64_t(wanted.size()) + 2; // two never referenced
    std::vector<int32_t> ids(numBlocks);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    for (size_t i = 0; i < wanted.size(); ++i)
      blockTables[wanted[i].first * maxBlocks + wanted[i].second] = ids[i];
    const int64_t perBlock = c.numKvHeads * c.blockSize * D;
    blockStride = c.combinedPool ? 2 * perBlock : perBlock;
    kSize = size_t(numBlocks * blockStride);
    vSize = c.combinedPool ? 0 : kSize;
  } else {
    capacity = maxSlotEnd + c.extraCapacity;
    kSize = size_t(c.batch * 2 * c.numKvHeads * capacity * D);
  }
  std::vector<uint16_t> kHost(kSize, kPoison), vHost(vSize, kPoison);
  std::vector<uint16_t> qOutHost(packed ? 0 : c.batch * c.seq * c.numQHeads * D,
                                 kPoison);

  // Device copies of the same bits.
  DeviceBuffer<uint16_t> qkvDev(qkv), qOutDev(qOutHost), kDev(kHost),
      vDev(vHost), qWDev(qWeight), kWDev(kWeight);
  DeviceBuffer<int32_t> kvLensDev(kvLens), seqLensDev(seqLens),
      posIdsDev(posIds), tablesDev(blockTables);
  DeviceBuffer<float> cosSinDev(tableSize);
  CUDA_REQUIRE(cudaMemcpy(cosSinDev.get(), tableHost, tableSize * 4,
                          cudaMemcpyHostToDevice));

  auto makeView = [&](void *k, void *v, const int32_t *tables) {
    if (!paged)
      return KvCacheView::contiguous(k, capacity);
    if (c.combinedPool)
      v = static_cast<uint16_t *>(k) + c.numKvHeads * c.blockSize * D;
    return KvCacheView::paged(k, v, numBlocks, c.blockSize, tables, maxBlocks,
                              c.combinedPool ? blockStride : 0);
  };
  CosSinCache csHost{tableHost, cacheBatch, maxPosition};
  CosSinCache csDev{cosSinDev.get(), cacheBatch, maxPosition};
  QkNormParams normHost, normDev;
  if (c.qkNorm) {
    normHost = {qWeight.data(), kWeight.data(), 1e-5f};
    normDev = {qWDev.get(), kWDev.get(), 1e-5f};
  }
  const int32_t *seqLensHostPtr = c.ragged ? seqLens.data() : nullptr;
  const int32_t *seqLensDevPtr = c.ragged ? seqLensDev.get() : nullptr;

  // Reference on the host copies.
  std::vector<uint16_t> qkvWant = qkv, qOutWant = qOutHost, kWant = kHost,
                        vWant = vHost;
  KvCacheView viewHost =
      makeView(kWant.data(), vWant.data(), blockTables.data());
  KvCacheView viewDev = makeView(kDev.get(), vDev.get(), tablesDev.get());
  Status ref;
  RopeKvArgs args;
  switch (c.variant) {
  case RopeKvVariant::Packed:
    ref = ropeKvWritePackedRef(dims, qkvWant.data(), csHost, normHost, viewHost,
                               seqLensHostPtr);
    args = RopeKvArgs::packed(dims, qkvDev.get(), csDev, normDev, viewDev,
                              seqLensDevPtr);
    break;
  case RopeKvVariant::Continuous:
    ref = ropeKvWriteContinuousRef(dims, qkvWant.data(), qOutWant.data(),
                                   kvLens.data(), csHost, normHost, viewHost,
                                   seqLensHostPtr);
    args = RopeKvArgs::continuous(dims, qkvDev.get(), qOutDev.get(),
                                  kvLensDev.get(), csDev, normDev, viewDev,
                                  seqLensDevPtr);
    break;
  case RopeKvVariant::Tree:
    ref = ropeKvWriteTreeRef(dims, qkvWant.data(), qOutWant.data(),
                             kvLens.data(), posIds.data(), csHost, normHost,
                             viewHost, seqLensHostPtr);
    args = RopeKvArgs::tree(dims, qkvDev.get(), qOutDev.get(), kvLensDev.get(),
                            posIdsDev.get(), csDev, normDev, viewDev,
                            seqLensDevPtr);
    break;
  }
  const Status gpu = launchRopeKvWrite(args, nullptr, c.kernel);
  INFO("reference: " << ref.message() << " gpu: " << gpu.message());
  REQUIRE(ref.ok());
  REQUIRE(gpu.ok());
  CUDA_REQUIRE(cudaDeviceSynchronize());

  const int32_t rot = c.rotaryDim;
  const bool norm = c.qkNorm;
  auto copyLike = [&](size_t i) { return !norm && int32_t(i % D) >= rot; };
  auto qkvExact = [&](size_t i) {
    int64_t head = int64_t(i / D) % numHeads;
    return !packed || head >= c.numQHeads + c.numKvHeads || copyLike(i);
  };
  auto kExact = [&](size_t i) {
    bool isV = false;
    if (!paged)
      isV = (i / (size_t(capacity) * D * c.numKvHeads)) % 2 == 1;
    else if (c.combinedPool)
      isV = int64_t(i % blockStride) >= blockStride / 2;
    return isV || copyLike(i);
  };
  CHECK_MATCHES("qkv",
                compareAct(qkvDev.download(), qkvWant, c.dtype, qkvExact));
  if (!packed) {
    CompareResult q =
        compareAct(qOutDev.download(), qOutWant, c.dtype, copyLike);
    CHECK_MATCHES("qOut", q);
    CHECK(q.written > 0);
  }
  CompareResult k = compareAct(kDev.download(), kWant, c.dtype, kExact);
  CHECK_MATCHES(paged && !c.combinedPool ? "K cache" : "KV cache", k);
  CHECK(k.written > 0);
  if (vSize)
    CHECK_MATCHES("V cache", compareAct(vDev.download(), vWant, c.dtype,
                                        [](size_t) { return true; }));
}

} // namespace strata::kernels::test

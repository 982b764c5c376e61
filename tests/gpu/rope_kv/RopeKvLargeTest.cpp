// rope_kv_write at the sizes where 32-bit index arithmetic would break:
// positions near one million, a 128K-token cache, and a paged pool larger
// than 2^31 elements, each through both kernels; plus the launchers' error
// convention.
#include "RopeKvCase.h"
#include "RopeKvTestSupport.h"
#include "kernels/cpu/RopeKvWriteRef.h"
#include "kernels/rope_kv/RopeKvWrite.h"

#include <catch2/catch.hpp>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {
const RopeKvKernel kKernels[] = {RopeKvKernel::PerThread,
                                 RopeKvKernel::Streamed};
} // namespace

TEST_CASE("positions near one million", "[gpu][rope_kv][large]") {
  std::mt19937_64 rng(testSeed() + 11);
  for (RopeKvKernel kernel : kKernels)
    for (RopeKvVariant variant :
         {RopeKvVariant::Continuous, RopeKvVariant::Tree})
      for (ActDType dtype : {ActDType::BF16, ActDType::F16}) {
        RopeKvCase c;
        c.kernel = kernel;
        c.variant = variant;
        c.layout = KvCacheLayout::Paged;
        c.dtype = dtype;
        c.pairing = dtype == ActDType::BF16 ? RopePairingKind::Neox
                                            : RopePairingKind::GptJ;
        c.qkNorm = variant == RopeKvVariant::Tree;
        c.batch = 3;
        c.seq = 5;
        c.numQHeads = 32;
        c.numKvHeads = 8;
        c.headDim = 128;
        c.rotaryDim = 64;
        c.minCached = 1000000;
        c.maxCached = 1040000;
        c.blockSize = 16;
        c.tableRows = 1 << 20;
        runRopeKvCase(c, rng);
      }
  // The same positions through a contiguous cache of over a million slots.
  RopeKvCase c;
  c.variant = RopeKvVariant::Continuous;
  c.layout = KvCacheLayout::Contiguous;
  c.batch = 1;
  c.seq = 3;
  c.numQHeads = 4;
  c.numKvHeads = 1;
  c.headDim = 64;
  c.rotaryDim = 64;
  c.minCached = 1000000;
  c.maxCached = 1040000;
  c.tableRows = 1 << 20;
  for (RopeKvKernel kernel : kKernels) {
    c.kernel = kernel;
    runRopeKvCase(c, rng);
  }
}

TEST_CASE("a contiguous cache of 128K tokens", "[gpu][rope_kv][large]") {
  std::mt19937_64 rng(testSeed() + 12);
  for (RopeKvKernel kernel : kKernels)
    for (RopeKvVariant variant :
         {RopeKvVariant::Packed, RopeKvVariant::Continuous}) {
      RopeKvCase c;
      c.kernel = kernel;
      c.variant = variant;
      c.layout = KvCacheLayout::Contiguous;
      // Packed fills all 131075 slots of one sequence; continuous appends
      // after ~131000 cached tokens of two.
      const bool packed = variant == RopeKvVariant::Packed;
      c.batch = packed ? 1 : 2;
      c.seq = packed ? 131075 : 5;
      c.numQHeads = packed ? 2 : 8;
      c.numKvHeads = packed ? 1 : 2;
      c.headDim = 64;
      c.rotaryDim = 64;
      c.minCached = 131000;
      c.maxCached = 131070;
      runRopeKvCase(c, rng);
    }
}

TEST_CASE("a paged pool beyond 2^31 elements", "[gpu][rope_kv][large]") {
  // Hkv 8 x blockSize 16 x headDim 128 = 16384 elements per block, so block
  // ids above 131072 sit past element 2^31 (and byte 2^32). Only the touched
  // blocks and their neighbours are compared: the pools are 4.6 GB each.
  const int64_t numBlocks = 140000, perBlock = 8 * 16 * 128;
  RopeKvDims dims;
  dims.batch = 2;
  dims.seq = 37;
  dims.numQHeads = 32;
  dims.numKvHeads = 8;
  dims.headDim = 128;
  dims.rotaryDim = 128;
  dims.dtype = ActDType::BF16;
  std::mt19937_64 rng(testSeed() + 13);
  std::vector<uint16_t> qkv =
      randomAct(rng, dims.dtype, 2 * 37 * 48 * 128, 0.25f, 2.0f);
  const int64_t maxBlocks = 3;
  std::vector<int32_t> tables = {139990, 139995, 139999, 131073, 1, 139997};
  RopeTableSpec spec;
  spec.rotaryDim = 128;
  spec.maxPos = 64;
  std::vector<float> table;
  REQUIRE(buildRopeCosSin(spec, table).ok());

  // The reference writes into a small pool holding only the blocks of
  // interest (renumbered), then each is compared with its device block.
  std::vector<int32_t> blocks = {139989, 139990, 139991, 139994, 139995,
                                 139996, 139997, 139998, 139999, 131072,
                                 131073, 131074, 0,      1,      2};
  std::vector<int32_t> local(tables.size());
  for (size_t i = 0; i < tables.size(); ++i)
    local[i] = int32_t(std::find(blocks.begin(), blocks.end(), tables[i]) -
                       blocks.begin());
  std::vector<uint16_t> kWant(blocks.size() * perBlock, kPoison), vWant = kWant;
  std::vector<uint16_t> qkvWant = qkv;
  REQUIRE(ropeKvWritePackedRef(dims, qkvWant.data(),
                               CosSinCache{table.data(), 1, 64}, {},
                               KvCacheView::paged(kWant.data(), vWant.data(),
                                                  int64_t(blocks.size()), 16,
                                                  local.data(), maxBlocks))
              .ok());

  DeviceBuffer<uint16_t> kDev(numBlocks * perBlock), vDev(numBlocks * perBlock);
  DeviceBuffer<int32_t> tablesDev(tables);
  DeviceBuffer<float> tableDev(table);
  for (RopeKvKernel kernel : kKernels) {
    INFO((kernel == RopeKvKernel::Streamed ? "streamed" : "per-thread"));
    DeviceBuffer<uint16_t> qkvDev(qkv);
    CUDA_REQUIRE(cudaMemset(kDev.get(), 0xff, kDev.size() * 2));
    CUDA_REQUIRE(cudaMemset(vDev.get(), 0xff, vDev.size() * 2));
    Status s = launchRopeKvWrite(
        RopeKvArgs::packed(dims, qkvDev.get(),
                           CosSinCache{tableDev.get(), 1, 64}, {},
                           KvCacheView::paged(kDev.get(), vDev.get(), numBlocks,
                                              16, tablesDev.get(), maxBlocks),
                           nullptr),
        nullptr, kernel);
    INFO(s.message());
    REQUIRE(s.ok());
    CUDA_REQUIRE(cudaDeviceSynchronize());

    std::vector<uint16_t> got(perBlock);
    for (size_t i = 0; i < blocks.size(); ++i) {
      INFO("block " << blocks[i]);
      for (int kv = 0; kv < 2; ++kv) {
        const uint16_t *src =
            (kv ? vDev.get() : kDev.get()) + int64_t(blocks[i]) * perBlock;
        CUDA_REQUIRE(
            cudaMemcpy(got.data(), src, perBlock * 2, cudaMemcpyDeviceToHost));
        std::vector<uint16_t> want((kv ? vWant : kWant).begin() + i * perBlock,
                                   (kv ? vWant : kWant).begin() +
                                       (i + 1) * perBlock);
        CHECK_MATCHES(kv ? "V block" : "K block",
                      compareAct(got, want, dims.dtype,
                                 [kv](size_t) { return kv == 1; }));
      }
    }
    CHECK_MATCHES("qkv",
                  compareAct(qkvDev.download(), qkvWant, dims.dtype,
                             [](size_t i) { return (i / 128) % 48 >= 40; }));
  }
}

TEST_CASE("launchers reject bad shapes before launching", "[gpu][rope_kv]") {
  RopeKvDims dims;
  dims.batch = 2;
  dims.seq = 3;
  dims.numQHeads = 4;
  dims.numKvHeads = 2;
  dims.headDim = 64;
  dims.rotaryDim = 64;
  DeviceBuffer<uint16_t> qkv(2 * 3 * 8 * 64), qOut(2 * 3 * 4 * 64),
      cache(2 * 2 * 2 * 8 * 64);
  DeviceBuffer<float> table(16 * 64);
  DeviceBuffer<int32_t> kvLens(2);
  CUDA_REQUIRE(cudaMemset(qOut.get(), 0xff, qOut.size() * 2));
  CosSinCache cs{table.get(), 1, 16};
  auto view = KvCacheView::contiguous(cache.get(), 8);

  RopeKvDims bad = dims;
  bad.headDim = 72;
  bad.rotaryDim = 72; // not a multiple of 16
  Status s = ropeKvWriteContinuous(bad, qkv.get(), qOut.get(), kvLens.get(), cs,
                                   {}, view, nullptr, nullptr);
  CHECK(s.message() == "rope_kv_write(continuous): rotaryDim 72 must be a "
                       "multiple of 16 in [16, headDim 72]");
  s = ropeKvWriteTree(dims, qkv.get(), qOut.get(), kvLens.get(), nullptr, cs,
                      {}, view, nullptr, nullptr);
  CHECK(s.message() ==
        "rope_kv_write(tree): posIds [batch, seq] must not be null");
  s = ropeKvWritePacked(dims, static_cast<uint16_t *>(qkv.get()) + 1, cs, {},
                        view, nullptr, nullptr);
  CHECK(s.message() ==
        "rope_kv_write(packed): qkv must be a non-null 16-byte aligned "
        "pointer");
  CUDA_REQUIRE(cudaDeviceSynchronize());
  for (uint16_t x : qOut.download())
    REQUIRE(x == kPoison); // nothing ran
}

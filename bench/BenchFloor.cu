// Floors of one launch on this device, timed as the attention rows are (one
// launch between two events; per call in a graph): an empty kernel, and
// kernels that only read the bytes of a decode case: streamed in address
// order, in shuffled 4 KB chunks (a 16-slot page of one kv head), and in
// those chunks through shared-memory stages shaped as decode's. An
// event-timed decode target below the plain read's time is beyond any
// kernel of one launch; the difference between the events and graph rows
// is what a launch costs that a graph's replay hides.
#include "bench/BenchFloor.h"
#include "kernels/common/Barriers.cuh"
#include "kernels/common/MmaSync.cuh"
#include "kernels/common/SmemLimit.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>

namespace strata::bench {
namespace {

using namespace strata::kernels;

__global__ void emptyKernel() {}

// Grid-stride 16-byte streaming loads, four in flight per thread. The
// store never happens for the buffer's fill (bytes 0x5a: the XOR is 0 or
// 0x5a5a5a5a) but keeps every load.
__global__ void streamReadKernel(const uint4 *__restrict__ src, int64_t n16,
                                 uint32_t *sink) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  uint32_t acc = 0;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    const uint4 a = __ldcs(src + i), b = __ldcs(src + i + stride),
                c = __ldcs(src + i + 2 * stride),
                d = __ldcs(src + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^
           c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n16; i += stride) {
    const uint4 a = __ldcs(src + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9e3779b9u)
    *sink = acc;
}

// The same, over 4 KB chunks taken in the order of `chunks` (the cache's
// page-heads at 16-slot pages, scattered as the attention cases'
// pages are).
__global__ void chunkReadKernel(const uint4 *__restrict__ src,
                                const int32_t *__restrict__ chunks, int64_t n16,
                                uint32_t *sink) {
  constexpr int kChunk16 = 256; // 4 KB
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  uint32_t acc = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n16;
       i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int64_t j = i + u * stride;
      v[u] = j < n16 ? __ldcs(src +
                              int64_t(__ldg(chunks + j / kChunk16)) * kChunk16 +
                              j % kChunk16)
                     : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
      acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x9e3779b9u)
    *sink = acc;
}

// Decode-shaped: each block streams its own run of 4 KB chunks (in the order
// of `chunks`) through NST shared-memory stages of SKB KB, by 16-byte
// cp.async from 128 threads or (BULK) by one thread's bulk copies of whole
// chunks completing on an mbarrier per stage.
template <int NST, int SKB, bool BULK>
__global__ void __launch_bounds__(128)
    stagedReadKernel(const unsigned char *__restrict__ src,
                     const int32_t *__restrict__ chunks, int stagesPerBlock,
                     uint32_t *sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bars[NST];
  constexpr int CPS = SKB / 4; // chunks per stage
  const uint32_t base = uint32_t(__cvta_generic_to_shared(smem));
  const uint32_t bar0 = uint32_t(__cvta_generic_to_shared(bars));
  const int tid = threadIdx.x;
  const int64_t chunk0 = int64_t(blockIdx.x) * stagesPerBlock * CPS;
  if (BULK && tid == 0) {
    for (int s = 0; s < NST; ++s)
      mbarInit(bar0 + 8 * s, 1);
    mbarInitFence();
  }
  __syncthreads();
  auto issue = [&](int stage) {
    const uint32_t dst = base + (stage % NST) * SKB * 1024;
    if constexpr (BULK) {
      if (tid == 0) {
        // The stage was last read through the generic proxy (after the
        // block barrier); the copy engine writes it through the async one.
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        const uint32_t bar = bar0 + 8 * (stage % NST);
        mbarArriveExpectTx(bar, SKB * 1024);
        for (int c = 0; c < CPS; ++c)
          bulkCopyToShared(
              dst + c * 4096,
              src + int64_t(__ldg(chunks + chunk0 + stage * CPS + c)) * 4096,
              4096, bar);
      }
    } else {
      for (int u = tid; u < SKB * 64; u += 128) {
        const int c = u / 256, w = u % 256;
        cpAsync16(dst + u * 16,
                  src +
                      int64_t(__ldg(chunks + chunk0 + stage * CPS + c)) * 4096 +
                      w * 16,
                  true);
      }
      cpAsyncCommit();
    }
  };
  for (int s = 0; s < NST - 1 && s < stagesPerBlock; ++s)
    issue(s);
  uint32_t acc = 0;
  for (int it = 0; it < stagesPerBlock; ++it) {
    if (it + NST - 1 < stagesPerBlock)
      issue(it + NST - 1);
    else if (!BULK)
      cpAsyncCommit();
    if constexpr (BULK)
      mbarWait(bar0 + 8 * (it % NST), (it / NST) & 1);
    else
      cpAsyncWait<NST - 1>();
    __syncthreads();
    const uint4 v = *reinterpret_cast<const uint4 *>(
        smem + (it % NST) * SKB * 1024 + tid * 16);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
    __syncthreads();
  }
  if (acc == 0x9e3779b9u)
    *sink = acc;
}

/// The 4 KB chunks decode's blocks read, in the layout of the cache
/// ([page][head][slot][128] bf16 pools, K then V, pages of `slots` slots
/// shuffled over the pool as the attention cases' pages are): block
/// (sequence, head, split) reads its split's keys a 64-key stage at a time,
/// the K then the V chunks of each page-head the stage covers. Returns the
/// blocks; `order` receives, per block and stage, the stage's 8 chunks
/// (keys past the last whole stage of a split are left out).
int decodeChunkOrder(const FloorCase &c, int slots,
                     std::vector<int32_t> &order) {
  const int pagesPerSeq = c.context / slots, chunksPerPageHead = slots / 16;
  const int64_t pages = int64_t(c.batch) * pagesPerSeq;
  const int64_t vBase = pages * c.kvHeads * chunksPerPageHead;
  std::vector<int32_t> ids(pages);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
  int keysPerSplit = (c.context + c.splits - 1) / c.splits;
  keysPerSplit = (keysPerSplit + 63) / 64 * 64;
  const int splits = c.context / keysPerSplit, stages = keysPerSplit / 64;
  order.clear();
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.kvHeads; ++h)
      for (int sp = 0; sp < splits; ++sp)
        for (int st = 0; st < stages; ++st)
          for (int pool = 0; pool < 2; ++pool)
            for (int k = 0; k < 64; k += 16) {
              const int key = sp * keysPerSplit + st * 64 + k;
              const int64_t page = ids[b * pagesPerSeq + key / slots];
              order.push_back(int32_t(
                  pool * vBase + (page * c.kvHeads + h) * chunksPerPageHead +
                  (key % slots) / 16));
            }
  return c.batch * c.kvHeads * splits;
}

} // namespace

void addLaunchFloorRows(const BenchOptions &options, BenchReport &report,
                        const std::vector<FloorCase> &cases) {
  int sms = 0, device = 0;
  BENCH_CUDA(cudaGetDevice(&device));
  BENCH_CUDA(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreate(&stream));
  const int eventIters = options.iters(200), graphIters = options.iters(50);

  // Two blocks of 128 threads per SM: decode's grid (264 blocks at b=1).
  BenchRow empty{"floor: empty kernel",
                 std::to_string(2 * sms) + " x 128",
                 0,
                 0,
                 "read",
                 "no work: a launch's own cost"};
  if (options.wants(empty.name))
    addEventAndGraphRows(report, stream, 1, eventIters, graphIters, empty,
                         [&](int) {
                           emptyKernel<<<2 * sms, 128, 0, stream>>>();
                           BENCH_CUDA(cudaGetLastError());
                         });

  double largest = 0;
  for (const FloorCase &c : cases)
    largest = std::max(largest, c.bytes * rotatingSets(c.bytes));
  void *buf = nullptr;
  uint32_t *sink = nullptr;
  int32_t *chunks = nullptr;
  BENCH_CUDA(cudaMalloc(&buf, size_t(largest)));
  BENCH_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  BENCH_CUDA(cudaMemset(buf, 0x5a, size_t(largest)));
  for (const FloorCase &c : cases) {
    // Whole 4 KB chunks, so that the kernels read the same bytes.
    const int64_t nChunks = int64_t(c.bytes) / 4096, n16 = nChunks * 256;
    const int sets = rotatingSets(c.bytes);
    const std::string note = "the bytes of " + c.what + "; " +
                             std::to_string(sets) + " sets rotated";
    std::vector<int32_t> order(nChunks);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(7));
    BENCH_CUDA(cudaFree(chunks));
    BENCH_CUDA(cudaMalloc(&chunks, order.size() * sizeof(int32_t)));
    BENCH_CUDA(cudaMemcpy(chunks, order.data(), order.size() * 4,
                          cudaMemcpyHostToDevice));
    // The filter sees the shape too, so that one case can be picked.
    auto add = [&](const BenchRow &row, const std::function<void(int)> &run) {
      if (options.wants(row.name + " " + c.shape))
        addEventAndGraphRows(report, stream, sets, eventIters, graphIters, row,
                             run);
    };
    auto setBase = [&](int set) {
      return static_cast<const unsigned char *>(buf) + set * n16 * 16;
    };
    add({"floor: stream read", c.shape, double(n16) * 16, 0, "read", note},
        [&](int set) {
          streamReadKernel<<<4 * sms, 512, 0, stream>>>(
              reinterpret_cast<const uint4 *>(setBase(set)), n16, sink);
          BENCH_CUDA(cudaGetLastError());
        });
    add({"floor: 4 KB chunks read", c.shape, double(n16) * 16, 0, "read",
         note + ", chunks shuffled"},
        [&](int set) {
          chunkReadKernel<<<4 * sms, 512, 0, stream>>>(
              reinterpret_cast<const uint4 *>(setBase(set)), chunks, n16, sink);
          BENCH_CUDA(cudaGetLastError());
        });
    // Shuffled chunks through shared-memory stages, each block its own run
    // of chunks (whole stages: a little less than the case's bytes).
    auto staged = [&](auto kernel, int nst, int skb, int blocksPerSm,
                      const char *how) {
      const int blocks = blocksPerSm * sms;
      const int stagesPerBlock = int(nChunks / (skb / 4) / blocks);
      const int smem = nst * skb * 1024;
      BENCH_CUDA(ensureDynamicSmem(kernel, smem));
      add({std::string("floor: staged ") + how, c.shape,
           double(stagesPerBlock) * blocks * skb * 1024, 0, "read",
           note + ", chunks shuffled, " + std::to_string(nst) + " x " +
               std::to_string(skb) + " KB stages, " +
               std::to_string(blocksPerSm) + " blocks of 128 a SM"},
          [&](int set) {
            kernel<<<blocks, 128, smem, stream>>>(setBase(set), chunks,
                                                  stagesPerBlock, sink);
            BENCH_CUDA(cudaGetLastError());
          });
    };
    // Decode's shape (3 stages of 32 KB, two blocks per SM), by cp.async
    // and by bulk copies; and three blocks per SM of 4 stages of 16 KB.
    staged(stagedReadKernel<3, 32, false>, 3, 32, 2, "cp.async");
    staged(stagedReadKernel<3, 32, true>, 3, 32, 2, "bulk");
    staged(stagedReadKernel<4, 16, false>, 4, 16, 3, "cp.async");
    // Decode's own blocks and addresses through decode's stage shape, with
    // pages of 16 and of 64 slots: what the page size costs the memory
    // system itself.
    for (int slots : {16, 64}) {
      if (c.batch == 0 || c.context % slots != 0)
        continue;
      const int blocks = decodeChunkOrder(c, slots, order);
      const int stagesPerBlock = int(order.size() / 8 / blocks);
      BENCH_CUDA(cudaFree(chunks));
      BENCH_CUDA(cudaMalloc(&chunks, order.size() * sizeof(int32_t)));
      BENCH_CUDA(cudaMemcpy(chunks, order.data(), order.size() * 4,
                            cudaMemcpyHostToDevice));
      auto kernel = stagedReadKernel<3, 32, false>;
      add({"floor: decode's pages of " + std::to_string(slots) + " slots",
           c.shape, double(order.size()) * 4096, 0, "read",
           note + ", " + std::to_string(blocks) +
               " blocks of 128 (decode's grid), 3 x 32 KB cp.async stages"},
          [&](int set) {
            kernel<<<blocks, 128, 3 * 32 * 1024, stream>>>(
                setBase(set), chunks, stagesPerBlock, sink);
            BENCH_CUDA(cudaGetLastError());
          });
    }
  }
  BENCH_CUDA(cudaStreamSynchronize(stream));
  BENCH_CUDA(cudaStreamDestroy(stream));
  BENCH_CUDA(cudaFree(buf));
  BENCH_CUDA(cudaFree(sink));
  BENCH_CUDA(cudaFree(chunks));
}

} // namespace strata::bench

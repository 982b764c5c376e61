// Seeded sampling with temperature, top-k and top-p, one block per row.
//
// The CPU reference sorts the row; here nothing is sorted. Every decision
// of the reference is "the first position of the sorted row where a running
// sum crosses a threshold": the k-th candidate (a count), the top-p cut and
// the drawn token (probability mass). Such a position is found by radix
// selection on the logit's order-preserving key: four passes of 8 bits, each
// histogramming the count and the mass of the candidates still matching the
// chosen prefix, then one scan over the 256 buckets. Equal logits are then
// resolved by id, as the reference's order does. A kept set is the prefix
// of the order up to a (key, id) boundary, so filters compose by restricting
// later passes to it. All passes read the row, which stays in L2.
#include "kernels/sampling/Sampling.h"

#include "kernels/common/CudaCheck.h"
#include "kernels/common/Pdl.cuh"
#include "kernels/sampling/SamplingDevice.cuh"

#include <climits>
#include <string>

namespace strata::kernels {

namespace {

using namespace sampling;

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
// Histogram copies, shared by kWarps / kCopies warps each: fewer collisions
// on shared-memory atomics at 16 KB of shared memory.
constexpr int kCopies = 8;
// Row elements each thread loads before using any: the passes are bound by
// the latency of L2 reads, not by their bandwidth.
constexpr int kBatch = 8;

/// Boundary of a kept prefix: element (key, id) is kept when key > b.key, or
/// key == b.key and id <= b.id.
struct Bound {
  uint32_t key;
  int32_t id;
};

__device__ __forceinline__ bool kept(uint32_t key, int32_t id, Bound b) {
  return key > b.key || (key == b.key && id <= b.id);
}

struct Shared {
  uint32_t count[kCopies][256];
  double mass[kCopies][256];
  uint32_t bucketCount[256];
  double bucketMass[256];
  uint64_t scratch[32];
  double dscratch[32];
  uint32_t warpMatches[kWarps];
  uint32_t prefix;
  double base;
  int32_t tieRank; // 1-based rank among equal keys
  int32_t tieWarp;
  int32_t result;
  double through;
};

// Probabilities are taken and summed in double, as the reference does: in
// a flat distribution over a large vocabulary each token holds ~1/vocab of
// the mass, so fp32 (relative error ~1e-7) would move a boundary onto a
// neighbouring token in ~vocab * 1e-7 of the draws.
struct RowCtx {
  const float *logits;
  int vocab;
  double maxLogit;
  double temperature;
  __device__ double prob(float l) const {
    return exp((double(l) - maxLogit) / temperature);
  }
};

/// Calls f(i, logits[i]) for every i of the row owned by this thread, with
/// kBatch loads in flight.
template <typename F> __device__ void forRow(const RowCtx &row, F f) {
  for (int b = threadIdx.x; b < row.vocab; b += kThreads * kBatch) {
    float l[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      int i = b + u * kThreads;
      l[u] = i < row.vocab ? row.logits[i] : 0.f;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      int i = b + u * kThreads;
      if (i < row.vocab)
        f(i, l[u]);
    }
  }
}

__device__ double blockSum(double v, Shared &sh) {
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    sh.dscratch[threadIdx.x / 32] = v;
  __syncthreads();
  double r = 0;
  for (int w = 0; w < kWarps; ++w)
    r += sh.dscratch[w];
  return r;
}

/// The first position of the kept prefix `within` whose running weight
/// (1 per element, or its probability when kMass) exceeds x (strict) or
/// reaches it; the last kept element when rounding leaves x beyond the
/// total. Returns the boundary and, in `through`, the weight up to and
/// including it.
template <bool kMass>
__device__ Bound selectPosition(const RowCtx &row, double x, bool strict,
                                Bound within, Shared &sh, double &through) {
  const int tid = threadIdx.x, copy = (tid / 32) % kCopies;
  uint32_t prefix = 0, mask = 0;
  double base = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int i = tid; i < kCopies * 256; i += kThreads) {
      (&sh.count[0][0])[i] = 0;
      (&sh.mass[0][0])[i] = 0.0;
    }
    __syncthreads();
    forRow(row, [&](int i, float l) {
      uint32_t key = logitKey(l);
      if ((key & mask) != prefix || !kept(key, i, within))
        return;
      uint32_t d = (key >> shift) & 255u;
      atomicAdd(&sh.count[copy][d], 1u);
      if constexpr (kMass)
        atomicAdd(&sh.mass[copy][d], row.prob(l));
    });
    __syncthreads();
    if (tid < 256) {
      uint32_t c = 0;
      double m = 0;
      for (int k = 0; k < kCopies; ++k) {
        c += sh.count[k][tid];
        m += sh.mass[k][tid];
      }
      sh.bucketCount[tid] = c;
      sh.bucketMass[tid] = kMass ? m : double(c);
    }
    __syncthreads();
    if (tid == 0) {
      int chosen = -1, lastNonEmpty = 0;
      for (int d = 255; d >= 0; --d) {
        if (sh.bucketCount[d] == 0)
          continue;
        lastNonEmpty = d;
        double w = sh.bucketMass[d];
        if (strict ? base + w > x : base + w >= x) {
          chosen = d;
          break;
        }
        base += w;
      }
      if (chosen < 0) {
        chosen = lastNonEmpty;
        base -= sh.bucketMass[chosen];
      }
      sh.prefix = prefix | (uint32_t(chosen) << shift);
      sh.base = base;
    }
    __syncthreads();
    prefix = sh.prefix;
    base = sh.base;
    mask |= 255u << shift;
  }

  // prefix is now the key; the elements with that key all weigh the same.
  if (tid == 0) {
    int n = int(sh.bucketCount[prefix & 255u]);
    double w = kMass ? row.prob(keyLogit(prefix)) : 1.0;
    auto crosses = [&](int j) {
      double s = base + j * w;
      return strict ? s > x : s >= x;
    };
    int j = n;
    if (w > 0) {
      double q = (x - base) / w;
      j = q < 0 ? 1 : (q >= n ? n : int(q) + (strict ? 1 : 0));
      j = j < 1 ? 1 : (j > n ? n : j);
      while (j > 1 && crosses(j - 1))
        --j;
      while (j < n && !crosses(j))
        ++j;
    }
    sh.tieRank = j;
    sh.through = base + j * w;
  }
  __syncthreads();

  // The tieRank-th lowest id with this key: each warp counts the matches in
  // its contiguous slice of ids, then the owning warp finds the exact one.
  const int warp = tid / 32, lane = tid % 32;
  const int slice = ((row.vocab + kWarps - 1) / kWarps + 31) / 32 * 32;
  const int lo = warp * slice;
  const int hi = min(row.vocab, lo + slice);
  auto match = [&](int i) {
    return i < hi && logitKey(row.logits[i]) == prefix &&
           kept(prefix, i, within);
  };
  uint32_t found = 0;
  for (int b = lo; b < hi; b += 32 * kBatch) {
    bool m[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      m[u] = match(b + 32 * u + lane);
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      found += __popc(__ballot_sync(0xffffffffu, m[u]));
  }
  if (lane == 0)
    sh.warpMatches[warp] = found;
  __syncthreads();
  if (tid == 0) {
    int rank = sh.tieRank, w = 0;
    while (w < kWarps - 1 && int(sh.warpMatches[w]) < rank)
      rank -= int(sh.warpMatches[w++]);
    sh.tieWarp = w;
    sh.tieRank = rank;
  }
  __syncthreads();
  if (warp == sh.tieWarp) {
    int rank = sh.tieRank;
    bool done = false;
    for (int b = lo; b < hi && !done; b += 32 * kBatch) {
      bool m[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        m[u] = match(b + 32 * u + lane);
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        uint32_t bits = __ballot_sync(0xffffffffu, m[u]);
        int c = __popc(bits);
        if (done)
          continue;
        if (c >= rank) {
          for (int r = 1; r < rank; ++r)
            bits &= bits - 1; // drop the lowest set bits before ours
          if (lane == 0)
            sh.result = b + 32 * u + __ffs(bits) - 1;
          done = true;
        } else {
          rank -= c;
        }
      }
    }
  }
  __syncthreads();
  through = sh.through;
  return Bound{prefix, sh.result};
}

__global__ void __launch_bounds__(kThreads)
    sampleKernel(const float *logits, int vocab, const SampleRowParams *params,
                 int32_t *outIds) {
  pdlWait();
  pdlLaunchDependents();
  __shared__ Shared sh;
  const int64_t rowIndex = blockIdx.x;
  const float *r = logits + rowIndex * vocab;
  const SampleRowParams p = params[rowIndex];

  RowCtx row{r, vocab, 0.0, p.temperature};
  uint64_t best = 0;
  forRow(row, [&](int i, float l) {
    uint64_t v = packKeyId(l, uint32_t(i));
    best = v > best ? v : best;
  });
  best = blockMaxU64(best, sh.scratch);
  if (p.temperature == 0.0 || vocab == 1) {
    if (threadIdx.x == 0)
      outIds[rowIndex] = int32_t(unpackId(best));
    return;
  }

  row.maxLogit = keyLogit(uint32_t(best >> 32));
  Bound all{0u, INT_MAX};
  Bound within = all;
  double through = 0;
  if (p.topK > 0 && p.topK < vocab)
    within =
        selectPosition<false>(row, double(p.topK - 1), true, all, sh, through);

  double partialSum = 0;
  forRow(row, [&](int i, float l) {
    if (kept(logitKey(l), i, within))
      partialSum += row.prob(l);
  });
  double total = blockSum(partialSum, sh);

  if (p.topP < 1.0) {
    within =
        selectPosition<true>(row, p.topP * total, false, within, sh, through);
    total = through;
  }
  double u = counterUniform(p.seed, p.seqId, p.step);
  Bound pick = selectPosition<true>(row, u * total, true, within, sh, through);
  if (threadIdx.x == 0)
    outIds[rowIndex] = pick.id;
}

} // namespace

Status sampleRows(const float *logits, int64_t rows, int64_t vocab,
                  const SampleRowParams *params, int32_t *outIds,
                  cudaStream_t stream) {
  if (rows < 0 || rows > 0x7fffffff || vocab <= 0 || vocab > 0x7fffffff)
    return Status::error("sample: need rows >= 0 and vocab in [1, 2^31), "
                         "got " +
                         std::to_string(rows) + " x " + std::to_string(vocab));
  if (!logits || !params || !outIds)
    return Status::error("sample: null operand");
  if (rows == 0)
    return Status::success();
  return cudaStatus(launchDependent(sampleKernel, dim3(unsigned(rows)),
                                    dim3(kThreads), 0, stream, logits,
                                    int(vocab), params, outIds),
                    "sample launch");
}

} // namespace strata::kernels

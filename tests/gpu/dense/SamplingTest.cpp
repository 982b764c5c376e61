// GPU argmax and sampling against kernels/cpu/SamplingRef.h on the same
// logits: the same token id is expected. Logits are random (never all
// equal), some rows quantised so that many logits tie and the id order
// decides; vocabularies up to 256K, some not multiples of 4 (scalar path).
// A sampled draw may legitimately differ only when u, or the top-p cut,
// lands within summation-order rounding of a boundary between two tokens:
// each differing draw must equal the reference's draw with u or top-p moved
// by 1e-6, and such draws must stay rare (at most 1 in 50; reported).
#include "../rope_kv/RopeKvTestSupport.h"

#include "kernels/cpu/SamplingRef.h"
#include "kernels/sampling/Sampling.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {

std::vector<float> randomLogits(std::mt19937_64 &rng, int64_t rows,
                                int64_t vocab, bool quantised) {
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> v(size_t(rows * vocab));
  for (auto &f : v) {
    f = dist(rng);
    if (quantised)
      f = std::round(f * 4.0f) / 4.0f; // ~100 distinct values: many ties
  }
  return v;
}

} // namespace

TEST_CASE("argmax matches the CPU reference, ties to the lowest id",
          "[gpu][dense][sampling]") {
  std::mt19937_64 rng(testSeed() + 20);
  const int64_t vocabs[] = {1, 7, 1000, 2049, 131073, 128256, 262144};
  for (int64_t vocab : vocabs) {
    const int64_t rows = 5;
    INFO("vocab " << vocab << " seed " << testSeed());
    auto logits = randomLogits(rng, rows, vocab, vocab % 2 == 1);
    // Row 1: the maximum appears twice, the later copy first in memory
    // order of a block split.
    if (vocab > 10) {
      float *r = &logits[size_t(vocab)];
      int64_t a = int64_t(rng() % (vocab / 2)), b = vocab - 1 - a / 3;
      r[a] = r[b] = 100.0f;
    }
    DeviceBuffer<float> dl(logits);
    DeviceBuffer<int32_t> out(std::vector<int32_t>(rows, -7));
    size_t wsBytes = argmaxWorkspaceBytes(rows, vocab);
    DeviceBuffer<uint8_t> ws(wsBytes);
    if (wsBytes)
      CUDA_REQUIRE(cudaMemset(ws.get(), 0, wsBytes));
    for (int rep = 0; rep < 2; ++rep) { // the workspace resets itself
      Status s = argmaxRows(dl.get(), rows, vocab, out.get(), ws.get(), wsBytes,
                            nullptr);
      INFO(s.message());
      REQUIRE(s.ok());
      CUDA_REQUIRE(cudaDeviceSynchronize());
      auto got = out.download();
      for (int64_t r = 0; r < rows; ++r)
        CHECK(got[r] == argmaxRef(&logits[size_t(r * vocab)], vocab));
    }
  }
}

TEST_CASE("sampling draws the same token as the CPU reference",
          "[gpu][dense][sampling]") {
  std::mt19937_64 rng(testSeed() + 21);
  struct P {
    double t;
    int64_t k;
    double p;
  };
  const P settings[] = {{0.0, 0, 1.0},  {1.0, 0, 1.0},    {0.7, 50, 1.0},
                        {1.0, 0, 0.9},  {1.3, 40, 0.8},   {0.5, 1, 1.0},
                        {2.0, 0, 0.95}, {1.0, 3000, 0.5}, {0.8, 7, 0.99}};
  const int nSettings = sizeof(settings) / sizeof(settings[0]);
  int64_t draws = 0, boundaryDraws = 0;
  // Relative rounding of a cumulative probability, with a wide margin.
  constexpr double kBoundary = 1e-6;
  for (int64_t vocab : {int64_t(50), int64_t(1001), int64_t(32000),
                        int64_t(128256), int64_t(262144)}) {
    const int64_t rows = vocab > 100000 ? 18 : 45;
    auto logits = randomLogits(rng, rows, vocab, vocab % 2 == 0);
    std::vector<SampleRowParams> params(rows);
    for (int64_t r = 0; r < rows; ++r) {
      const P &s = settings[r % nSettings];
      params[r].temperature = s.t;
      params[r].topK = s.k == 3000 ? vocab + 5 - (r % 2) * (vocab - 1) : s.k;
      params[r].topP = s.p;
      params[r].seed = testSeed() + uint64_t(r);
      params[r].seqId = uint64_t(r * 7);
      params[r].step = uint64_t(r * 13 + 1);
    }
    DeviceBuffer<float> dl(logits);
    DeviceBuffer<SampleRowParams> dp(params);
    DeviceBuffer<int32_t> out(std::vector<int32_t>(rows, -7));
    Status s = sampleRows(dl.get(), rows, vocab, dp.get(), out.get(), nullptr);
    INFO(s.message());
    REQUIRE(s.ok());
    CUDA_REQUIRE(cudaDeviceSynchronize());
    auto got = out.download();
    for (int64_t r = 0; r < rows; ++r) {
      const SampleRowParams &p = params[r];
      const float *row = &logits[size_t(r * vocab)];
      int64_t want =
          p.temperature == 0.0 || vocab == 1
              ? argmaxRef(row, vocab)
              : sampleFilteredRef(row, vocab, p.temperature, p.topK, p.topP,
                                  counterUniform(p.seed, p.seqId, p.step));
      INFO("vocab " << vocab << " row " << r << " T " << p.temperature << " k "
                    << p.topK << " p " << p.topP << " seed " << testSeed());
      REQUIRE(got[r] >= 0);
      REQUIRE(got[r] < vocab);
      ++draws;
      if (p.temperature == 0.0 || p.topK == 1) {
        CHECK(got[r] == want); // no rounding involved
        continue;
      }
      if (got[r] == want)
        continue;
      // The device sums the probability mass in another order: where the
      // uniform draw or the top-p cut falls within rounding of a token
      // boundary, either side is a correct draw. Any other difference is a
      // bug.
      const double u = counterUniform(p.seed, p.seqId, p.step);
      bool atBoundary = false;
      for (double du : {-kBoundary, kBoundary})
        for (double dp : {-kBoundary, 0.0, kBoundary})
          atBoundary |=
              sampleFilteredRef(row, vocab, p.temperature, p.topK,
                                std::min(1.0, p.topP + dp),
                                std::clamp(u + du, 0.0, 1.0 - 1e-12)) == got[r];
      ++boundaryDraws;
      CHECK(atBoundary);
      WARN("draw differs at a rounding boundary: got " << got[r] << " want "
                                                       << want);
    }
  }
  // Boundaries are rare: a larger share means the mass is summed too
  // coarsely.
  INFO(boundaryDraws << " of " << draws << " draws fell on a boundary");
  CHECK(boundaryDraws * 50 <= draws);
}

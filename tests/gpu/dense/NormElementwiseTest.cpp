// RMSNorm, add+RMSNorm, the elementwise activations and the embedding gather
// on the GPU against kernels/cpu/DenseRef.h. Shapes are not multiples of
// any block size (rows 1..130, cols from 8 to 8200, odd element counts that
// take the scalar path); tolerances as in RopeKvTestSupport.h: both sides
// compute in fp32 and round once, so a stored value matches bit for bit or
// sits one ulp of the storage type away; copies and plain sums match
// exactly.
#include "../rope_kv/RopeKvTestSupport.h"

#include "kernels/cpu/DenseRef.h"
#include "kernels/elementwise/Elementwise.h"
#include "kernels/norm/RmsNorm.h"

#include <catch2/catch.hpp>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {

const char *dtypeName(ActDType t) {
  return t == ActDType::BF16 ? "bf16" : "fp16";
}

auto never = [](size_t) { return false; };
auto always = [](size_t) { return true; };

// xScale/rScale: the scaled residual sum (MiniMax's beta and alpha).
void checkNorm(ActDType dtype, int64_t rows, int64_t cols, bool add,
               bool inPlace, std::mt19937_64 &rng, float xScale = 1.f,
               float rScale = 1.f) {
  INFO(dtypeName(dtype) << " rows " << rows << " cols " << cols
                        << (add ? " add" : "") << (inPlace ? " in place" : "")
                        << " scales " << xScale << ", " << rScale << " seed "
                        << testSeed());
  size_t n = size_t(rows * cols);
  auto x = randomAct(rng, dtype, n, 0.01f, 2.0f);
  auto res = randomAct(rng, dtype, n, 0.01f, 2.0f);
  auto w = randomAct(rng, dtype, size_t(cols), 0.5f, 1.5f);
  std::vector<uint16_t> poison(n, kPoison);
  DeviceBuffer<uint16_t> dx(x), dres(res), dw(w), dout(poison), dsum(poison);
  const float eps = 1e-6f;
  std::vector<uint16_t> wantOut(n, kPoison), wantSum(n, kPoison);
  if (!add) {
    REQUIRE(
        rmsNormRef(dtype, rows, cols, x.data(), w.data(), eps, wantOut.data())
            .ok());
    Status s = rmsNorm(dtype, rows, cols, dx.get(), dw.get(), eps,
                       inPlace ? dx.get() : dout.get(), nullptr);
    INFO(s.message());
    REQUIRE(s.ok());
    CUDA_REQUIRE(cudaDeviceSynchronize());
    CHECK_MATCHES("rms_norm out",
                  compareAct(inPlace ? dx.download() : dout.download(), wantOut,
                             dtype, never));
    return;
  }
  REQUIRE(addRmsNormRef(dtype, rows, cols, x.data(), res.data(), w.data(), eps,
                        xScale, rScale, wantOut.data(), wantSum.data())
              .ok());
  // In place: the sum overwrites the residual stream, out overwrites x.
  Status s = addRmsNorm(dtype, rows, cols, dx.get(), dres.get(), dw.get(), eps,
                        xScale, rScale, inPlace ? dx.get() : dout.get(),
                        inPlace ? dres.get() : dsum.get(), nullptr);
  INFO(s.message());
  REQUIRE(s.ok());
  CUDA_REQUIRE(cudaDeviceSynchronize());
  // Both sides round the two products and the sum in fp32: bit-equal.
  CHECK_MATCHES("add_rms_norm sum",
                compareAct(inPlace ? dres.download() : dsum.download(), wantSum,
                           dtype, always));
  CHECK_MATCHES("add_rms_norm out",
                compareAct(inPlace ? dx.download() : dout.download(), wantOut,
                           dtype, never));
}

} // namespace

TEST_CASE("rms_norm and add_rms_norm match the CPU reference",
          "[gpu][dense][norm]") {
  std::mt19937_64 rng(testSeed());
  // cols: one vector, a head (QK-norm), Qwen3-0.6B hidden, odd widths on
  // both sides of the group sizes, Llama-3-8B hidden, past 8192.
  const int64_t shapes[][2] = {
      {7, 8},    {37, 128}, {130, 1024}, {3, 2056},   {5, 4096},
      {2, 5128}, {1, 8200}, {129, 72},   {33, 16384}, {17, 3000 / 8 * 8}};
  int i = 0;
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (auto &s : shapes) {
      checkNorm(dtype, s[0], s[1], false, i % 3 == 0, rng);
      checkNorm(dtype, s[0], s[1], true, i % 2 == 0, rng);
      checkNorm(dtype, s[0], s[1], true, i % 2 == 1, rng, 0.8f, 1.6f);
      ++i;
    }
}

TEST_CASE("rms_norm rejects bad shapes with a message", "[gpu][dense][norm]") {
  DeviceBuffer<uint16_t> buf(64);
  Status s = rmsNorm(ActDType::BF16, 2, 12, buf.get(), buf.get(), 1e-6f,
                     buf.get(), nullptr);
  CHECK(!s.ok());
  CHECK(s.message().find("multiple of 8") != std::string::npos);
}

TEST_CASE("elementwise activations match the CPU reference",
          "[gpu][dense][elementwise]") {
  std::mt19937_64 rng(testSeed() + 1);
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (int64_t n : {int64_t(1), int64_t(1001), int64_t(4096 * 3 + 8),
                      int64_t(4096 * 3 + 5), int64_t(300007)}) {
      INFO(dtypeName(dtype) << " n " << n << " seed " << testSeed());
      auto a = randomAct(rng, dtype, size_t(n), 0.01f, 6.0f);
      auto b = randomAct(rng, dtype, size_t(n), 0.01f, 3.0f);
      DeviceBuffer<uint16_t> da(a), db(b);
      std::vector<uint16_t> want(static_cast<size_t>(n));
      auto run = [&](const char *name, Status got, Status ref, bool exact) {
        INFO(name << ": " << got.message());
        REQUIRE(got.ok());
        REQUIRE(ref.ok());
        CUDA_REQUIRE(cudaDeviceSynchronize());
      };
      {
        DeviceBuffer<uint16_t> out(std::vector<uint16_t>(size_t(n), kPoison));
        run("silu_mul", siluMul(dtype, n, da.get(), db.get(), out.get(), 0),
            siluMulRef(dtype, n, a.data(), b.data(), want.data()), false);
        CHECK_MATCHES("silu_mul",
                      compareAct(out.download(), want, dtype, never));
      }
      {
        DeviceBuffer<uint16_t> out(std::vector<uint16_t>(size_t(n), kPoison));
        run("silu", silu(dtype, n, da.get(), out.get(), 0),
            siluRef(dtype, n, a.data(), want.data()), false);
        CHECK_MATCHES("silu", compareAct(out.download(), want, dtype, never));
      }
      {
        DeviceBuffer<uint16_t> out(std::vector<uint16_t>(size_t(n), kPoison));
        run("sigmoid_mul",
            sigmoidMul(dtype, n, da.get(), db.get(), out.get(), 0),
            sigmoidMulRef(dtype, n, a.data(), b.data(), want.data()), false);
        CHECK_MATCHES("sigmoid_mul",
                      compareAct(out.download(), want, dtype, never));
      }
      {
        DeviceBuffer<uint16_t> out(std::vector<uint16_t>(size_t(n), kPoison));
        run("add", add(dtype, n, da.get(), db.get(), 1.f, 1.f, out.get(), 0),
            addRef(dtype, n, a.data(), b.data(), 1.f, 1.f, want.data()), true);
        CHECK_MATCHES("add", compareAct(out.download(), want, dtype, always));
      }
      {
        DeviceBuffer<uint16_t> out(std::vector<uint16_t>(size_t(n), kPoison));
        run("scaled add",
            add(dtype, n, da.get(), db.get(), 1.6f, 0.9f, out.get(), 0),
            addRef(dtype, n, a.data(), b.data(), 1.6f, 0.9f, want.data()),
            true);
        CHECK_MATCHES("scaled add",
                      compareAct(out.download(), want, dtype, always));
      }
    }
}

TEST_CASE("fused gate_up silu_mul matches the CPU reference row by row",
          "[gpu][dense][elementwise]") {
  std::mt19937_64 rng(testSeed() + 2);
  // 1000 columns is not a multiple of 8: the scalar path; the others vector.
  const int64_t shapes[][2] = {{7, 1000}, {5, 1376}, {1, 14336}, {33, 96}};
  for (ActDType dtype : {ActDType::BF16, ActDType::F16})
    for (auto &s : shapes) {
      int64_t rows = s[0], cols = s[1];
      INFO(dtypeName(dtype) << " rows " << rows << " cols " << cols);
      auto gateUp = randomAct(rng, dtype, size_t(rows * 2 * cols), 0.01f, 6.f);
      DeviceBuffer<uint16_t> dgu(gateUp);
      DeviceBuffer<uint16_t> out(
          std::vector<uint16_t>(size_t(rows * cols), kPoison));
      std::vector<uint16_t> want(size_t(rows * cols));
      for (int64_t r = 0; r < rows; ++r)
        REQUIRE(siluMulRef(dtype, cols, gateUp.data() + r * 2 * cols,
                           gateUp.data() + r * 2 * cols + cols,
                           want.data() + r * cols)
                    .ok());
      Status st = siluMulFused(dtype, rows, cols, dgu.get(), out.get(), 0);
      INFO(st.message());
      REQUIRE(st.ok());
      CUDA_REQUIRE(cudaDeviceSynchronize());
      CHECK_MATCHES("silu_mul(fused)",
                    compareAct(out.download(), want, dtype, never));
    }
}

TEST_CASE("embedding gathers rows bit for bit and skips bad ids",
          "[gpu][dense][embedding]") {
  std::mt19937_64 rng(testSeed() + 3);
  for (ActDType dtype : {ActDType::BF16, ActDType::F16}) {
    const int64_t vocab = 1003, cols = 136, tokens = 37;
    auto table = randomAct(rng, dtype, size_t(vocab * cols), 0.01f, 2.f);
    std::vector<int32_t> ids(tokens);
    for (auto &id : ids)
      id = int32_t(rng() % vocab);
    ids[5] = 0;
    ids[6] = int32_t(vocab - 1);
    std::vector<uint16_t> want(size_t(tokens * cols), kPoison);
    REQUIRE(embeddingRef(dtype, tokens, vocab, cols, ids.data(), table.data(),
                         want.data())
                .ok());
    // An id outside the vocabulary leaves its row unwritten.
    ids[11] = int32_t(vocab);
    ids[12] = -1;
    for (int t : {11, 12})
      std::fill(want.begin() + t * cols, want.begin() + (t + 1) * cols,
                kPoison);
    DeviceBuffer<uint16_t> dtable(table);
    DeviceBuffer<int32_t> dids(ids);
    DeviceBuffer<uint16_t> out(
        std::vector<uint16_t>(size_t(tokens * cols), kPoison));
    Status s = embedding(dtype, tokens, vocab, cols, dids.get(), dtable.get(),
                         out.get(), 0);
    INFO(s.message());
    REQUIRE(s.ok());
    CUDA_REQUIRE(cudaDeviceSynchronize());
    CHECK(out.download() == want);
  }
}

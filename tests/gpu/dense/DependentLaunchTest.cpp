// Programmatic dependent launch: a chain of kernels that each consume the
// previous one's output (rms_norm -> GEMV -> GEMV with the residual in place
// -> add_rms_norm -> silu_mul -> GEMV to fp32 logits -> argmax) must give
// bit-identical results whether each launch waits for the previous kernel
// to finish or is scheduled under its tail, eagerly and replayed from a
// CUDA graph. Every intermediate is poisoned (NaN) before each run, so a
// kernel that read its input before its predecessor had written it would
// carry NaN or stale values into the compared outputs.
#include "../rope_kv/RopeKvTestSupport.h"

#include "kernels/common/DependentLaunch.h"
#include "kernels/elementwise/Elementwise.h"
#include "kernels/gemm/Gemm.h"
#include "kernels/norm/RmsNorm.h"
#include "kernels/sampling/Sampling.h"

#include <catch2/catch.hpp>

using namespace strata::kernels;
using namespace strata::kernels::test;

namespace {

constexpr int64_t kTokens = 5, kHidden = 2048, kInter = 3072, kVocab = 8000;

struct Chain {
  DeviceBuffer<uint16_t> x, normW, wA, wB, wUp, wOut;
  DeviceBuffer<uint16_t> a, b, c, d, gu, act;
  DeviceBuffer<float> logits;
  DeviceBuffer<int32_t> ids;
  DeviceBuffer<uint8_t> argmaxWs;
  GemmRunner gemm;

  explicit Chain(std::mt19937_64 &rng)
      : x(randomAct(rng, ActDType::BF16, kTokens * kHidden, 0.1f, 2.f)),
        normW(randomAct(rng, ActDType::BF16, kHidden, 0.6f, 1.4f)),
        wA(randomAct(rng, ActDType::BF16, kHidden * kHidden, 0.005f, 0.03f)),
        wB(randomAct(rng, ActDType::BF16, kHidden * kHidden, 0.005f, 0.03f)),
        wUp(randomAct(rng, ActDType::BF16, 2 * kInter * kHidden, 0.005f,
                      0.03f)),
        wOut(randomAct(rng, ActDType::BF16, kVocab * kInter, 0.005f, 0.03f)),
        a(kTokens * kHidden), b(kTokens * kHidden), c(kTokens * kHidden),
        d(kTokens * kHidden), gu(kTokens * 2 * kInter), act(kTokens * kInter),
        logits(kTokens * kVocab), ids(kTokens),
        argmaxWs(argmaxWorkspaceBytes(kTokens, kVocab)) {
    REQUIRE(gemm.init().ok());
    CUDA_REQUIRE(cudaMemset(argmaxWs.get(), 0, argmaxWs.size()));
  }

  void poison(cudaStream_t s) {
    for (DeviceBuffer<uint16_t> *buf : {&a, &b, &c, &d, &gu, &act})
      CUDA_REQUIRE(cudaMemsetAsync(buf->get(), 0xff, buf->size() * 2, s));
    CUDA_REQUIRE(cudaMemsetAsync(logits.get(), 0xff, logits.size() * 4, s));
    CUDA_REQUIRE(cudaMemsetAsync(ids.get(), 0xff, ids.size() * 4, s));
  }

  Status linear(const void *in, const void *w, int64_t n, int64_t k,
                const void *residual, void *out, bool f32Out,
                cudaStream_t s) {
    GemmArgs g;
    g.m = kTokens;
    g.n = n;
    g.k = k;
    g.x = in;
    g.w = w;
    g.residual = residual;
    g.y = out;
    g.f32Out = f32Out;
    return gemm.linear(g, s);
  }

  /// Enqueues the chain; `syncEach` waits for every kernel on the host.
  void run(cudaStream_t s, bool syncEach) {
    poison(s);
    auto step = [&](Status st) {
      INFO(st.message());
      REQUIRE(st.ok());
      if (syncEach)
        CUDA_REQUIRE(cudaStreamSynchronize(s));
    };
    const auto bf = ActDType::BF16;
    step(rmsNorm(bf, kTokens, kHidden, x.get(), normW.get(), 1e-5f, a.get(),
                 s));
    step(linear(a.get(), wA.get(), kHidden, kHidden, nullptr, b.get(), false,
                s));
    // c = wB b + b, written over b's twin: the residual read must see b.
    step(linear(b.get(), wB.get(), kHidden, kHidden, b.get(), c.get(), false,
                s));
    step(addRmsNorm(bf, kTokens, kHidden, c.get(), b.get(), normW.get(),
                    1e-5f, 1.f, 1.f, d.get(), b.get(), s));
    step(linear(d.get(), wUp.get(), 2 * kInter, kHidden, nullptr, gu.get(),
                false, s));
    step(siluMulFused(bf, kTokens, kInter, gu.get(), act.get(), s));
    step(linear(act.get(), wOut.get(), kVocab, kInter, nullptr, logits.get(),
                true, s));
    step(argmaxRows(logits.get(), kTokens, kVocab, ids.get(), argmaxWs.get(),
                    argmaxWs.size(), s));
  }

  struct Result {
    std::vector<uint16_t> b, act;
    std::vector<float> logits;
    std::vector<int32_t> ids;
  };
  Result result() {
    CUDA_REQUIRE(cudaDeviceSynchronize());
    return {b.download(), act.download(), logits.download(), ids.download()};
  }
};

void requireSame(const Chain::Result &want, const Chain::Result &got) {
  CHECK(want.b == got.b);
  CHECK(want.act == got.act);
  CHECK(std::memcmp(want.logits.data(), got.logits.data(),
                    want.logits.size() * 4) == 0);
  CHECK(want.ids == got.ids);
}

} // namespace

TEST_CASE("dependent launches see their predecessors' results",
          "[gpu][dense][pdl]") {
  std::mt19937_64 rng(testSeed() + 30);
  Chain chain(rng);
  cudaStream_t s;
  CUDA_REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  setDependentLaunchEnabled(false);
  chain.run(s, true);
  Chain::Result want = chain.result();
  // The reference itself is sane: finite logits, ids in range.
  for (float v : want.logits)
    REQUIRE(std::isfinite(v));
  for (int32_t id : want.ids)
    REQUIRE((id >= 0 && id < kVocab));

  setDependentLaunchEnabled(true);
  SECTION("eager launches") {
    for (int rep = 0; rep < 20; ++rep) {
      chain.run(s, false);
      requireSame(want, chain.result());
    }
  }
  SECTION("replayed from a CUDA graph") {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    chain.run(s, false);
    CUDA_REQUIRE(cudaStreamEndCapture(s, &graph));
    CUDA_REQUIRE(cudaGraphInstantiate(&exec, graph, 0));
    for (int rep = 0; rep < 20; ++rep) {
      CUDA_REQUIRE(cudaGraphLaunch(exec, s));
      requireSame(want, chain.result());
    }
    CUDA_REQUIRE(cudaGraphExecDestroy(exec));
    CUDA_REQUIRE(cudaGraphDestroy(graph));
  }
  CUDA_REQUIRE(cudaStreamDestroy(s));
}

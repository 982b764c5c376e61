// The device draw of random weights equals the host draw bit for bit
// (kernels/init/RandomInit.h, runtime/Weights.cpp).
#include "kernels/init/RandomInit.h"
#include "runtime/RandomWeights.h"
#include "runtime/Weights.h"

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <cstring>

using namespace strata;

TEST_CASE("device random weights equal the host's", "[gpu][weights]") {
  plan::Plan p;
  p.weightSeed = 1234;
  p.weightInitStd = 0.05;
  auto add = [&](const std::string &name, plan::DType dtype,
                 std::vector<int64_t> shape) {
    plan::Weight w;
    w.name = name;
    w.dtype = dtype;
    w.shape = std::move(shape);
    p.weights.push_back(w);
  };
  add("model.layers.0.mlp.down_proj.weight", plan::DType::BF16, {257, 129});
  add("model.embed_tokens.weight", plan::DType::F16, {1000, 72});
  add("lm_head.weight", plan::DType::F32, {333, 31});
  add("model.norm.weight", plan::DType::BF16, {129});
  WeightStore host = WeightStore::random(p);
  for (size_t i = 0; i < p.weights.size(); ++i) {
    const plan::Weight &w = p.weights[i];
    const std::vector<uint8_t> &expect = host.bytes(int32_t(i));
    const int64_t count = int64_t(expect.size() / plan::byteWidth(w.dtype));
    void *dev = nullptr;
    REQUIRE(cudaMalloc(&dev, expect.size()) == cudaSuccess);
    REQUIRE(cudaMemset(dev, 0xff, expect.size()) == cudaSuccess);
    const auto dtype = static_cast<kernels::InitDType>(w.dtype);
    kernels::Status s =
        randomInitOf(w.name) == RandomInit::One
            ? kernels::constantFill(dtype, count, 1.0f, dev, nullptr)
            : kernels::randomNormalFill(dtype, count, p.weightSeed,
                                        weightNameHash(w.name), p.weightInitStd,
                                        dev, nullptr);
    INFO(s.message());
    REQUIRE(s.ok());
    std::vector<uint8_t> got(expect.size());
    REQUIRE(cudaMemcpy(got.data(), dev, got.size(), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    cudaFree(dev);
    size_t mismatches = 0;
    const size_t width = plan::byteWidth(w.dtype);
    for (size_t e = 0; e < got.size(); e += width)
      mismatches += std::memcmp(&got[e], &expect[e], width) != 0;
    INFO(w.name << ": " << mismatches << " of " << count << " elements differ");
    CHECK(mismatches == 0);
  }
}

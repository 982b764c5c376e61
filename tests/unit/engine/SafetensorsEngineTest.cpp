// End to end: the random weights of tiny-llama's plans written as a
// safetensors checkpoint (under the checkpoint's tensor names, packed
// weights split back into their sources) and loaded again generate exactly
// what the random-weight engine generates. That checks names, shapes,
// packing and dtype conversion against the compiler's real plans.
#include "kernels/cpu/HalfTypes.h"
#include "runtime/Engine.h"
#include "tests/unit/engine/CompilePlan.h"
#include "tests/unit/runtime/SafetensorsWriter.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <set>

using namespace strata;
using namespace strata::testing;

namespace {

plan::Plan compile(const std::string &model, bool fused) {
  return compilePlan(model, 64, fused, 8);
}

/// The plan's random weights as checkpoint tensors; `asF32` widens the
/// bf16 values to fp32 (exactly), so loading must round them back.
std::vector<StTensor> checkpointOf(const plan::Plan &plan, bool asF32) {
  WeightStore store = WeightStore::random(plan);
  std::vector<StTensor> out;
  // Phase programs each list their weights, so a name can repeat.
  std::set<std::string> written;
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const plan::Weight &w = plan.weights[i];
    REQUIRE(w.dtype == plan::DType::BF16);
    const std::vector<uint8_t> &bytes = store.bytes(int32_t(i));
    int64_t rowBytes = int64_t(bytes.size()) / w.shape[0];
    std::vector<std::string> names = w.packedFrom;
    std::vector<int64_t> rows = w.packedRows;
    if (names.empty()) {
      names = {w.name};
      rows = {w.shape[0]};
    }
    int64_t row = 0;
    for (size_t s = 0; s < names.size(); ++s) {
      StTensor t{names[s], "BF16", w.shape, {}};
      t.shape[0] = rows[s];
      t.bytes.assign(bytes.begin() + row * rowBytes,
                     bytes.begin() + (row + rows[s]) * rowBytes);
      row += rows[s];
      if (!written.insert(t.name).second)
        continue;
      if (asF32) {
        std::vector<uint8_t> wide(t.bytes.size() * 2);
        for (size_t e = 0; e < t.bytes.size() / 2; ++e) {
          uint16_t bits;
          std::memcpy(&bits, &t.bytes[2 * e], 2);
          float f = kernels::bf16BitsToFloat(bits);
          std::memcpy(&wide[4 * e], &f, 4);
        }
        t.bytes = std::move(wide);
        t.dtype = "F32";
      }
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<GenerationResult> generate(const plan::Plan &plan,
                                       const EngineOptions &options) {
  std::string error;
  auto engine = Engine::create(plan, options, error);
  INFO(error);
  REQUIRE(engine);
  GenerationRequest request;
  request.prompt = {3, 14, 15, 92, 65, 35, 89, 79};
  request.maxNewTokens = 6;
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  REQUIRE(engine->generate({request}, results, timings, error));
  return results;
}

} // namespace

TEST_CASE("weights written to safetensors and loaded back generate what "
          "the random weights generate") {
  bool fused = GENERATE(false, true);
  bool asF32 = GENERATE(false, true);
  INFO((fused ? "fused" : "generic")
       << " plan, " << (asF32 ? "F32" : "BF16") << " checkpoint");
  plan::Plan plan = compile("tiny-llama.yaml", fused);
  if (fused) {
    bool packed = false;
    for (const plan::Weight &w : plan.weights)
      packed = packed || !w.packedFrom.empty();
    CHECK(packed); // the fused plan exercises the split into sources
  }
  TempDir dir;
  EngineOptions loaded;
  loaded.weightsPath = dir.file("model.safetensors");
  writeSafetensors(loaded.weightsPath, checkpointOf(plan, asF32));

  std::vector<GenerationResult> expected = generate(plan, EngineOptions{});
  std::vector<GenerationResult> actual = generate(plan, loaded);
  CHECK(actual[0].tokens == expected[0].tokens);
  CHECK(actual[0].lastLogits == expected[0].lastLogits);
}

TEST_CASE("a bad checkpoint fails Engine::create with the loader's error") {
  plan::Plan plan = compile("tiny-llama.yaml", false);
  TempDir dir;
  EngineOptions options;
  options.weightsPath = dir.file("none.safetensors");
  std::string error;
  CHECK(!Engine::create(plan, options, error));
  CHECK_THAT(error, Catch::Contains(options.weightsPath));
}

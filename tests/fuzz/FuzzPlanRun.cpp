// Plan files as `strata-run` takes them: read, then run on the CPU backend
// with random weights (Engine::create, and one short generation). A plan
// that passes the reader's checks is trusted from there on: its shapes
// size the weights and the arena, its buffer offsets and launch attributes
// index them. Errors reported by the engine are valid outcomes; crashes,
// out-of-bounds accesses and huge allocations are not.
#include "runtime/Engine.h"
#include "runtime/plan/PlanFile.h"
#include "tests/fuzz/PlanFuzzInput.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace strata;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The header checks are fuzz-plan's; here every input gets a valid one.
  std::string bytes = fuzz::withValidHeader(
      std::string(reinterpret_cast<const char *>(data), size));
  plan::Plan p;
  std::string error;
  if (!plan::deserializePlan(bytes, "fuzz.splan", p, error))
    return 0;
  EngineOptions options;
  auto engine = Engine::create(std::move(p), options, error);
  if (!engine)
    return 0;
  GenerationRequest request;
  request.prompt = {1, 2, 3};
  request.maxNewTokens = 2;
  std::vector<GenerationResult> results;
  GenerationTimings timings;
  (void)engine->generate({request}, results, timings, error);
  return 0;
}

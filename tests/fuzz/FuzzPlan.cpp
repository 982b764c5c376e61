// Plan files (docs/plan-format.md) through deserializePlan and what
// `strata inspect` does with an accepted plan (describePlan, and the
// schedule check of codegen/ProgramGraph.h), the readers of a .splan that
// does not come from this build.
//
// Each input is read twice: as it is (the header checks), and with a valid
// header (the decoder and the plan checks; PlanFuzzInput.h). An accepted
// plan must re-serialize to the payload it was read from (the header's
// reserved fields are not checked by readers, so the comparison is with a
// canonical header).
#include "codegen/ProgramGraph.h"
#include "runtime/plan/PlanFile.h"
#include "runtime/plan/PlanText.h"
#include "tests/fuzz/FuzzCheck.h"
#include "tests/fuzz/PlanFuzzInput.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace strata;
using strata::fuzz::withValidHeader;

namespace {

void readOne(const std::string &bytes) {
  plan::Plan p;
  std::string error;
  if (!plan::deserializePlan(bytes, "fuzz.splan", p, error)) {
    FUZZ_CHECK(error.rfind("fuzz.splan: error: ", 0) == 0,
               "the error names the file");
    return;
  }
  FUZZ_CHECK(plan::validatePlan(p).empty(), "an accepted plan is valid");
  FUZZ_CHECK(plan::serializePlan(p) == withValidHeader(bytes),
             "an accepted plan re-serializes to its payload");
  (void)plan::describePlan(p);
  for (const plan::Program &program : p.programs)
    (void)sched::checkProgram(program, p.limits);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  readOne(bytes);
  std::string fixed = withValidHeader(bytes);
  if (fixed != bytes)
    readOne(fixed);
  return 0;
}

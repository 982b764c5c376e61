// A target with one deliberate bug per kind of finding, chosen by the
// input's text; ctest's "fuzz-driver: finds KIND" tests replay each through
// run_fuzzer.py and pass only when the driver reports that finding. This is
// what shows that a fuzz run which finds something fails ctest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
// Out of the optimizer's sight, so that the bugs stay in the binary.
volatile int sink;
void *volatile kept;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string kind(reinterpret_cast<const char *>(data), size);
  if (kind == "crash") {
    char *p = static_cast<char *>(std::malloc(4));
    sink = p[4 + sink]; // heap-buffer-overflow
    std::free(p);
  } else if (kind == "ubsan") {
    int big = INT32_MAX - sink;
    sink = big + 1; // signed overflow
  } else if (kind == "oom") {
    kept = std::malloc(size_t(1) << 30); // beyond -malloc_limit_mb
    std::free(kept);
  } else if (kind == "leak") {
    kept = std::malloc(64);
    kept = nullptr;
  } else if (kind == "timeout") {
    while (sink == 0) {
    }
  }
  return 0;
}

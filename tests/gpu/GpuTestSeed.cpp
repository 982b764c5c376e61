#include "tests/gpu/GpuTestSupport.h"

#include "models/ParseInteger.h"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace strata::kernels::test {

uint64_t testSeed() {
  static const uint64_t seed = [] {
    int64_t value = 0;
    if (const char *env = std::getenv("STRATA_TEST_SEED")) {
      if (parseDecimalInteger(env, value) != IntegerParse::Ok || value < 0) {
        std::fprintf(stderr,
                     "error: STRATA_TEST_SEED='%s': expected a whole decimal "
                     "number in [0, %lld]\n",
                     env, static_cast<long long>(INT64_MAX));
        std::exit(2);
      }
    } else {
      // 63 bits, so that the printed value reads back through the same
      // signed parser.
      std::random_device rd;
      value =
          static_cast<int64_t>(((uint64_t(rd()) << 32) ^ uint64_t(rd())) >> 1);
    }
    std::printf("STRATA_TEST_SEED=%lld (set it to replay this run)\n",
                static_cast<long long>(value));
    std::fflush(stdout);
    return static_cast<uint64_t>(value);
  }();
  return seed;
}

} // namespace strata::kernels::test

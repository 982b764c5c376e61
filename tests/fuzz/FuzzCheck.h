// The one helper the fuzz targets share: an invariant of the code under test
// that does not hold is a finding, reported like a crash so that libFuzzer
// saves the input.
#ifndef STRATA_TESTS_FUZZ_FUZZCHECK_H
#define STRATA_TESTS_FUZZ_FUZZCHECK_H

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                 \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s (%s)\n",          \
                   __FILE__, __LINE__, what, #cond);                           \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

#endif // STRATA_TESTS_FUZZ_FUZZCHECK_H

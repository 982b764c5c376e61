#include "runtime/LaunchTrace.h"

#include "kernels/cpu/HalfTypes.h"
#include "runtime/LaunchFacts.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata {

bool launchTraceEnabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("STRATA_TRACE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

bool launchProfileEnabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("STRATA_PROFILE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void traceLaunch(const char *backend, const plan::Program &program,
                 size_t index, const void *data, plan::DType dtype,
                 int64_t count) {
  double sum = 0;
  for (int64_t i = 0; data && i < count; ++i) {
    double v = 0;
    switch (dtype) {
    case plan::DType::F32:
      v = static_cast<const float *>(data)[i];
      break;
    case plan::DType::BF16:
      v = kernels::bf16BitsToFloat(static_cast<const uint16_t *>(data)[i]);
      break;
    case plan::DType::F16:
      v = kernels::f16BitsToFloat(static_cast<const uint16_t *>(data)[i]);
      break;
    case plan::DType::I32:
      v = static_cast<const int32_t *>(data)[i];
      break;
    }
    sum += std::fabs(v);
  }
  std::fprintf(stderr, "trace %s %s %.6g (%lld elements)\n", backend,
               describeLaunch(program, index).c_str(), sum, (long long)count);
}

} // namespace strata

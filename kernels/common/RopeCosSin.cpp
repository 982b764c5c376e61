#include "kernels/common/RopeCosSin.h"

#include <cmath>
#include <string>

namespace strata::kernels {

namespace {

Status checkSpec(const RopeTableSpec &spec) {
  auto fail = [](const std::string &what) {
    return Status::error("rope cos/sin table: " + what);
  };
  if (spec.rotaryDim < 2 || spec.rotaryDim % 2 != 0)
    return fail("rotaryDim " + std::to_string(spec.rotaryDim) +
                " must be even and positive");
  if (spec.maxPos < 1)
    return fail("maxPos " + std::to_string(spec.maxPos) + " must be positive");
  if (!(spec.theta > 1.0) || !std::isfinite(spec.theta))
    return fail("theta must be a finite number above 1");
  const RopeScalingParams &s = spec.scaling;
  if (s.kind != RopeScalingKind::None &&
      (!(s.factor > 0.0) || !std::isfinite(s.factor)))
    return fail("scaling factor must be positive");
  if (s.kind == RopeScalingKind::Llama3 &&
      (s.originalMaxPos < 1 || !(s.lowFreqFactor > 0.0) ||
       !(s.highFreqFactor > s.lowFreqFactor)))
    return fail("llama3 scaling needs originalMaxPos > 0 and "
                "0 < lowFreqFactor < highFreqFactor");
  return Status::success();
}

} // namespace

Status ropeInverseFrequencies(const RopeTableSpec &spec,
                              std::vector<double> &invFreq) {
  if (Status s = checkSpec(spec); !s)
    return s;
  const RopeScalingParams &sc = spec.scaling;
  const double pi = std::acos(-1.0);
  int32_t half = spec.rotaryDim / 2;
  invFreq.resize(half);
  for (int32_t i = 0; i < half; ++i) {
    double f = std::pow(spec.theta, -2.0 * i / spec.rotaryDim);
    if (sc.kind == RopeScalingKind::Linear) {
      f /= sc.factor;
    } else if (sc.kind == RopeScalingKind::Llama3) {
      double old = static_cast<double>(sc.originalMaxPos);
      double lowFreqWavelen = old / sc.lowFreqFactor;
      double highFreqWavelen = old / sc.highFreqFactor;
      double wavelen = 2.0 * pi / f;
      if (wavelen > lowFreqWavelen) {
        f /= sc.factor;
      } else if (wavelen >= highFreqWavelen) {
        double smooth = (old / wavelen - sc.lowFreqFactor) /
                        (sc.highFreqFactor - sc.lowFreqFactor);
        f = (1.0 - smooth) * f / sc.factor + smooth * f;
      }
    }
    invFreq[i] = f;
  }
  return Status::success();
}

Status fillRopeCosSin(const RopeTableSpec &spec, float *table) {
  std::vector<double> invFreq;
  if (Status s = ropeInverseFrequencies(spec, invFreq); !s)
    return s;
  if (!table)
    return Status::error("rope cos/sin table: output pointer is null");
  int64_t half = spec.rotaryDim / 2;
  for (int64_t p = 0; p < spec.maxPos; ++p) {
    float *row = table + p * spec.rotaryDim;
    for (int64_t i = 0; i < half; ++i) {
      double angle = static_cast<double>(p) * invFreq[i];
      row[i] = static_cast<float>(std::cos(angle));
      row[half + i] = static_cast<float>(std::sin(angle));
    }
  }
  return Status::success();
}

Status buildRopeCosSin(const RopeTableSpec &spec, std::vector<float> &table) {
  if (Status s = checkSpec(spec); !s)
    return s;
  table.assign(static_cast<size_t>(spec.maxPos) * spec.rotaryDim, 0.0f);
  return fillRopeCosSin(spec, table.data());
}

} // namespace strata::kernels

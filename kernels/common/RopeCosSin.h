// Host builder of the fp32 rotary cos/sin cache read by rope_kv_write (GPU
// and CPU reference alike).
//
// Layout of one table, [maxPos, rotaryDim] fp32, row p:
//   [0, rotaryDim/2)          cos(p * invFreq[i])   for i = column
//   [rotaryDim/2, rotaryDim)  sin(p * invFreq[i])   for i = column -
//   rotaryDim/2
// so a row is 16-byte aligned whenever rotaryDim is a multiple of 4, and the
// cos and sin of one pair sit rotaryDim/2 floats apart for either pairing.
// A launch takes [cacheBatch, maxPos, rotaryDim]: cacheBatch 1 shares one
// table, cacheBatch == batch gives each sequence its own (concatenate tables).
//
// invFreq[i] = theta^(-2i / rotaryDim), then scaled:
//   linear: invFreq / factor (positions divided by factor);
//   llama3: frequencies with wavelength 2*pi/invFreq above
//     originalMaxPos / lowFreqFactor are divided by factor, those below
//     originalMaxPos / highFreqFactor are kept, and those between blend the
//     two (the Llama 3.1 rule, as in Hugging Face transformers).
// Angles, cos and sin are computed in double and rounded once to float, so
// positions up to millions keep full fp32 accuracy (an fp32 product
// p * invFreq is already 0.06 rad off at p = 1M).
#ifndef STRATA_KERNELS_COMMON_ROPECOSSIN_H
#define STRATA_KERNELS_COMMON_ROPECOSSIN_H

#include "kernels/common/Status.h"

#include <cstdint>
#include <vector>

namespace strata::kernels {

enum class RopeScalingKind : uint8_t { None, Linear, Llama3 };

struct RopeScalingParams {
  RopeScalingKind kind = RopeScalingKind::None;
  /// Linear and llama3: context extension factor (> 0).
  double factor = 1.0;
  /// Llama3 only.
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalMaxPos = 8192;
};

struct RopeTableSpec {
  double theta = 10000.0;
  /// Even and positive.
  int32_t rotaryDim = 0;
  /// Rows (positions 0 .. maxPos-1).
  int64_t maxPos = 0;
  RopeScalingParams scaling;
};

/// The rotaryDim/2 scaled inverse frequencies.
Status ropeInverseFrequencies(const RopeTableSpec &spec,
                              std::vector<double> &invFreq);

/// Writes maxPos * rotaryDim floats to `table` (host memory).
Status fillRopeCosSin(const RopeTableSpec &spec, float *table);

/// Same, into a vector resized to maxPos * rotaryDim.
Status buildRopeCosSin(const RopeTableSpec &spec, std::vector<float> &table);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_ROPECOSSIN_H

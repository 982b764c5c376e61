// Checks of checkpoint values as they are loaded (runtime/Weights.cpp): a
// NaN or an infinity in a weight, or a finite value that the model's
// narrower dtype cannot hold, is an error naming the tensor and the
// element, because such a value runs without complaint and turns every
// logit it reaches into NaN, or into a finite but wrong number.
//
// The scans run over every byte of a checkpoint (gigabytes), so they are
// loops over the raw bits that the compiler vectorises: a value is not
// finite exactly when its exponent bits are all ones.
#ifndef STRATA_RUNTIME_WEIGHTSCAN_H
#define STRATA_RUNTIME_WEIGHTSCAN_H

#include "runtime/Safetensors.h"
#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

/// Index of the first NaN or infinity among the `count` values of `dtype`
/// at `src` (any alignment), or -1 when all are finite.
int64_t findNonFinite(SafetensorsDType dtype, const uint8_t *src,
                      int64_t count);

/// Index of the first infinity among `count` values of `dtype` at `data`,
/// or -1. After converting finite values, an infinity is an overflow.
int64_t findInfinite(plan::DType dtype, const uint8_t *data, int64_t count);

/// Whether converting `from` to `to` can turn a finite value into an
/// infinity (a wider exponent range into a narrower one).
bool conversionCanOverflow(SafetensorsDType from, plan::DType to);

/// "element 1234 (row 2, column 210)" for the element at flat index `index`
/// of a tensor of `shape`: row and column for matrices, the full index for
/// higher ranks, the flat index alone for vectors.
std::string elementText(const std::vector<int64_t> &shape, int64_t index);

} // namespace strata

#endif // STRATA_RUNTIME_WEIGHTSCAN_H

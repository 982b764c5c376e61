// Tensor maps (Hopper's tensor memory accelerator): the descriptor a
// cp.async.bulk.tensor copy reads to fetch a box of a global tensor into
// shared memory. Encoding is a driver function; it is resolved through the
// runtime once, so that nothing links the driver library.
#ifndef STRATA_KERNELS_COMMON_TENSORMAP_H
#define STRATA_KERNELS_COMMON_TENSORMAP_H

#include <cuda.h>

#include <cstdint>

namespace strata::kernels {

/// Encodes `map` over a tensor of 2-byte elements at `base` with `rank`
/// (<= 5) dimensions, innermost first: `dims` elements each, `strides`
/// bytes between consecutive indices of dimensions 1 .. rank - 1. A copy
/// fetches `box` elements per dimension; the box's rows of 128 bytes land
/// with the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)
/// of its 1024-byte atom), and elements outside the tensor read as zeros.
/// Returns false when the driver lacks tensor maps or rejects the shape
/// (alignment, strides, box); the caller then copies another way.
bool encodeSwizzledMap2B(CUtensorMap &map, const void *base, int rank,
                         const uint64_t *dims, const uint64_t *strides,
                         const uint32_t *box);

} // namespace strata::kernels

#endif // STRATA_KERNELS_COMMON_TENSORMAP_H

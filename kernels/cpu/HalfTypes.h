// 16-bit floating-point storage types for host code: IEEE binary16 (fp16)
// and bfloat16, with conversions that are bit-exact with CUDA's
// __float2half_rn / __float2bfloat16_rn (round to nearest, ties to even;
// overflow to infinity; every NaN becomes the canonical NaN 0x7FFF) and
// exact widening back to float.
//
// CPU reference kernels compute in fp32 and store through these functions, so
// that a reference output holds exactly the bits a GPU kernel doing the same
// fp32 arithmetic stores. No CUDA header is needed: the CPU backend and CI
// machines without a CUDA toolkit use this file.
#ifndef STRATA_KERNELS_CPU_HALFTYPES_H
#define STRATA_KERNELS_CPU_HALFTYPES_H

#include <cstdint>
#include <cstring>

namespace strata::kernels {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// fp32 -> bf16, round to nearest even.
inline uint16_t floatToBf16Bits(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return 0x7fff;
  // Adding 0x7fff plus the kept LSB carries into the kept half exactly when
  // the dropped half is above the tie, or at the tie with an odd kept half.
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16BitsToFloat(uint16_t h) {
  return floatFromBits(static_cast<uint32_t>(h) << 16);
}

/// fp32 -> fp16, round to nearest even, including fp16 subnormals.
inline uint16_t floatToF16Bits(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return 0x7fff;
  // 65520 = 65504 + half an ulp: the tie rounds to the even neighbour, inf.
  if (ax >= 0x477ff000u)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (ax >= 0x38800000u) {               // normal fp16 (>= 2^-14)
    uint32_t rebased = ax - 0x38000000u; // exponent bias 127 -> 15
    uint32_t kept = rebased >> 13;
    uint32_t dropped = rebased & 0x1fffu;
    if (dropped > 0x1000u || (dropped == 0x1000u && (kept & 1u)))
      ++kept; // a carry into the exponent is the correct rounding
    return static_cast<uint16_t>(sign | kept);
  }
  // At most 2^-25 (half the smallest subnormal, a tie) rounds to zero.
  if (ax <= 0x33000000u)
    return static_cast<uint16_t>(sign);
  // Subnormal fp16: count units of 2^-24.
  uint32_t exponent = ax >> 23;
  uint32_t mantissa = (ax & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - exponent; // 14..24
  uint32_t kept = mantissa >> shift;
  uint32_t dropped = mantissa & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (dropped > half || (dropped == half && (kept & 1u)))
    ++kept;
  return static_cast<uint16_t>(sign | kept);
}

inline float f16BitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) // inf or NaN (payload kept)
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return floatFromBits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24 is exact in fp32.
  float magnitude = static_cast<float>(mantissa) * floatFromBits(0x33800000u);
  return sign ? -magnitude : magnitude;
}

/// bfloat16 storage (same size and bits as CUDA's __nv_bfloat16).
struct BFloat16 {
  uint16_t bits = 0;
  static BFloat16 fromFloat(float f) { return BFloat16{floatToBf16Bits(f)}; }
  float toFloat() const { return bf16BitsToFloat(bits); }
};

/// IEEE fp16 storage (same size and bits as CUDA's __half).
struct Float16 {
  uint16_t bits = 0;
  static Float16 fromFloat(float f) { return Float16{floatToF16Bits(f)}; }
  float toFloat() const { return f16BitsToFloat(bits); }
};

static_assert(sizeof(BFloat16) == 2 && sizeof(Float16) == 2,
              "16-bit storage types must match the device layout");

} // namespace strata::kernels

#endif // STRATA_KERNELS_CPU_HALFTYPES_H

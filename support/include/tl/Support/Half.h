// IEEE binary16 <-> binary32, and binary32 -> bfloat16, round to nearest
// even. Header only: the runtime (host tensors) and the compiler (the CPU
// JIT's conversion helpers) share it.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace tl {

inline float halfToFloat(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  std::uint32_t bits = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13)
                                        : sign | ((exponent + 112) << 23) | (mantissa << 13);
  return std::bit_cast<float>(bits);
}

inline std::uint16_t floatToHalf(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) // NaN stays a (quiet) NaN
    return static_cast<std::uint16_t>(sign | 0x7e00u);
  if (abs >= 0x47800000u) // >= 2^16: infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) { // below 2^-14: a subnormal half, in units of 2^-24
    float scaled = std::bit_cast<float>(abs) * 16777216.0f; // exact
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  std::uint32_t rebiased = abs - 0x38000000u;                 // exponent 127 -> 15
  rebiased += 0xfffu + ((rebiased >> 13) & 1u);               // nearest even
  return static_cast<std::uint16_t>(sign | (rebiased >> 13)); // may carry to inf
}

/// bfloat16 (binary32's upper half), round to nearest even; NaN stays a
/// quiet NaN (rounding would carry its mantissa into the sign).
inline std::uint16_t floatToBfloat16(float f) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

} // namespace tl

// IEEE binary16 and bfloat16 on the host, bit-exact, round to nearest even. Kept free of CUDA
// headers so the host engine builds and tests without a GPU toolkit in the include path.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sparsetc::detail {

inline constexpr double kHalfMax = 65504.0;
inline constexpr double kBfloat16Max = 3.3895313892515355e38;

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // Inf, NaN
  if (exponent == 0) {
    if (mantissa == 0) return bits_float(sign);
    // subnormal: value = mantissa * 2^-24
    float value = std::ldexp(float(mantissa), -24);
    return sign ? -value : value;
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// Rounds a double to the nearest binary16 (ties to even). Values beyond the largest finite half
// after rounding become Inf; callers check the range first where that must be reported.
inline uint16_t double_to_half(double value) {
  uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  if (std::isnan(value)) {  // quiet NaN keeping the sign and the top payload bits (as F16C does)
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return uint16_t(sign | 0x7e00u | uint16_t((bits >> 42) & 0x3ffu));
  }
  double a = std::fabs(value);
  if (a >= 65520.0) return uint16_t(sign | 0x7c00u);  // rounds to Inf
  if (a < std::ldexp(1.0, -14)) {                     // subnormal range: units of 2^-24
    double units = std::nearbyint(a * 16777216.0);    // default rounding mode: ties to even
    return uint16_t(sign | uint16_t(units));          // units == 1024 is the smallest normal, still right
  }
  int exponent;
  double fraction = std::frexp(a, &exponent);  // a = fraction * 2^exponent, fraction in [0.5, 1)
  double scaled = std::nearbyint(std::ldexp(fraction, 11));  // 11 significant bits
  if (scaled >= 2048.0) {
    scaled /= 2.0;
    ++exponent;
  }
  uint32_t biased = uint32_t(exponent - 1 + 15);
  if (biased >= 31) return uint16_t(sign | 0x7c00u);
  return uint16_t(sign | (biased << 10) | (uint32_t(scaled) & 0x3ffu));
}

inline float bfloat16_to_float(uint16_t b) { return bits_float(uint32_t(b) << 16); }

inline uint16_t float_to_bfloat16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                          // ties to even
  return uint16_t(u >> 16);
}

// Rounding a double to bfloat16 through float may round twice; go straight from double instead.
inline uint16_t double_to_bfloat16(double value) {
  if (std::isnan(value)) {  // quiet NaN keeping the sign and the top payload bits
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return uint16_t(((bits >> 48) & 0x8000u) | 0x7fc0u | ((bits >> 45) & 0x7fu));
  }
  // Magnitudes from the largest finite bfloat16 plus half an ulp, (2 - 2^-8) * 2^127, round to
  // Inf. (Below, a finite float that rounds to Inf would otherwise be "corrected" to the largest
  // finite value by the neighbour comparison.)
  if (std::fabs(value) >= 0x1.ffp127) return std::signbit(value) ? 0xff80u : 0x7f80u;
  float f = float(value);  // exact when value already is a float; else correct up to a double rounding
  // Resolve the double-rounding case: if value is not a float, pick by comparing both neighbours.
  uint16_t candidate = float_to_bfloat16(f);
  if (double(f) == value || std::isinf(f)) return candidate;
  double c = bfloat16_to_float(candidate);
  uint16_t other = double(c) < value ? uint16_t(candidate + (std::signbit(value) ? -1 : 1))
                                     : uint16_t(candidate - (std::signbit(value) ? -1 : 1));
  double o = bfloat16_to_float(other);
  if (std::isnan(o)) return candidate;
  double dc = std::fabs(c - value), dother = std::fabs(o - value);
  if (dother < dc) return other;
  if (dother == dc) return (other & 1u) == 0 ? other : candidate;
  return candidate;
}

}  // namespace sparsetc::detail

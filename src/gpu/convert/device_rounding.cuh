// Value conversions on the device, bit for bit those of the host (core/half.hpp, formats/values.cpp
// on x86-64): round to nearest even, once (f64 -> f16/bf16 straight from double through
// cvt.rn.f16.f64 / cvt.rn.bf16.f64, never via float). NaNs are built explicitly: the host keeps
// the sign and the top payload bits and quiets the NaN (SSE conversions, F16C), while the device's
// cvt returns a canonical NaN.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace sparsetc::detail::gpuconv {

// Smallest magnitudes that round to Inf (largest finite value plus half an ulp), as values.cpp.
constexpr double kHalfOverflow = 65520.0;
constexpr double kBfloat16Overflow = 0x1.ffp127;
constexpr double kFloatOverflow = 0x1.ffffffp127;

__device__ __forceinline__ uint16_t d_double_to_half(double v) {
  const unsigned long long bits = __double_as_longlong(v);
  if (isnan(v)) return uint16_t(((bits >> 48) & 0x8000u) | 0x7e00u | ((bits >> 42) & 0x3ffu));
  return __half_as_ushort(__double2half(v));
}

__device__ __forceinline__ uint16_t d_float_to_half(float f) {
  // The host rounds double(f): exact, so one rounding from float; a NaN's payload moves up.
  const unsigned u = __float_as_uint(f);
  if (isnan(f)) return uint16_t(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
  return __half_as_ushort(__float2half_rn(f));
}

__device__ __forceinline__ uint16_t d_float_to_bfloat16(float f) {
  const unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

__device__ __forceinline__ uint16_t d_double_to_bfloat16(double v) {
  const unsigned long long bits = __double_as_longlong(v);
  if (isnan(v)) return uint16_t(((bits >> 48) & 0x8000u) | 0x7fc0u | ((bits >> 45) & 0x7fu));
  if (fabs(v) >= kBfloat16Overflow) return signbit(v) ? uint16_t(0xff80u) : uint16_t(0x7f80u);
  return __bfloat16_as_ushort(__double2bfloat16(v));
}

__device__ __forceinline__ float d_double_to_float(double v) {
  if (isnan(v)) {  // cvtsd2ss: quiet, top 23 payload bits
    const unsigned long long bits = __double_as_longlong(v);
    return __uint_as_float(unsigned((bits >> 32) & 0x80000000u) | 0x7fc00000u | unsigned((bits >> 29) & 0x7fffffu));
  }
  return __double2float_rn(v);
}

__device__ __forceinline__ double d_float_to_double(float f) {
  if (isnan(f)) {  // cvtss2sd: quiet, payload moved up
    const unsigned u = __float_as_uint(f);
    return __longlong_as_double(static_cast<long long>((static_cast<unsigned long long>(u & 0x80000000u) << 32) |
                                                       0x7ff8000000000000ull |
                                                       (static_cast<unsigned long long>(u & 0x7fffffu) << 29)));
  }
  return double(f);
}

// Widening as core/half.hpp's half_to_float / bfloat16_to_float (exact; a NaN keeps its payload).
__device__ __forceinline__ float d_half_to_float(uint16_t h) {
  const unsigned sign = unsigned(h & 0x8000u) << 16;
  const unsigned exponent = (h >> 10) & 0x1fu;
  const unsigned mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float value = float(mantissa) * 0x1p-24f;  // exact
    return sign ? -value : value;
  }
  return __uint_as_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

__device__ __forceinline__ float d_bfloat16_to_float(uint16_t b) { return __uint_as_float(unsigned(b) << 16); }

// A value of the compute type V from a stored value (load_values' conversions).
template <typename V>
__device__ __forceinline__ V d_from_float(float f);
template <>
__device__ __forceinline__ float d_from_float<float>(float f) { return f; }
template <>
__device__ __forceinline__ double d_from_float<double>(float f) { return d_float_to_double(f); }

template <typename V>
__device__ __forceinline__ V d_from_double(double d);
template <>
__device__ __forceinline__ float d_from_double<float>(double d) { return d_double_to_float(d); }
template <>
__device__ __forceinline__ double d_from_double<double>(double d) { return d; }

}  // namespace sparsetc::detail::gpuconv

// Value arrays of the public value types <-> the engine's float/double, with range checks.
#include "formats/values.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"

namespace sparsetc::detail {
namespace {


// Smallest magnitude that rounds to Inf in each type: the largest finite value plus half an ulp.
constexpr double kHalfOverflow = 65520.0;                 // 65504 + 16
constexpr double kBfloat16Overflow = 0x1.ffp127;          // (2 - 2^-8) * 2^127
constexpr double kFloatOverflow = 0x1.ffffffp127;         // (2 - 2^-24) * 2^127

template <typename Body>
void parallel_for(int64_t n, Body body) {
  parallel_chunks(n, 0, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

void check_array(const void* p, int64_t n, const char* what) {
  require(n >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative value count ", n);
  require(p != nullptr || n == 0, SPARSETC_STATUS_NULL_POINTER, what, " is NULL but n = ", n);
}

std::string max_text(sparsetc_value_type_t type) {
  switch (type) {
    case SPARSETC_VALUE_F32: return format_number(std::numeric_limits<float>::max());
    case SPARSETC_VALUE_F64: return format_number(std::numeric_limits<double>::max());
    case SPARSETC_VALUE_F16: return format_number(kHalfMax);
    default: return format_number(float(kBfloat16Max));
  }
}

template <typename Text>
std::string shortest(Text value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-Inf" : "Inf";
  char buffer[64];
  // Plain digits for everyday magnitudes ("100000", not "1e+05"), exponents otherwise.
  const Text a = std::fabs(value);
  const bool plain = a == 0 || (a >= Text(1e-5) && a < Text(1e16));
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value,
                              plain ? std::chars_format::fixed : std::chars_format::scientific);
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string format_number(double value) { return shortest(value); }
std::string format_number(float value) { return shortest(value); }

double max_finite(sparsetc_value_type_t type) {
  switch (type) {
    case SPARSETC_VALUE_F32: return double(std::numeric_limits<float>::max());
    case SPARSETC_VALUE_F64: return std::numeric_limits<double>::max();
    case SPARSETC_VALUE_F16: return kHalfMax;
    case SPARSETC_VALUE_BF16: return kBfloat16Max;
    default: fail(SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", type);
  }
}

template <typename V>
void load_values(const void* src, sparsetc_value_type_t type, int64_t n, V* dst) {
  require(is_valid_value_type(type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", type);
  check_array(src, n, "the source value array");
  check_array(dst, n, "the destination value array");
  switch (type) {
    case SPARSETC_VALUE_F32: {
      const float* s = static_cast<const float*>(src);
      parallel_for(n, [&](int64_t i) { dst[i] = V(s[i]); });
      break;
    }
    case SPARSETC_VALUE_F64: {
      // double -> float narrows: an out-of-range finite double would be undefined behaviour, so
      // go through store_values, which reports it.
      if constexpr (std::is_same_v<V, float>) {
        store_values(static_cast<const double*>(src), n, SPARSETC_VALUE_F32, dst);
      } else {
        const double* s = static_cast<const double*>(src);
        parallel_for(n, [&](int64_t i) { dst[i] = s[i]; });
      }
      break;
    }
    case SPARSETC_VALUE_F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      parallel_for(n, [&](int64_t i) { dst[i] = V(half_to_float(s[i])); });
      break;
    }
    default: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      parallel_for(n, [&](int64_t i) { dst[i] = V(bfloat16_to_float(s[i])); });
      break;
    }
  }
}

template <typename V>
void store_values(const V* src, int64_t n, sparsetc_value_type_t type, void* dst) {
  require(is_valid_value_type(type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", type);
  check_array(src, n, "the source value array");
  check_array(dst, n, "the destination value array");
  double overflow = std::numeric_limits<double>::infinity();
  switch (type) {
    case SPARSETC_VALUE_F32: overflow = std::is_same_v<V, float> ? overflow : kFloatOverflow; break;
    case SPARSETC_VALUE_F16: overflow = kHalfOverflow; break;
    case SPARSETC_VALUE_BF16: overflow = kBfloat16Overflow; break;
    default: break;
  }
  // A finite value at or beyond the overflow threshold would round to Inf.
  const int64_t bad = first_where(n, [&](int64_t i) {
    const double a = std::fabs(double(src[i]));
    return a >= overflow && a != std::numeric_limits<double>::infinity();
  });
  if (bad >= 0)
    fail(SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "value ", format_number(src[bad]), " at entry ", bad, " does not fit ",
         value_type_name(type), " (largest finite ", max_text(type), ")");
  switch (type) {
    case SPARSETC_VALUE_F32: {
      float* d = static_cast<float*>(dst);
      parallel_for(n, [&](int64_t i) { d[i] = float(src[i]); });
      break;
    }
    case SPARSETC_VALUE_F64: {
      double* d = static_cast<double*>(dst);
      parallel_for(n, [&](int64_t i) { d[i] = double(src[i]); });
      break;
    }
    case SPARSETC_VALUE_F16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      parallel_for(n, [&](int64_t i) { d[i] = double_to_half(double(src[i])); });
      break;
    }
    default: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      if constexpr (std::is_same_v<V, float>)
        parallel_for(n, [&](int64_t i) { d[i] = float_to_bfloat16(src[i]); });
      else
        parallel_for(n, [&](int64_t i) { d[i] = double_to_bfloat16(src[i]); });
      break;
    }
  }
}

int64_t find_non_finite(const void* src, sparsetc_value_type_t type, int64_t n) {
  require(is_valid_value_type(type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", type);
  check_array(src, n, "the value array");
  switch (type) {
    case SPARSETC_VALUE_F32: {
      const float* s = static_cast<const float*>(src);
      return first_where(n, [&](int64_t i) { return !std::isfinite(s[i]); });
    }
    case SPARSETC_VALUE_F64: {
      const double* s = static_cast<const double*>(src);
      return first_where(n, [&](int64_t i) { return !std::isfinite(s[i]); });
    }
    case SPARSETC_VALUE_F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      return first_where(n, [&](int64_t i) { return (s[i] & 0x7c00u) == 0x7c00u; });
    }
    default: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      return first_where(n, [&](int64_t i) { return (s[i] & 0x7f80u) == 0x7f80u; });
    }
  }
}

template void load_values<float>(const void*, sparsetc_value_type_t, int64_t, float*);
template void load_values<double>(const void*, sparsetc_value_type_t, int64_t, double*);
template void store_values<float>(const float*, int64_t, sparsetc_value_type_t, void*);
template void store_values<double>(const double*, int64_t, sparsetc_value_type_t, void*);

}  // namespace sparsetc::detail

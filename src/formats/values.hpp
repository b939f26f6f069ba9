// Value arrays of any public value type, read into and written from the engine's float/double.
#pragma once

#include <cstdint>
#include <string>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

// dst[i] = value of src[i] (f16/bf16 widened exactly).
template <typename V>
void load_values(const void* src, sparsetc_value_type_t type, int64_t n, V* dst);

// dst[i] = src[i] rounded to `type` (nearest even). A finite value whose magnitude exceeds the
// largest finite value of `type` throws VALUE_OUT_OF_RANGE naming the index and the value; NaN
// and Inf are stored as NaN and Inf (validation reports them where asked).
template <typename V>
void store_values(const V* src, int64_t n, sparsetc_value_type_t type, void* dst);

// Index of the first NaN or Inf in src, or -1.
int64_t find_non_finite(const void* src, sparsetc_value_type_t type, int64_t n);

// Largest finite magnitude of a value type.
double max_finite(sparsetc_value_type_t type);

// Shortest decimal text that reads back as the same number ("NaN", "Inf", "-Inf" otherwise), for
// messages: "70000", "0.1", "1e+300" (plain digits for magnitudes in [1e-5, 1e16)).
std::string format_number(double value);
std::string format_number(float value);

}  // namespace sparsetc::detail

// Facts about the public enumerations that the engine needs: element sizes, names, checks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

inline bool is_valid_value_type(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F32 || t == SPARSETC_VALUE_F64 || t == SPARSETC_VALUE_F16 || t == SPARSETC_VALUE_BF16;
}
inline bool is_valid_index_type(sparsetc_index_type_t t) { return t == SPARSETC_INDEX_32 || t == SPARSETC_INDEX_64; }
inline bool is_valid_base(sparsetc_index_base_t b) { return b == SPARSETC_BASE_ZERO || b == SPARSETC_BASE_ONE; }
inline bool is_valid_order(sparsetc_order_t o) { return o == SPARSETC_ORDER_COL || o == SPARSETC_ORDER_ROW; }
inline bool is_valid_memory(sparsetc_memory_t m) { return m == SPARSETC_MEMORY_HOST || m == SPARSETC_MEMORY_DEVICE; }

inline size_t value_size(sparsetc_value_type_t t) {
  switch (t) {
    case SPARSETC_VALUE_F32: return 4;
    case SPARSETC_VALUE_F64: return 8;
    case SPARSETC_VALUE_F16:
    case SPARSETC_VALUE_BF16: return 2;
    default: fail(SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", t);
  }
}
inline size_t index_size(sparsetc_index_type_t t) {
  switch (t) {
    case SPARSETC_INDEX_32: return 4;
    case SPARSETC_INDEX_64: return 8;
    default: fail(SPARSETC_STATUS_INVALID_VALUE, "unknown index type ", t);
  }
}
inline const char* value_type_name(sparsetc_value_type_t t) {
  switch (t) {
    case SPARSETC_VALUE_F32: return "f32";
    case SPARSETC_VALUE_F64: return "f64";
    case SPARSETC_VALUE_F16: return "f16";
    case SPARSETC_VALUE_BF16: return "bf16";
    default: return "unknown";
  }
}
inline const char* index_type_name(sparsetc_index_type_t t) {
  return t == SPARSETC_INDEX_32 ? "int32" : t == SPARSETC_INDEX_64 ? "int64" : "unknown";
}

// Reads element i of an index array of either width.
inline int64_t load_index(const void* array, sparsetc_index_type_t type, int64_t i) {
  return type == SPARSETC_INDEX_32 ? int64_t(static_cast<const int32_t*>(array)[i])
                                   : static_cast<const int64_t*>(array)[i];
}

}  // namespace sparsetc::detail

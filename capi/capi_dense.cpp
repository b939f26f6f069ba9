// Dense matrix descriptors: they only describe the caller's memory.
#include <memory>

#include "capi_guard.hpp"
#include "core/types.hpp"
#include "engine/dense.hpp"

using namespace sparsetc;

extern "C" {

sparsetc_status_t sparsetc_dense_create(sparsetc_handle_t handle, sparsetc_dense_t* dense, int64_t rows,
                                        int64_t cols, int64_t ld, void* values, sparsetc_value_type_t value_type,
                                        sparsetc_order_t order, sparsetc_memory_t memory) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(dense, "dense");
    *dense = nullptr;
    detail::require(rows >= 0 && cols >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative size ", rows, "x", cols);
    detail::require(detail::is_valid_value_type(value_type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ",
                    value_type);
    detail::require(detail::is_valid_order(order), SPARSETC_STATUS_INVALID_VALUE, "unknown order ", order);
    detail::require(detail::is_valid_memory(memory), SPARSETC_STATUS_INVALID_VALUE, "unknown memory space ", memory);
    const int64_t minimum = order == SPARSETC_ORDER_ROW ? cols : rows;
    detail::require(ld >= minimum && ld >= 1, SPARSETC_STATUS_INVALID_VALUE, "ld = ", ld, " is less than ",
                    order == SPARSETC_ORDER_ROW ? "cols" : "rows", " (", minimum, ") for a ",
                    order == SPARSETC_ORDER_ROW ? "row" : "column", "-major ", rows, "x", cols, " matrix");
    auto d = std::make_unique<sparsetc_dense_s>();
    *d = sparsetc_dense_s{rows, cols, ld, values, value_type, order, memory};
    *dense = d.release();
  });
}

sparsetc_status_t sparsetc_dense_set_values(sparsetc_dense_t dense, void* values) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(dense, "dense");
    dense->values = values;
  });
}

sparsetc_status_t sparsetc_dense_get(sparsetc_dense_t dense, int64_t* rows, int64_t* cols, int64_t* ld,
                                     void** values, sparsetc_value_type_t* value_type, sparsetc_order_t* order,
                                     sparsetc_memory_t* memory) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(dense, "dense");
    if (rows) *rows = dense->rows;
    if (cols) *cols = dense->cols;
    if (ld) *ld = dense->ld;
    if (values) *values = dense->values;
    if (value_type) *value_type = dense->value_type;
    if (order) *order = dense->order;
    if (memory) *memory = dense->memory;
  });
}

sparsetc_status_t sparsetc_dense_destroy(sparsetc_dense_t dense) {
  return SPARSETC_GUARD(nullptr, { delete dense; });
}

}  // extern "C"

// Our public enumerations were given cuSPARSE's and CUDA's numeric values, so these are casts;
// the static_asserts keep it that way.
#pragma once

#include <cusparse.h>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

static_assert(int(CUDA_R_32F) == SPARSETC_VALUE_F32 && int(CUDA_R_64F) == SPARSETC_VALUE_F64 &&
              int(CUDA_R_16F) == SPARSETC_VALUE_F16 && int(CUDA_R_16BF) == SPARSETC_VALUE_BF16);
static_assert(int(CUSPARSE_INDEX_32I) == SPARSETC_INDEX_32 && int(CUSPARSE_INDEX_64I) == SPARSETC_INDEX_64);
static_assert(int(CUSPARSE_INDEX_BASE_ZERO) == SPARSETC_BASE_ZERO && int(CUSPARSE_INDEX_BASE_ONE) == SPARSETC_BASE_ONE);
static_assert(int(CUSPARSE_ORDER_COL) == SPARSETC_ORDER_COL && int(CUSPARSE_ORDER_ROW) == SPARSETC_ORDER_ROW);
static_assert(int(CUSPARSE_OPERATION_NON_TRANSPOSE) == SPARSETC_OP_NON_TRANSPOSE &&
              int(CUSPARSE_OPERATION_TRANSPOSE) == SPARSETC_OP_TRANSPOSE);
static_assert(int(CUSPARSE_STATUS_INSUFFICIENT_RESOURCES) == SPARSETC_STATUS_INSUFFICIENT_RESOURCES &&
              int(CUSPARSE_STATUS_NOT_SUPPORTED) == SPARSETC_STATUS_NOT_SUPPORTED);

inline cudaDataType cuda_type(sparsetc_value_type_t t) { return cudaDataType(t); }
inline cusparseIndexType_t cusparse_index(sparsetc_index_type_t t) { return cusparseIndexType_t(t); }
inline cusparseIndexBase_t cusparse_base(sparsetc_index_base_t b) { return cusparseIndexBase_t(b); }
inline cusparseOrder_t cusparse_order(sparsetc_order_t o) { return cusparseOrder_t(o); }
inline cusparseOperation_t cusparse_op(sparsetc_operation_t o) { return cusparseOperation_t(o); }

}  // namespace sparsetc::detail

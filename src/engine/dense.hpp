// The dense matrix descriptor behind sparsetc_dense_t: it only describes the caller's memory.
#pragma once

#include <cstdint>

#include "sparsetc/sparsetc_types.h"

struct sparsetc_dense_s {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  void* values = nullptr;
  sparsetc_value_type_t value_type = SPARSETC_VALUE_F32;
  sparsetc_order_t order = SPARSETC_ORDER_ROW;
  sparsetc_memory_t memory = SPARSETC_MEMORY_HOST;
};

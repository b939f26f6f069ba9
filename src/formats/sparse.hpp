// The host engine's canonical sparse formats: zero-based, 64-bit offsets and indices, values of
// the compute type (float or double). Everything the C ABI accepts is imported into these, and
// results are exported from them (formats/raw.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

template <typename V>
struct CsrMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> row_ptr{0};  // rows + 1 entries
  std::vector<int64_t> col_idx;     // nnz entries, sorted and unique within a row
  std::vector<V> values;            // nnz entries
  int64_t nnz() const { return int64_t(col_idx.size()); }
};

template <typename V>
struct CscMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> col_ptr{0};  // cols + 1 entries
  std::vector<int64_t> row_idx;     // nnz entries, sorted and unique within a column
  std::vector<V> values;
  int64_t nnz() const { return int64_t(row_idx.size()); }
};

// Entries in any order, possibly repeated.
template <typename V>
struct CooMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> row_idx;
  std::vector<int64_t> col_idx;
  std::vector<V> values;
  int64_t nnz() const { return int64_t(row_idx.size()); }
};

// A dense matrix in memory it does not own. Element (i, j) is at data[i * ld + j] (row-major) or
// data[i + j * ld] (column-major).
template <typename V>
struct DenseView {
  V* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  sparsetc_order_t order = SPARSETC_ORDER_ROW;
  V& at(int64_t i, int64_t j) const { return order == SPARSETC_ORDER_ROW ? data[i * ld + j] : data[i + j * ld]; }
};

// A dense matrix that owns its storage (tests, conversions).
template <typename V>
struct DenseMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  sparsetc_order_t order = SPARSETC_ORDER_ROW;
  std::vector<V> data;  // ld = cols (row-major) or rows (column-major)
  DenseView<V> view() { return {data.data(), rows, cols, order == SPARSETC_ORDER_ROW ? cols : rows, order}; }
  DenseView<const V> view() const {
    return {data.data(), rows, cols, order == SPARSETC_ORDER_ROW ? cols : rows, order};
  }
};

}  // namespace sparsetc::detail

// Triplets (test_support.hpp) as the host engine's CSR, for the tests of the C++ engine (they link
// sparsetc_engine; the C API's tests see only the public headers).
#pragma once

#include "formats/sparse.hpp"
#include "test_support.hpp"

namespace sparsetc_test {

// The triplets as a CsrMatrix with values converted to V (the map is sorted by row, then column).
template <typename V = double>
sparsetc::detail::CsrMatrix<V> csr_of(const Triplets& t) {
  const auto a = to_csr<int64_t, int64_t>(t);
  sparsetc::detail::CsrMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.row_ptr = a.row_ptr;
  m.col_idx = a.col;
  m.values.reserve(a.val.size());
  for (double v : a.val) m.values.push_back(V(v));
  return m;
}

}  // namespace sparsetc_test

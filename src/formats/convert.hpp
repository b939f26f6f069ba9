// Conversions between the canonical host formats. All outputs are sorted by (row, column) with
// unique entries; conversions are deterministic and keep explicit zeros.
#pragma once

#include "formats/sparse.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

// Sorts entries by (row, column). Duplicates: SPARSETC_DUPLICATES_ERROR throws
// DUPLICATE_ENTRY naming the first repeated (row, column) in zero-based coordinates;
// SPARSETC_DUPLICATES_SUM adds them (in input order, so the sum is reproducible).
template <typename V>
CsrMatrix<V> coo_to_csr(const CooMatrix<V>& coo, sparsetc_duplicates_t duplicates);
template <typename V>
CooMatrix<V> csr_to_coo(const CsrMatrix<V>& csr);
template <typename V>
CscMatrix<V> csr_to_csc(const CsrMatrix<V>& csr);
template <typename V>
CsrMatrix<V> csc_to_csr(const CscMatrix<V>& csc);
// The transpose as a CSR matrix (the CSC arrays of A read as CSR of A^T).
template <typename V>
CsrMatrix<V> transpose(const CsrMatrix<V>& csr);
template <typename V>
DenseMatrix<V> csr_to_dense(const CsrMatrix<V>& csr, sparsetc_order_t order);
// Keeps every entry that is not exactly zero.
template <typename V>
CsrMatrix<V> dense_to_csr(const DenseView<const V>& dense);
template <typename To, typename From>
CsrMatrix<To> cast_values(const CsrMatrix<From>& csr);

}  // namespace sparsetc::detail

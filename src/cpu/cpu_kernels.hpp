// The CPU engine: multithreaded SpMM and SpGEMM on the canonical CSR. It is the library's backend
// where no GPU is usable and the float64 oracle of every GPU test.
#pragma once

#include <cstdint>

#include "formats/sparse.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

// C = alpha * op(A) * B + beta * C, B and C row- or column-major with leading dimensions.
// beta == 0 never reads C (NaN in C does not propagate). Shapes must agree (DIMENSION_MISMATCH).
// op(A) = A^T is computed without forming the transpose when that is cheaper.
template <typename V>
void cpu_spmm(const CsrMatrix<V>& A, sparsetc_operation_t op, const DenseView<const V>& B, const DenseView<V>& C,
              V alpha, V beta, int threads);

// Number of multiplications in A * B (sum over A's entries (i, k) of nnz(B row k)).
template <typename V>
int64_t cpu_count_products(const CsrMatrix<V>& A, const CsrMatrix<V>& B, int threads);

// SpGEMM split as plans need it. Symbolic: C's row pointers and sorted column indices (values
// left empty). Numeric: C's values for a C from symbolic on the same patterns. Gustavson's
// algorithm with a dense sparse accumulator per thread; structural entries are kept even when
// their value is zero; results are bitwise reproducible for any thread count.
template <typename V>
CsrMatrix<V> cpu_spgemm_symbolic(const CsrMatrix<V>& A, const CsrMatrix<V>& B, int threads);
template <typename V>
void cpu_spgemm_numeric(const CsrMatrix<V>& A, const CsrMatrix<V>& B, CsrMatrix<V>& C, int threads);
// Both in one.
template <typename V>
CsrMatrix<V> cpu_spgemm(const CsrMatrix<V>& A, const CsrMatrix<V>& B, int threads);

struct Analysis {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t empty_rows = 0;
  int64_t row_length_min = 0, row_length_max = 0;
  double row_length_mean = 0, row_length_std = 0;  // population standard deviation
  double density = 0;
  int64_t products = -1;
  int64_t bandwidth = 0;
};

// Statistics of A; products of A*B when B is not null (cols(A) must equal rows(B)).
template <typename V>
Analysis cpu_analyze(const CsrMatrix<V>& A, const CsrMatrix<V>* B, int threads);

}  // namespace sparsetc::detail

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

// Structure statistics (sparsetc_analysis_t; definitions and conventions in src/cpu/analysis.cpp).
struct Analysis {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t empty_rows = 0;
  int64_t row_length_min = 0, row_length_max = 0;
  double row_length_mean = 0, row_length_std = 0;  // population standard deviation
  double density = 0;
  int64_t products = -1;
  int64_t bandwidth = 0;
  // BCSR at the tensor-core shapes (h x w): blocks holding at least one stored entry, and
  // fill = nnz / (blocks * h * w), 0 without blocks. Blocks are aligned at multiples of h and w.
  int64_t blocks_16x8 = 0, blocks_16x16 = 0, blocks_8x8 = 0;
  double fill_16x8 = 0, fill_16x16 = 0, fill_8x8 = 0;
  // 8x8 bitmap tiles (tSparse): density = stored entries / 64 over the non-empty tiles; median
  // (mean of the two middle values for an even count), mean and population std. 0 without tiles.
  double tile_density_median = 0, tile_density_mean = 0, tile_density_std = 0;
  // DCSR statistics (Fujiki et al., Eq. 1-2) over vertical strips of strip_width columns.
  int64_t strip_width = 0;                  // the width used (> 0)
  int64_t nonempty_rows = 0;                // n_nnzrow
  double nonempty_rows_per_strip_mean = 0;  // mean over the ceil(cols / strip_width) strips of n_nnzrow_strip
  double h_norm = 0;                        // Eq. 1; 0 when nnz <= 1
  double ssf = 0;                           // Eq. 2 with n = rows; 0 when rows == 0 or nnz == 0
};

// Strip width of the DCSR statistics when the caller passes 0.
inline constexpr int64_t kDefaultStripWidth = 256;

// The exact sums every Analysis field is derived from. The CPU and the GPU engines both produce
// them and share analysis_from_sums, so the fields that depend on integers only come out bitwise
// identical on both; only the two entropy sums (doubles) depend on summation order and libm.
struct AnalysisSums {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t strip_width = kDefaultStripWidth;  // resolved, > 0
  int64_t empty_rows = 0;
  int64_t row_length_min = 0, row_length_max = 0;  // over all rows (0, 0 when rows == 0)
  uint64_t row_length_squares_lo = 0, row_length_squares_hi = 0;  // sum of length^2, 128 bits
  int64_t bandwidth = 0;
  int64_t products = -1;
  int64_t blocks_16x8 = 0, blocks_16x16 = 0;
  int64_t tile_histogram[65] = {};  // 8x8 tiles by their number of stored entries (bin 0 unused)
  int64_t row_segments = 0;         // (row, strip) pairs holding entries = sum over strips of n_nnzrow_strip
  double entropy_self = 0;          // sum over row segments of c * ln(c), c = entries of the segment
  double entropy_rest = 0;          // sum over row segments of c * ln(nnz / c)
};
Analysis analysis_from_sums(const AnalysisSums& sums);

// Statistics of A; products of A*B when B is not null (cols(A) must equal rows(B)). strip_width
// is the width of the DCSR strips: 0 for kDefaultStripWidth, < 0 is INVALID_VALUE. Deterministic
// for any thread count; O(nnz + rows) time and O(cols / 8) scratch per thread, except for very wide
// hypersparse matrices (cols / 8 > max(2^16, nnz / threads)): O(nnz log) time by sorting, scratch
// O(entries of a 16-row block row).
template <typename V>
Analysis cpu_analyze(const CsrMatrix<V>& A, const CsrMatrix<V>* B, int threads, int64_t strip_width = 0);

}  // namespace sparsetc::detail

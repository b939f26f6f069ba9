// CPU SpMM: C = alpha * op(A) * B + beta * C on the canonical CSR, B and C dense in either order.
//
// Every element of C is one sum over the stored entries of a row of op(A), in their stored order,
// started from zero: the result does not depend on the thread count, the chunking or the layouts.
// op(A) = A^T goes through the transpose built once (a deterministic counting sort, rows kept in
// ascending order within each column), so it is the same computation on A^T's rows.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/cpu_kernels.hpp"

namespace sparsetc::detail {
namespace {

// Rows per dynamically scheduled chunk: enough chunks per thread to balance skewed rows.
int64_t row_chunk(int64_t rows, int threads) {
  const int64_t t = resolve_threads(threads);
  return std::clamp<int64_t>(rows / (t * 64), 8, 512);
}

template <typename V>
void check_csr(const CsrMatrix<V>& A) {
  require(A.rows >= 0 && A.cols >= 0 && int64_t(A.row_ptr.size()) == A.rows + 1 &&
              A.row_ptr.back() == A.nnz() && A.values.size() == A.col_idx.size(),
          SPARSETC_STATUS_INVALID_VALUE, "A's CSR arrays are inconsistent (", A.rows, "x", A.cols, ", ",
          A.row_ptr.size(), " row offsets, ", A.col_idx.size(), " indices, ", A.values.size(), " values)");
}

template <typename V>
void check_dense(const DenseView<V>& D, const char* name) {
  require(D.order == SPARSETC_ORDER_ROW || D.order == SPARSETC_ORDER_COL, SPARSETC_STATUS_INVALID_VALUE, name,
          " has an unknown order ", D.order);
  require(D.rows >= 0 && D.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, name, " has a negative size ", D.rows, "x",
          D.cols);
  const int64_t min_ld = D.order == SPARSETC_ORDER_ROW ? D.cols : D.rows;
  require(D.ld >= min_ld, SPARSETC_STATUS_INVALID_VALUE, name, "'s leading dimension ", D.ld, " is less than ",
          min_ld, " (", D.rows, "x", D.cols,
          D.order == SPARSETC_ORDER_ROW ? ", row-major)" : ", column-major)");
  require(D.data != nullptr || D.rows == 0 || D.cols == 0, SPARSETC_STATUS_NULL_POINTER, name,
          " has no data");
}

// A^T as CSR: a counting sort by column over fixed row blocks, so entries of a column stay in
// ascending row order whatever the number of blocks (the result never depends on threads).
template <typename V>
CsrMatrix<V> transpose_csr(const CsrMatrix<V>& A, int threads) {
  CsrMatrix<V> T;
  T.rows = A.cols;
  T.cols = A.rows;
  const int64_t nnz = A.nnz();
  T.row_ptr.assign(size_t(T.rows + 1), 0);
  T.col_idx.resize(size_t(nnz));
  T.values.resize(size_t(nnz));
  if (nnz == 0) return T;
  // Blocks of A's rows, each with its own column counters (memory blocks * cols: capped).
  const int64_t t = resolve_threads(threads);
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>({t, nnz / std::max<int64_t>(A.cols, 1), A.rows}));
  const int64_t rows_per_block = (A.rows + blocks - 1) / blocks;
  std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(blocks));
  guarded_chunks(blocks, threads, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      std::vector<int64_t>& count = offsets[size_t(b)];
      count.assign(size_t(A.cols), 0);
      const int64_t r1 = std::min(A.rows, (b + 1) * rows_per_block);
      for (int64_t p = A.row_ptr[size_t(std::min(A.rows, b * rows_per_block))]; p < A.row_ptr[size_t(r1)]; ++p)
        ++count[size_t(A.col_idx[size_t(p)])];
    }
  });
  // Exclusive offsets: column c of block b starts after columns < c and after blocks < b of c.
  int64_t running = 0;
  for (int64_t c = 0; c < A.cols; ++c) {
    T.row_ptr[size_t(c)] = running;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t n = offsets[size_t(b)][size_t(c)];
      offsets[size_t(b)][size_t(c)] = running;
      running += n;
    }
  }
  T.row_ptr[size_t(A.cols)] = running;
  guarded_chunks(blocks, threads, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      std::vector<int64_t>& next = offsets[size_t(b)];
      const int64_t r0 = std::min(A.rows, b * rows_per_block), r1 = std::min(A.rows, (b + 1) * rows_per_block);
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t p = A.row_ptr[size_t(i)]; p < A.row_ptr[size_t(i + 1)]; ++p) {
          const int64_t q = next[size_t(A.col_idx[size_t(p)])]++;
          T.col_idx[size_t(q)] = i;
          T.values[size_t(q)] = A.values[size_t(p)];
        }
    }
  });
  return T;
}

// C = beta * C (beta == 0 writes zeros without reading C).
template <typename V>
void scale_dense(const DenseView<V>& C, V beta, int threads) {
  const bool row = C.order == SPARSETC_ORDER_ROW;
  const int64_t outer = row ? C.rows : C.cols, inner = row ? C.cols : C.rows;
  guarded_chunks(outer, threads, row_chunk(outer, threads), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      V* line = C.data + o * C.ld;
      if (beta == V(0))
        std::fill(line, line + inner, V(0));
      else
        for (int64_t k = 0; k < inner; ++k) line[k] = beta * line[k];
    }
  });
}

// C(i, :) = alpha * acc + beta * C(i, :) with C's row stride in elements (1 for row-major).
template <typename V>
inline void store_row(V* out, int64_t stride, const V* acc, int64_t n, V alpha, V beta) {
  if (stride == 1) {
    if (beta == V(0))
      for (int64_t j = 0; j < n; ++j) out[j] = alpha * acc[j];
    else
      for (int64_t j = 0; j < n; ++j) out[j] = alpha * acc[j] + beta * out[j];
  } else {
    if (beta == V(0))
      for (int64_t j = 0; j < n; ++j) out[j * stride] = alpha * acc[j];
    else
      for (int64_t j = 0; j < n; ++j) out[j * stride] = alpha * acc[j] + beta * out[j * stride];
  }
}

// Row-major B: each row of C accumulated in a local buffer, contiguous loops over B's rows.
template <typename V>
void spmm_b_row_major(const CsrMatrix<V>& A, const DenseView<const V>& B, const DenseView<V>& C, V alpha, V beta,
                      int threads) {
  const int64_t n = B.cols;
  const bool c_row = C.order == SPARSETC_ORDER_ROW;
  const int64_t c_row_step = c_row ? C.ld : 1, c_col_step = c_row ? 1 : C.ld;
  const int64_t* row_ptr = A.row_ptr.data();
  const int64_t* col = A.col_idx.data();
  const V* val = A.values.data();
  guarded_chunks(A.rows, threads, row_chunk(A.rows, threads), [&](int64_t begin, int64_t end) {
    std::vector<V> buffer(static_cast<size_t>(n));
    V* acc = buffer.data();
    for (int64_t i = begin; i < end; ++i) {
      std::fill(acc, acc + n, V(0));
      for (int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
        const V a = val[p];
        const V* b = B.data + col[p] * B.ld;
        for (int64_t j = 0; j < n; ++j) acc[j] += a * b[j];
      }
      store_row(C.data + i * c_row_step, c_col_step, acc, n, alpha, beta);
    }
  });
}

// Column-major B: one column of B at a time over a block of rows whose entries stay in cache.
template <typename V>
void spmm_b_col_major(const CsrMatrix<V>& A, const DenseView<const V>& B, const DenseView<V>& C, V alpha, V beta,
                      int threads) {
  const int64_t n = B.cols;
  const bool c_row = C.order == SPARSETC_ORDER_ROW;
  const int64_t c_row_step = c_row ? C.ld : 1, c_col_step = c_row ? 1 : C.ld;
  const int64_t* row_ptr = A.row_ptr.data();
  const int64_t* col = A.col_idx.data();
  const V* val = A.values.data();
  constexpr int64_t block_entries = 4096;  // A's entries of a row block (about 48 KiB with indices)
  guarded_chunks(A.rows, threads, row_chunk(A.rows, threads), [&](int64_t begin, int64_t end) {
    for (int64_t i0 = begin; i0 < end;) {
      int64_t i1 = i0 + 1;
      while (i1 < end && row_ptr[i1 + 1] - row_ptr[i0] <= block_entries) ++i1;
      for (int64_t j = 0; j < n; ++j) {
        const V* b = B.data + j * B.ld;
        V* out = C.data + j * c_col_step;
        for (int64_t i = i0; i < i1; ++i) {
          V sum = V(0);
          for (int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) sum += val[p] * b[col[p]];
          V& c = out[i * c_row_step];
          c = beta == V(0) ? alpha * sum : alpha * sum + beta * c;
        }
      }
      i0 = i1;
    }
  });
}

template <typename V>
void spmm_rows(const CsrMatrix<V>& A, const DenseView<const V>& B, const DenseView<V>& C, V alpha, V beta,
               int threads) {
  if (B.order == SPARSETC_ORDER_ROW)
    spmm_b_row_major(A, B, C, alpha, beta, threads);
  else
    spmm_b_col_major(A, B, C, alpha, beta, threads);
}

}  // namespace

template <typename V>
void cpu_spmm(const CsrMatrix<V>& A, sparsetc_operation_t op, const DenseView<const V>& B, const DenseView<V>& C,
              V alpha, V beta, int threads) {
  require(op == SPARSETC_OP_NON_TRANSPOSE || op == SPARSETC_OP_TRANSPOSE, SPARSETC_STATUS_INVALID_VALUE,
          "unknown operation ", op, " on A");
  check_csr(A);
  check_dense(B, "B");
  check_dense(C, "C");
  const bool transpose = op == SPARSETC_OP_TRANSPOSE;
  const int64_t m = transpose ? A.cols : A.rows, k = transpose ? A.rows : A.cols;
  require(k == B.rows, SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A) is ", m, "x", k, " but B is ", B.rows, "x",
          B.cols);
  require(m == C.rows && B.cols == C.cols, SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A)*B is ", m, "x", B.cols,
          " but C is ", C.rows, "x", C.cols);
  if (m == 0 || B.cols == 0) return;
  if (alpha == V(0) || A.nnz() == 0) {
    // No products: C = beta * C (B is not read, as BLAS does for alpha == 0).
    scale_dense(C, beta, threads);
    return;
  }
  if (transpose) {
    const CsrMatrix<V> T = transpose_csr(A, threads);
    spmm_rows(T, B, C, alpha, beta, threads);
  } else {
    spmm_rows(A, B, C, alpha, beta, threads);
  }
}

template void cpu_spmm<float>(const CsrMatrix<float>&, sparsetc_operation_t, const DenseView<const float>&,
                              const DenseView<float>&, float, float, int);
template void cpu_spmm<double>(const CsrMatrix<double>&, sparsetc_operation_t, const DenseView<const double>&,
                               const DenseView<double>&, double, double, int);

}  // namespace sparsetc::detail

// CPU SpGEMM: Gustavson's row-by-row algorithm with a dense accumulator per worker.
//
// Two passes make memory exact: the first counts each row of C, the second writes its sorted
// columns (and, when fused, its values). Workers reuse a marker array of cols(B) stamps: a column
// is in the current row when its stamp is the row's, so nothing is cleared between rows. Each
// value of C is 0 + the products added in a fixed order (A's row entries in stored order, then
// B's), so results are bitwise identical for any thread count. Structural zeros stay.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/cpu_kernels.hpp"

namespace sparsetc::detail {
namespace {

int64_t row_chunk(int64_t rows, int threads) {
  const int64_t t = resolve_threads(threads);
  return std::clamp<int64_t>(rows / (t * 64), 8, 256);
}

// Per-worker accumulator: stamps (-1 = never used) and values, both of size cols(B). Workers
// take one from the pool for a chunk and give it back, so at most one per running thread exists
// and nothing depends on thread ids.
template <typename V>
struct Accumulator {
  std::vector<int64_t> stamp;
  std::vector<V> value;
};

template <typename V>
class AccumulatorPool {
 public:
  AccumulatorPool(int64_t width, bool with_values) : width_(width), with_values_(with_values) {}
  std::unique_ptr<Accumulator<V>> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        auto acc = std::move(free_.back());
        free_.pop_back();
        return acc;
      }
    }
    auto acc = std::make_unique<Accumulator<V>>();
    acc->stamp.assign(size_t(width_), -1);
    if (with_values_) acc->value.resize(size_t(width_));
    return acc;
  }
  void give(std::unique_ptr<Accumulator<V>> acc) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(acc));
  }

 private:
  int64_t width_;
  bool with_values_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Accumulator<V>>> free_;
};

// Runs body(begin, end, accumulator) over rows with pooled accumulators.
template <typename V, typename Body>
void rows_with_accumulators(int64_t rows, int threads, AccumulatorPool<V>& pool, Body&& body) {
  guarded_chunks(rows, threads, row_chunk(rows, threads), [&](int64_t begin, int64_t end) {
    auto acc = pool.take();
    body(begin, end, *acc);
    pool.give(std::move(acc));
  });
}

template <typename V>
void check_csr(const CsrMatrix<V>& M, const char* name, bool need_values) {
  require(M.rows >= 0 && M.cols >= 0 && int64_t(M.row_ptr.size()) == M.rows + 1 && M.row_ptr.back() == M.nnz() &&
              (!need_values || M.values.size() == M.col_idx.size()),
          SPARSETC_STATUS_INVALID_VALUE, name, "'s CSR arrays are inconsistent (", M.rows, "x", M.cols, ", ",
          M.row_ptr.size(), " row offsets, ", M.col_idx.size(), " indices, ", M.values.size(), " values)");
}

template <typename V>
void check_shapes(const CsrMatrix<V>& A, const CsrMatrix<V>& B) {
  require(A.cols == B.rows, SPARSETC_STATUS_DIMENSION_MISMATCH, "A is ", A.rows, "x", A.cols, " but B is ", B.rows,
          "x", B.cols, " (cols(A) must equal rows(B))");
}

// Puts the `count` distinct columns of row stamp `s` in `out`, sorted: a sort of the collected
// columns, or a scan of the stamps when the row covers a large part of cols(B).
inline void sort_row(int64_t* out, int64_t count, const int64_t* stamp, int64_t width, int64_t s) {
  if (count < 2) return;
  if (count * 32 < width) {
    std::sort(out, out + count);
  } else {
    int64_t c = 0;
    for (int64_t j = 0; j < width; ++j)
      if (stamp[j] == s) out[c++] = j;
  }
}

// Pass 1: row_ptr of C (row lengths, then prefix sums). Stamps are the row numbers (>= 0).
template <typename V>
std::vector<int64_t> count_rows(const CsrMatrix<V>& A, const CsrMatrix<V>& B, AccumulatorPool<V>& pool,
                                int threads) {
  std::vector<int64_t> row_ptr(size_t(A.rows + 1), 0);
  const int64_t *a_ptr = A.row_ptr.data(), *a_col = A.col_idx.data();
  const int64_t *b_ptr = B.row_ptr.data(), *b_col = B.col_idx.data();
  rows_with_accumulators(A.rows, threads, pool, [&](int64_t begin, int64_t end, Accumulator<V>& acc) {
    int64_t* stamp = acc.stamp.data();
    for (int64_t i = begin; i < end; ++i) {
      int64_t count = 0;
      for (int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) {
        const int64_t k = a_col[p];
        for (int64_t q = b_ptr[k]; q < b_ptr[k + 1]; ++q) {
          const int64_t j = b_col[q];
          if (stamp[j] != i) {
            stamp[j] = i;
            ++count;
          }
        }
      }
      row_ptr[size_t(i + 1)] = count;
    }
  });
  for (int64_t i = 0; i < A.rows; ++i) row_ptr[size_t(i + 1)] += row_ptr[size_t(i)];
  return row_ptr;
}

// Pass 2: C's sorted columns, and its values when `values` is set. Stamps are -(row + 2), so
// they differ from pass 1's and from the initial -1.
template <typename V>
void fill_rows(const CsrMatrix<V>& A, const CsrMatrix<V>& B, CsrMatrix<V>& C, bool values, AccumulatorPool<V>& pool,
               int threads) {
  const int64_t width = B.cols;
  const int64_t *a_ptr = A.row_ptr.data(), *a_col = A.col_idx.data();
  const int64_t *b_ptr = B.row_ptr.data(), *b_col = B.col_idx.data();
  const V* a_val = A.values.data();
  const V* b_val = B.values.data();
  const int64_t* c_ptr = C.row_ptr.data();
  int64_t* c_col = C.col_idx.data();
  V* c_val = C.values.data();
  rows_with_accumulators(A.rows, threads, pool, [&](int64_t begin, int64_t end, Accumulator<V>& acc) {
    int64_t* stamp = acc.stamp.data();
    V* sum = acc.value.data();
    for (int64_t i = begin; i < end; ++i) {
      const int64_t s = -(i + 2);
      int64_t* out = c_col + c_ptr[i];
      int64_t count = 0;
      if (values) {
        for (int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) {
          const int64_t k = a_col[p];
          const V a = a_val[p];
          for (int64_t q = b_ptr[k]; q < b_ptr[k + 1]; ++q) {
            const int64_t j = b_col[q];
            if (stamp[j] != s) {
              stamp[j] = s;
              sum[j] = V(0);
              out[count++] = j;
            }
            sum[j] += a * b_val[q];
          }
        }
      } else {
        for (int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) {
          const int64_t k = a_col[p];
          for (int64_t q = b_ptr[k]; q < b_ptr[k + 1]; ++q) {
            const int64_t j = b_col[q];
            if (stamp[j] != s) {
              stamp[j] = s;
              out[count++] = j;
            }
          }
        }
      }
      // Pass 1 counted the same set; a mismatch means A or B changed between the passes.
      if (count != c_ptr[i + 1] - c_ptr[i])
        fail(SPARSETC_STATUS_INTERNAL_ERROR, "SpGEMM row ", i, " has ", count, " entries, counted ",
             c_ptr[i + 1] - c_ptr[i]);
      sort_row(out, count, stamp, width, s);
      if (values) {
        V* vout = c_val + c_ptr[i];
        for (int64_t c = 0; c < count; ++c) vout[c] = sum[out[c]];
      }
    }
  });
}

template <typename V>
CsrMatrix<V> spgemm(const CsrMatrix<V>& A, const CsrMatrix<V>& B, bool values, int threads) {
  check_csr(A, "A", values);
  check_csr(B, "B", values);
  check_shapes(A, B);
  CsrMatrix<V> C;
  C.rows = A.rows;
  C.cols = B.cols;
  if (A.nnz() == 0 || B.nnz() == 0) {
    C.row_ptr.assign(size_t(A.rows + 1), 0);
    return C;
  }
  AccumulatorPool<V> pool(B.cols, values);
  C.row_ptr = count_rows(A, B, pool, threads);
  const int64_t nnz = C.row_ptr.back();
  C.col_idx.resize(size_t(nnz));
  if (values) C.values.resize(size_t(nnz));
  if (nnz > 0) fill_rows(A, B, C, values, pool, threads);
  return C;
}

}  // namespace

template <typename V>
CsrMatrix<V> cpu_spgemm_symbolic(const CsrMatrix<V>& A, const CsrMatrix<V>& B, int threads) {
  return spgemm(A, B, false, threads);
}

template <typename V>
CsrMatrix<V> cpu_spgemm(const CsrMatrix<V>& A, const CsrMatrix<V>& B, int threads) {
  return spgemm(A, B, true, threads);
}

template <typename V>
void cpu_spgemm_numeric(const CsrMatrix<V>& A, const CsrMatrix<V>& B, CsrMatrix<V>& C, int threads) {
  check_csr(A, "A", true);
  check_csr(B, "B", true);
  check_shapes(A, B);
  require(C.rows == A.rows && C.cols == B.cols, SPARSETC_STATUS_INVALID_STATE, "C is ", C.rows, "x", C.cols,
          " but A*B is ", A.rows, "x", B.cols, ": C is not the symbolic product of these matrices");
  require(int64_t(C.row_ptr.size()) == C.rows + 1 && C.row_ptr.front() == 0 && C.row_ptr.back() == C.nnz(),
          SPARSETC_STATUS_INVALID_STATE, "C's row offsets (", C.row_ptr.size(), " of them, last ",
          C.row_ptr.empty() ? -1 : C.row_ptr.back(), ") do not match its ", C.nnz(),
          " column indices: C is not a symbolic product");
  C.values.resize(size_t(C.nnz()));
  if (A.rows == 0) return;
  const int64_t width = B.cols;
  const int64_t *a_ptr = A.row_ptr.data(), *a_col = A.col_idx.data();
  const int64_t *b_ptr = B.row_ptr.data(), *b_col = B.col_idx.data();
  const V* a_val = A.values.data();
  const V* b_val = B.values.data();
  const int64_t* c_ptr = C.row_ptr.data();
  const int64_t* c_col = C.col_idx.data();
  V* c_val = C.values.data();
  AccumulatorPool<V> pool(width, true);
  // C's pattern is checked to be exactly the symbolic result: each row strictly increasing, and
  // its columns the set that the products reach. Stamps: -(i + 2) = in row i's pattern and not
  // reached yet, i = reached (sum started at 0); anything else = outside the pattern.
  rows_with_accumulators(A.rows, threads, pool, [&](int64_t begin, int64_t end, Accumulator<V>& acc) {
    int64_t* stamp = acc.stamp.data();
    V* sum = acc.value.data();
    for (int64_t i = begin; i < end; ++i) {
      const int64_t c0 = c_ptr[i], c1 = c_ptr[i + 1];
      if (c1 < c0)
        fail(SPARSETC_STATUS_INVALID_STATE, "C's row offsets decrease at row ", i, ": C is not a symbolic product");
      const int64_t pending = -(i + 2);
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t j = c_col[c];
        if (j < 0 || j >= width || (c > c0 && j <= c_col[c - 1]))
          fail(SPARSETC_STATUS_INVALID_STATE, "C's column ", j, " in row ", i,
               " is out of range or order: C is not a symbolic product");
        stamp[j] = pending;
      }
      int64_t reached = 0;
      for (int64_t p = a_ptr[i]; p < a_ptr[i + 1]; ++p) {
        const int64_t k = a_col[p];
        const V a = a_val[p];
        for (int64_t q = b_ptr[k]; q < b_ptr[k + 1]; ++q) {
          const int64_t j = b_col[q];
          if (stamp[j] != i) {
            if (stamp[j] != pending)
              fail(SPARSETC_STATUS_INVALID_STATE, "A*B has an entry at (", i, ", ", j,
                   ") that C's pattern lacks: C is not the symbolic product of these matrices");
            stamp[j] = i;
            sum[j] = V(0);
            ++reached;
          }
          sum[j] += a * b_val[q];
        }
      }
      if (reached != c1 - c0)
        fail(SPARSETC_STATUS_INVALID_STATE, "C's row ", i, " has ", c1 - c0, " entries but A*B has ", reached,
             ": C is not the symbolic product of these matrices");
      for (int64_t c = c0; c < c1; ++c) c_val[c] = sum[c_col[c]];
    }
  });
}

template <typename V>
int64_t cpu_count_products(const CsrMatrix<V>& A, const CsrMatrix<V>& B, int threads) {
  check_csr(A, "A", false);
  check_csr(B, "B", false);
  check_shapes(A, B);
  std::atomic<int64_t> total{0};
  const int64_t *a_col = A.col_idx.data(), *b_ptr = B.row_ptr.data();
  const int64_t chunk = std::max<int64_t>(4096, A.nnz() / (int64_t(resolve_threads(threads)) * 16));
  parallel_chunks(A.nnz(), threads, chunk, [&](int64_t begin, int64_t end) {
    int64_t part = 0;
    for (int64_t p = begin; p < end; ++p) part += b_ptr[a_col[p] + 1] - b_ptr[a_col[p]];
    total.fetch_add(part, std::memory_order_relaxed);
  });
  return total.load();
}

template CsrMatrix<float> cpu_spgemm_symbolic<float>(const CsrMatrix<float>&, const CsrMatrix<float>&, int);
template CsrMatrix<double> cpu_spgemm_symbolic<double>(const CsrMatrix<double>&, const CsrMatrix<double>&, int);
template void cpu_spgemm_numeric<float>(const CsrMatrix<float>&, const CsrMatrix<float>&, CsrMatrix<float>&, int);
template void cpu_spgemm_numeric<double>(const CsrMatrix<double>&, const CsrMatrix<double>&, CsrMatrix<double>&,
                                         int);
template CsrMatrix<float> cpu_spgemm<float>(const CsrMatrix<float>&, const CsrMatrix<float>&, int);
template CsrMatrix<double> cpu_spgemm<double>(const CsrMatrix<double>&, const CsrMatrix<double>&, int);
template int64_t cpu_count_products<float>(const CsrMatrix<float>&, const CsrMatrix<float>&, int);
template int64_t cpu_count_products<double>(const CsrMatrix<double>&, const CsrMatrix<double>&, int);

}  // namespace sparsetc::detail

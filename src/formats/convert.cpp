// Conversions between the canonical host formats (COO, CSR, CSC, dense) and between value types.
#include "formats/convert.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "formats/values.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kRowChunk = 1024;           // rows per parallel chunk

template <typename Body>
void parallel_for(int64_t n, int64_t chunk, Body body) {
  parallel_chunks(n, 0, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

void exclusive_scan_in_place(std::vector<int64_t>& v) {  // v[0] = 0 on return, v[i+1] += v[i]
  for (size_t i = 1; i < v.size(); ++i) v[i] += v[i - 1];
}

// Checks the invariants of a compressed matrix that a conversion relies on (cheap, O(outer)).
template <typename V>
void check_compressed(int64_t outer, int64_t inner, const std::vector<int64_t>& ptr, const std::vector<int64_t>& idx,
                      const std::vector<V>& values, const char* what) {
  require(outer >= 0 && inner >= 0, SPARSETC_STATUS_INVALID_VALUE, "malformed ", what, ": negative dimension");
  require(int64_t(ptr.size()) == outer + 1, SPARSETC_STATUS_INVALID_VALUE, "malformed ", what, ": ", ptr.size(),
          " offsets for ", outer, " rows or columns");
  require(idx.size() == values.size(), SPARSETC_STATUS_INVALID_VALUE, "malformed ", what, ": ", idx.size(),
          " indices but ", values.size(), " values");
  require(ptr.front() == 0 && ptr.back() == int64_t(idx.size()), SPARSETC_STATUS_INVALID_VALUE, "malformed ", what,
          ": offsets span [", ptr.front(), ", ", ptr.back(), ") but there are ", idx.size(), " entries");
}

// Transposes a compressed matrix (outer x inner) by a counting sort on the inner index: O(nnz +
// outer + inner). Scanning outer in order leaves the new inner lists sorted.
template <typename V>
void transpose_compressed(int64_t outer, int64_t inner, const std::vector<int64_t>& ptr,
                          const std::vector<int64_t>& idx, const std::vector<V>& values, std::vector<int64_t>& out_ptr,
                          std::vector<int64_t>& out_idx, std::vector<V>& out_values) {
  const int64_t nnz = int64_t(idx.size());
  out_ptr.assign(size_t(inner + 1), 0);
  for (int64_t k = 0; k < nnz; ++k) ++out_ptr[size_t(idx[size_t(k)] + 1)];
  exclusive_scan_in_place(out_ptr);
  out_idx.resize(size_t(nnz));
  out_values.resize(size_t(nnz));
  std::vector<int64_t> next(out_ptr.begin(), out_ptr.end() - 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = ptr[size_t(o)]; k < ptr[size_t(o + 1)]; ++k) {
      const int64_t pos = next[size_t(idx[size_t(k)])]++;
      out_idx[size_t(pos)] = o;
      out_values[size_t(pos)] = values[size_t(k)];
    }
}

}  // namespace

template <typename V>
CsrMatrix<V> coo_to_csr(const CooMatrix<V>& coo, sparsetc_duplicates_t duplicates) {
  require(duplicates == SPARSETC_DUPLICATES_ERROR || duplicates == SPARSETC_DUPLICATES_SUM,
          SPARSETC_STATUS_INVALID_VALUE, "unknown duplicates policy ", duplicates);
  require(coo.rows >= 0 && coo.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative COO dimension ", coo.rows, "x",
          coo.cols);
  require(coo.col_idx.size() == coo.row_idx.size() && coo.values.size() == coo.row_idx.size(),
          SPARSETC_STATUS_INVALID_VALUE, "malformed COO: ", coo.row_idx.size(), " row indices, ", coo.col_idx.size(),
          " column indices, ", coo.values.size(), " values");
  const int64_t nnz = coo.nnz(), rows = coo.rows, cols = coo.cols;
  const int64_t* ri = coo.row_idx.data();
  const int64_t* ci = coo.col_idx.data();
  const int64_t bad = first_where(nnz, [&](int64_t k) { return ri[k] < 0 || ri[k] >= rows || ci[k] < 0 || ci[k] >= cols; });
  if (bad >= 0) {
    if (ri[bad] < 0 || ri[bad] >= rows)
      fail(SPARSETC_STATUS_INVALID_INDEX, "row index ", ri[bad], " out of range [0, ", rows, ") at entry ", bad);
    fail(SPARSETC_STATUS_INVALID_INDEX, "column index ", ci[bad], " out of range [0, ", cols, ") at entry ", bad,
         " (row ", ri[bad], ")");
  }

  // Stable counting sort by row: (column, entry) pairs, entries increasing within a row.
  std::vector<int64_t> start(size_t(rows + 1), 0);
  for (int64_t k = 0; k < nnz; ++k) ++start[size_t(ri[k] + 1)];
  exclusive_scan_in_place(start);
  std::vector<std::pair<int64_t, int64_t>> order(static_cast<size_t>(nnz));
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t k = 0; k < nnz; ++k) order[size_t(next[size_t(ri[k])]++)] = {ci[k], k};
  }

  // Per row: sort by (column, entry) and count distinct columns; with ERROR, find the duplicate
  // whose second occurrence comes first in the input.
  std::vector<int64_t> unique(size_t(rows + 1), 0);
  const int64_t row_chunks = (rows + kRowChunk - 1) / kRowChunk;
  std::vector<int64_t> first_dup(size_t(row_chunks), std::numeric_limits<int64_t>::max());
  parallel_chunks(rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    int64_t& dup = first_dup[size_t(begin / kRowChunk)];
    for (int64_t i = begin; i < end; ++i) {
      auto first = order.begin() + start[size_t(i)], last = order.begin() + start[size_t(i + 1)];
      if (!std::is_sorted(first, last)) std::sort(first, last);
      int64_t count = 0;
      for (auto it = first; it != last; ++it) {
        if (it != first && it->first == (it - 1)->first) {
          dup = std::min(dup, it->second);  // a repeat of an earlier entry
        } else {
          ++count;
        }
      }
      unique[size_t(i + 1)] = count;
    }
  });
  if (duplicates == SPARSETC_DUPLICATES_ERROR) {
    int64_t k = std::numeric_limits<int64_t>::max();
    for (int64_t d : first_dup) k = std::min(k, d);
    if (k != std::numeric_limits<int64_t>::max()) {
      // Name the earlier twin too.
      int64_t twin = 0;
      for (int64_t j = 0; j < k; ++j)
        if (ri[j] == ri[k] && ci[j] == ci[k]) {
          twin = j;
          break;
        }
      fail(SPARSETC_STATUS_DUPLICATE_ENTRY, "duplicate entry (row ", ri[k], ", column ", ci[k], ") at entries ", twin,
           " and ", k);
    }
  }

  CsrMatrix<V> csr;
  csr.rows = rows;
  csr.cols = cols;
  exclusive_scan_in_place(unique);
  csr.row_ptr = std::move(unique);
  const int64_t out_nnz = csr.row_ptr.back();
  csr.col_idx.resize(size_t(out_nnz));
  csr.values.resize(size_t(out_nnz));
  parallel_chunks(rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t out = csr.row_ptr[size_t(i)] - 1;
      for (int64_t p = start[size_t(i)]; p < start[size_t(i + 1)]; ++p) {
        const auto& [col, k] = order[size_t(p)];
        if (p > start[size_t(i)] && col == order[size_t(p - 1)].first) {
          csr.values[size_t(out)] += coo.values[size_t(k)];  // input order: reproducible sums
        } else {
          ++out;
          csr.col_idx[size_t(out)] = col;
          csr.values[size_t(out)] = coo.values[size_t(k)];
        }
      }
    }
  });
  return csr;
}

template <typename V>
CooMatrix<V> csr_to_coo(const CsrMatrix<V>& csr) {
  check_compressed(csr.rows, csr.cols, csr.row_ptr, csr.col_idx, csr.values, "CSR");
  CooMatrix<V> coo;
  coo.rows = csr.rows;
  coo.cols = csr.cols;
  coo.row_idx.resize(csr.col_idx.size());
  coo.col_idx = csr.col_idx;
  coo.values = csr.values;
  parallel_chunks(csr.rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      std::fill(coo.row_idx.begin() + csr.row_ptr[size_t(i)], coo.row_idx.begin() + csr.row_ptr[size_t(i + 1)], i);
  });
  return coo;
}

template <typename V>
CscMatrix<V> csr_to_csc(const CsrMatrix<V>& csr) {
  check_compressed(csr.rows, csr.cols, csr.row_ptr, csr.col_idx, csr.values, "CSR");
  CscMatrix<V> csc;
  csc.rows = csr.rows;
  csc.cols = csr.cols;
  transpose_compressed(csr.rows, csr.cols, csr.row_ptr, csr.col_idx, csr.values, csc.col_ptr, csc.row_idx,
                       csc.values);
  return csc;
}

template <typename V>
CsrMatrix<V> csc_to_csr(const CscMatrix<V>& csc) {
  check_compressed(csc.cols, csc.rows, csc.col_ptr, csc.row_idx, csc.values, "CSC");
  CsrMatrix<V> csr;
  csr.rows = csc.rows;
  csr.cols = csc.cols;
  transpose_compressed(csc.cols, csc.rows, csc.col_ptr, csc.row_idx, csc.values, csr.row_ptr, csr.col_idx,
                       csr.values);
  return csr;
}

template <typename V>
CsrMatrix<V> transpose(const CsrMatrix<V>& csr) {
  check_compressed(csr.rows, csr.cols, csr.row_ptr, csr.col_idx, csr.values, "CSR");
  CsrMatrix<V> t;
  t.rows = csr.cols;
  t.cols = csr.rows;
  transpose_compressed(csr.rows, csr.cols, csr.row_ptr, csr.col_idx, csr.values, t.row_ptr, t.col_idx, t.values);
  return t;
}

template <typename V>
DenseMatrix<V> csr_to_dense(const CsrMatrix<V>& csr, sparsetc_order_t order) {
  require(is_valid_order(order), SPARSETC_STATUS_INVALID_VALUE, "unknown dense order ", order);
  check_compressed(csr.rows, csr.cols, csr.row_ptr, csr.col_idx, csr.values, "CSR");
  require(csr.cols == 0 || csr.rows <= std::numeric_limits<int64_t>::max() / int64_t(sizeof(V)) / csr.cols,
          SPARSETC_STATUS_SIZE_OVERFLOW, "a dense ", csr.rows, "x", csr.cols, " matrix does not fit in memory");
  DenseMatrix<V> dense;
  dense.rows = csr.rows;
  dense.cols = csr.cols;
  dense.order = order;
  dense.data.assign(size_t(csr.rows * csr.cols), V(0));
  const DenseView<V> view = dense.view();
  parallel_chunks(csr.rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t k = csr.row_ptr[size_t(i)]; k < csr.row_ptr[size_t(i + 1)]; ++k)
        view.at(i, csr.col_idx[size_t(k)]) = csr.values[size_t(k)];
  });
  return dense;
}

template <typename V>
CsrMatrix<V> dense_to_csr(const DenseView<const V>& dense) {
  require(dense.rows >= 0 && dense.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative dense dimension ", dense.rows,
          "x", dense.cols);
  require(is_valid_order(dense.order), SPARSETC_STATUS_INVALID_VALUE, "unknown dense order ", dense.order);
  const bool empty = dense.rows == 0 || dense.cols == 0;
  const int64_t min_ld = dense.order == SPARSETC_ORDER_ROW ? dense.cols : dense.rows;
  require(empty || dense.ld >= min_ld, SPARSETC_STATUS_INVALID_VALUE, "leading dimension ", dense.ld,
          " is smaller than ", min_ld);
  require(empty || dense.data != nullptr, SPARSETC_STATUS_NULL_POINTER, "dense data is NULL for a ", dense.rows, "x",
          dense.cols, " matrix");
  CsrMatrix<V> csr;
  csr.rows = dense.rows;
  csr.cols = dense.cols;
  csr.row_ptr.assign(size_t(dense.rows + 1), 0);
  if (empty) return csr;
  parallel_chunks(dense.rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t count = 0;
      for (int64_t j = 0; j < dense.cols; ++j) count += dense.at(i, j) != V(0);
      csr.row_ptr[size_t(i + 1)] = count;
    }
  });
  exclusive_scan_in_place(csr.row_ptr);
  csr.col_idx.resize(size_t(csr.row_ptr.back()));
  csr.values.resize(size_t(csr.row_ptr.back()));
  parallel_chunks(dense.rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t out = csr.row_ptr[size_t(i)];
      for (int64_t j = 0; j < dense.cols; ++j) {
        const V v = dense.at(i, j);
        if (v != V(0)) {
          csr.col_idx[size_t(out)] = j;
          csr.values[size_t(out)] = v;
          ++out;
        }
      }
    }
  });
  return csr;
}

template <typename To, typename From>
CsrMatrix<To> cast_values(const CsrMatrix<From>& csr) {
  CsrMatrix<To> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  out.row_ptr = csr.row_ptr;
  out.col_idx = csr.col_idx;
  if constexpr (std::is_same_v<To, From>) {
    out.values = csr.values;
  } else {
    out.values.resize(csr.values.size());
    // double -> float reports finite values beyond the float range (VALUE_OUT_OF_RANGE) instead
    // of turning them into Inf; float -> double is exact.
    store_values(csr.values.data(), int64_t(csr.values.size()),
                 std::is_same_v<To, float> ? SPARSETC_VALUE_F32 : SPARSETC_VALUE_F64, out.values.data());
  }
  return out;
}

#define SPARSETC_INSTANTIATE(V)                                                              \
  template CsrMatrix<V> coo_to_csr<V>(const CooMatrix<V>&, sparsetc_duplicates_t);           \
  template CooMatrix<V> csr_to_coo<V>(const CsrMatrix<V>&);                                  \
  template CscMatrix<V> csr_to_csc<V>(const CsrMatrix<V>&);                                  \
  template CsrMatrix<V> csc_to_csr<V>(const CscMatrix<V>&);                                  \
  template CsrMatrix<V> transpose<V>(const CsrMatrix<V>&);                                   \
  template DenseMatrix<V> csr_to_dense<V>(const CsrMatrix<V>&, sparsetc_order_t);            \
  template CsrMatrix<V> dense_to_csr<V>(const DenseView<const V>&);
SPARSETC_INSTANTIATE(float)
SPARSETC_INSTANTIATE(double)
#undef SPARSETC_INSTANTIATE

template CsrMatrix<float> cast_values<float, float>(const CsrMatrix<float>&);
template CsrMatrix<double> cast_values<double, float>(const CsrMatrix<float>&);
template CsrMatrix<float> cast_values<float, double>(const CsrMatrix<double>&);
template CsrMatrix<double> cast_values<double, double>(const CsrMatrix<double>&);

}  // namespace sparsetc::detail

#include "reorder/permutation.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/parallel.hpp"

namespace sparsetc::detail::reorder {

void check_permutation(const int64_t* permutation, int64_t rows) {
  std::vector<int64_t> first(static_cast<size_t>(rows), -1);  // where each row was named first
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t r = permutation[i];
    require(r >= 0 && r < rows, SPARSETC_STATUS_INVALID_VALUE, "permutation[", i, "] = ", r,
            " is outside [0, ", rows, ")");
    require(first[size_t(r)] < 0, SPARSETC_STATUS_INVALID_VALUE, "permutation[", i, "] = ", r,
            " repeats permutation[", first[size_t(r)], "]: not a permutation");
    first[size_t(r)] = i;
  }
}

bool is_identity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != int64_t(i)) return false;
  return true;
}

std::vector<int64_t> compose(const std::vector<int64_t>& outer, const std::vector<int64_t>& inner) {
  if (outer.empty()) return inner;
  std::vector<int64_t> out(inner.size());
  for (size_t i = 0; i < inner.size(); ++i) out[i] = outer[size_t(inner[i])];
  return out;
}

template <typename V>
CsrMatrix<V> gather_rows(const CsrMatrix<V>& a, const std::vector<int64_t>& permutation, int threads) {
  require(int64_t(permutation.size()) == a.rows, SPARSETC_STATUS_INTERNAL_ERROR, "permutation of ",
          permutation.size(), " entries for ", a.rows, " rows");
  CsrMatrix<V> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.row_ptr.assign(size_t(a.rows + 1), 0);
  for (int64_t i = 0; i < a.rows; ++i) {
    const int64_t r = permutation[size_t(i)];
    out.row_ptr[size_t(i + 1)] = out.row_ptr[size_t(i)] + a.row_ptr[size_t(r + 1)] - a.row_ptr[size_t(r)];
  }
  out.col_idx.resize(a.col_idx.size());
  out.values.resize(a.values.size());
  parallel_chunks(a.rows, threads, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t r = permutation[size_t(i)], from = a.row_ptr[size_t(r)], n = a.row_ptr[size_t(r + 1)] - from;
      std::copy_n(a.col_idx.begin() + from, n, out.col_idx.begin() + out.row_ptr[size_t(i)]);
      std::copy_n(a.values.begin() + from, n, out.values.begin() + out.row_ptr[size_t(i)]);
    }
  });
  return out;
}

template <typename V>
CsrMatrix<V> restore_row_order(const CsrMatrix<V>& stored, const std::vector<int64_t>& permutation, int threads) {
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) inverse[size_t(permutation[i])] = int64_t(i);
  return gather_rows(stored, inverse, threads);
}

template CsrMatrix<float> gather_rows<float>(const CsrMatrix<float>&, const std::vector<int64_t>&, int);
template CsrMatrix<double> gather_rows<double>(const CsrMatrix<double>&, const std::vector<int64_t>&, int);
template CsrMatrix<float> restore_row_order<float>(const CsrMatrix<float>&, const std::vector<int64_t>&, int);
template CsrMatrix<double> restore_row_order<double>(const CsrMatrix<double>&, const std::vector<int64_t>&, int);

}  // namespace sparsetc::detail::reorder

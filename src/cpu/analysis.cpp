// Structure statistics of a CSR matrix (sparsetc_analyze). Partial results are kept per block of
// a fixed number of rows and combined in block order, so the floating-point fields are the same
// for any thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/cpu_kernels.hpp"

namespace sparsetc::detail {
namespace {

struct Partial {
  int64_t empty_rows = 0;
  int64_t min_length = std::numeric_limits<int64_t>::max();
  int64_t max_length = 0;
  double squared_deviation = 0;  // sum of (length - mean)^2
  int64_t bandwidth = 0;
};

constexpr int64_t kBlockRows = 4096;  // fixed: the summation order of the deviations depends on it

}  // namespace

template <typename V>
Analysis cpu_analyze(const CsrMatrix<V>& A, const CsrMatrix<V>* B, int threads) {
  require(A.rows >= 0 && A.cols >= 0 && int64_t(A.row_ptr.size()) == A.rows + 1 && A.row_ptr.back() == A.nnz(),
          SPARSETC_STATUS_INVALID_VALUE, "A's CSR arrays are inconsistent (", A.rows, "x", A.cols, ", ",
          A.row_ptr.size(), " row offsets, ", A.col_idx.size(), " indices)");
  Analysis r;
  r.rows = A.rows;
  r.cols = A.cols;
  r.nnz = A.nnz();
  r.density = A.rows > 0 && A.cols > 0 ? double(r.nnz) / (double(A.rows) * double(A.cols)) : 0.0;
  if (B != nullptr) r.products = cpu_count_products(A, *B, threads);
  if (A.rows == 0) return r;

  const double mean = double(r.nnz) / double(A.rows);
  const int64_t blocks = (A.rows + kBlockRows - 1) / kBlockRows;
  std::vector<Partial> partials(static_cast<size_t>(blocks));
  const int64_t* ptr = A.row_ptr.data();
  const int64_t* col = A.col_idx.data();
  // parallel_chunks hands out multiples of kBlockRows (or everything at once with one thread):
  // each body walks its range block by block.
  parallel_chunks(A.rows, threads, kBlockRows, [&](int64_t begin, int64_t end) {
    for (int64_t b0 = begin; b0 < end; b0 += kBlockRows) {
      Partial& part = partials[size_t(b0 / kBlockRows)];
      const int64_t b1 = std::min(end, b0 + kBlockRows);
      for (int64_t i = b0; i < b1; ++i) {
        const int64_t length = ptr[i + 1] - ptr[i];
        part.empty_rows += length == 0;
        part.min_length = std::min(part.min_length, length);
        part.max_length = std::max(part.max_length, length);
        const double deviation = double(length) - mean;
        part.squared_deviation += deviation * deviation;
        if (length > 0) {
          // Columns are sorted: the extremes of the row are its first and last entries.
          const int64_t far = std::max(std::abs(i - col[ptr[i]]), std::abs(col[ptr[i + 1] - 1] - i));
          part.bandwidth = std::max(part.bandwidth, far);
        }
      }
    }
  });
  Partial total;
  for (const Partial& part : partials) {
    total.empty_rows += part.empty_rows;
    total.min_length = std::min(total.min_length, part.min_length);
    total.max_length = std::max(total.max_length, part.max_length);
    total.squared_deviation += part.squared_deviation;
    total.bandwidth = std::max(total.bandwidth, part.bandwidth);
  }
  r.empty_rows = total.empty_rows;
  r.row_length_min = total.min_length;
  r.row_length_max = total.max_length;
  r.row_length_mean = mean;
  r.row_length_std = std::sqrt(total.squared_deviation / double(A.rows));
  r.bandwidth = total.bandwidth;
  return r;
}

template Analysis cpu_analyze<float>(const CsrMatrix<float>&, const CsrMatrix<float>*, int);
template Analysis cpu_analyze<double>(const CsrMatrix<double>&, const CsrMatrix<double>*, int);

}  // namespace sparsetc::detail

// Row permutation (gather) of a CSR matrix: row i of the result is row permutation[i] of the input.
// Offsets by one prefix sum, rows copied in parallel: the result never depends on the thread count.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "formats/tiled.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kRowChunk = 1024;

}  // namespace

template <typename V>
CsrMatrix<V> permute_rows(const CsrMatrix<V>& csr, const std::vector<int64_t>& permutation) {
  constexpr const char* op = "permute_rows";
  tiled_internal::check_csr_arrays(csr.rows, csr.cols, csr.row_ptr, csr.col_idx.size(), csr.values.size(), op);
  const int64_t rows = csr.rows;
  const int64_t* perm = permutation.data();
  require(int64_t(permutation.size()) == rows, SPARSETC_STATUS_INVALID_VALUE, op, ": the permutation has ",
          permutation.size(), " entries for ", rows, " rows (wrong length)");
  const int64_t outside = first_where(rows, [&](int64_t i) { return perm[i] < 0 || perm[i] >= rows; });
  require(outside < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": permutation[", outside, "] = ",
          outside < 0 ? 0 : perm[outside], " is out of range [0, ", rows, ")");
  {
    std::vector<int64_t> seen(size_t(rows), -1);  // the position where each row was first named
    for (int64_t i = 0; i < rows; ++i) {
      int64_t& first = seen[size_t(perm[i])];
      require(first < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": permutation[", i, "] = ", perm[i],
              " is repeated (also permutation[", first, "])");
      first = i;
    }
  }
  CsrMatrix<V> out;
  out.rows = rows;
  out.cols = csr.cols;
  out.row_ptr.assign(size_t(rows + 1), 0);
  const int64_t* rp = csr.row_ptr.data();
  for (int64_t i = 0; i < rows; ++i) out.row_ptr[size_t(i + 1)] = out.row_ptr[size_t(i)] + rp[perm[i] + 1] - rp[perm[i]];
  out.col_idx.resize(csr.col_idx.size());
  out.values.resize(csr.values.size());
  parallel_chunks(rows, 0, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t from = rp[perm[i]], n = rp[perm[i] + 1] - from, to = out.row_ptr[size_t(i)];
      std::copy_n(csr.col_idx.begin() + from, n, out.col_idx.begin() + to);
      std::copy_n(csr.values.begin() + from, n, out.values.begin() + to);
    }
  });
  return out;
}

template CsrMatrix<float> permute_rows<float>(const CsrMatrix<float>&, const std::vector<int64_t>&);
template CsrMatrix<double> permute_rows<double>(const CsrMatrix<double>&, const std::vector<int64_t>&);

}  // namespace sparsetc::detail

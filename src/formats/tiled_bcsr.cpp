// Host (reference) conversion CSR -> BCSR and back to dense, and the helpers shared by the tiled
// conversions. Two passes over block rows (count the blocks, then fill them at prefix-summed
// offsets), so the arrays never depend on the thread count.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "formats/tiled.hpp"

namespace sparsetc::detail {

namespace tiled_internal {

int64_t distinct_column_blocks(const int64_t* row_ptr, const int64_t* col_idx, int64_t row_begin, int64_t row_end,
                               int64_t width, int32_t* out) {
  struct Cursor {
    int64_t k, end, block;  // next entry, end of the row, column block of the next entry
  };
  thread_local std::vector<Cursor> active;
  active.clear();
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t k = row_ptr[r], end = row_ptr[r + 1];
    if (k < end) active.push_back({k, end, col_idx[k] / width});
  }
  int64_t count = 0;
  while (!active.empty()) {
    int64_t block = active.front().block;
    for (const Cursor& c : active) block = std::min(block, c.block);
    if (out) out[count] = int32_t(block);
    ++count;
    // Consume the entries of `block` (columns base .. base + width - 1; written without forming
    // base + width, which could overflow for a huge width) and drop the finished rows.
    const int64_t base = block * width;
    size_t kept = 0;
    for (size_t a = 0; a < active.size(); ++a) {
      Cursor c = active[a];
      if (c.block == block) {
        while (c.k < c.end && col_idx[c.k] - base < width) ++c.k;
        if (c.k == c.end) continue;
        c.block = col_idx[c.k] / width;
      }
      active[kept++] = c;
    }
    active.resize(kept);
  }
  return count;
}

void check_csr_arrays(int64_t rows, int64_t cols, const std::vector<int64_t>& row_ptr, size_t col_count,
                      size_t value_count, const char* operation) {
  require(rows >= 0 && cols >= 0, SPARSETC_STATUS_INVALID_VALUE, operation, ": negative CSR dimension ", rows, "x",
          cols);
  require(int64_t(row_ptr.size()) == rows + 1, SPARSETC_STATUS_INVALID_VALUE, operation, ": malformed CSR: ",
          row_ptr.size(), " row offsets for ", rows, " rows");
  require(col_count == value_count, SPARSETC_STATUS_INVALID_VALUE, operation, ": malformed CSR: ", col_count,
          " column indices but ", value_count, " values");
  require(row_ptr.front() == 0 && row_ptr.back() == int64_t(col_count), SPARSETC_STATUS_INVALID_VALUE, operation,
          ": malformed CSR: row offsets span [", row_ptr.front(), ", ", row_ptr.back(), ") but there are ", col_count,
          " entries");
}

void require_int32_indices(int64_t count, const char* what, const char* operation) {
  require(count - 1 <= int64_t(std::numeric_limits<int32_t>::max()), SPARSETC_STATUS_SIZE_OVERFLOW, operation, ": ",
          count, " ", what, " do not fit 32-bit indices");
}

}  // namespace tiled_internal

namespace {

constexpr int64_t kRowsPerChunk = 2048;  // matrix rows per parallel chunk (of block rows)

}  // namespace

template <typename V>
BcsrMatrix<V> csr_to_bcsr(const CsrMatrix<V>& csr, int block_height, int block_width) {
  using namespace tiled_internal;
  constexpr const char* op = "csr_to_bcsr";
  check_csr_arrays(csr.rows, csr.cols, csr.row_ptr, csr.col_idx.size(), csr.values.size(), op);
  require(block_height >= 1 && block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": block shape ", block_height,
          "x", block_width, " (both sides must be at least 1)");
  BcsrMatrix<V> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  out.block_height = block_height;
  out.block_width = block_width;
  const int64_t h = block_height, w = block_width, area = h * w;
  const int64_t block_rows = out.block_rows();
  require_int32_indices(out.block_cols(), "block columns", op);

  const int64_t* rp = csr.row_ptr.data();
  const int64_t* ci = csr.col_idx.data();
  const int64_t chunk = std::max<int64_t>(1, kRowsPerChunk / h);
  std::vector<int64_t>& ptr = out.block_row_ptr;
  ptr.assign(size_t(block_rows + 1), 0);
  parallel_chunks(block_rows, 0, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I)
      ptr[size_t(I + 1)] = distinct_column_blocks(rp, ci, I * h, std::min(csr.rows, I * h + h), w, nullptr);
  });
  for (int64_t I = 0; I < block_rows; ++I) ptr[size_t(I + 1)] += ptr[size_t(I)];
  const int64_t blocks = ptr.back();
  require(blocks <= std::numeric_limits<int64_t>::max() / area, SPARSETC_STATUS_SIZE_OVERFLOW, op, ": ", blocks,
          " blocks of ", h, "x", w, " values do not fit in memory");
  out.block_col.resize(size_t(blocks));
  out.values.assign(size_t(blocks * area), V(0));

  int32_t* bc = out.block_col.data();
  V* val = out.values.data();
  parallel_chunks(block_rows, 0, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I) {
      const int64_t first = ptr[size_t(I)], r0 = I * h, r1 = std::min(csr.rows, r0 + h);
      distinct_column_blocks(rp, ci, r0, r1, w, bc + first);
      for (int64_t r = r0; r < r1; ++r) {
        int64_t b = first;  // the row's entries and the block row's blocks are both increasing
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
          const int64_t c = ci[k], cb = c / w;
          while (bc[b] < cb) ++b;
          val[b * area + (r - r0) * w + (c - cb * w)] = csr.values[size_t(k)];
        }
      }
    }
  });
  return out;
}

template <typename V>
DenseMatrix<V> bcsr_to_dense(const BcsrMatrix<V>& bcsr) {
  constexpr const char* op = "bcsr_to_dense";
  require(bcsr.rows >= 0 && bcsr.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, op, ": negative dimension ", bcsr.rows,
          "x", bcsr.cols);
  require(bcsr.block_height >= 1 && bcsr.block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": block shape ",
          bcsr.block_height, "x", bcsr.block_width);
  const int64_t h = bcsr.block_height, w = bcsr.block_width, area = h * w;
  const int64_t block_rows = bcsr.block_rows(), block_cols = bcsr.block_cols(), blocks = bcsr.blocks();
  const std::vector<int64_t>& ptr = bcsr.block_row_ptr;
  require(int64_t(ptr.size()) == block_rows + 1 && ptr.front() == 0 && ptr.back() == blocks,
          SPARSETC_STATUS_INVALID_VALUE, op, ": block_row_ptr has ", ptr.size(), " entries from ", ptr.front(), " to ",
          ptr.back(), " for ", block_rows, " block rows and ", blocks, " blocks");
  require(blocks <= std::numeric_limits<int64_t>::max() / area && int64_t(bcsr.values.size()) == blocks * area,
          SPARSETC_STATUS_INVALID_VALUE, op, ": ", bcsr.values.size(), " values for ", blocks, " blocks of ", h, "x",
          w);
  const int64_t bad_row = first_where(block_rows, [&](int64_t I) { return ptr[size_t(I + 1)] < ptr[size_t(I)]; });
  require(bad_row < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": block_row_ptr decreases at block row ", bad_row);
  const int64_t bad = first_where(blocks, [&](int64_t b) {
    const int32_t c = bcsr.block_col[size_t(b)];
    if (c < 0 || c >= block_cols) return true;
    // Increasing within a block row: the previous block is in the same block row unless b starts one.
    const auto next = std::upper_bound(ptr.begin(), ptr.end(), b);
    return *(next - 1) != b && bcsr.block_col[size_t(b - 1)] >= c;
  });
  require(bad < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": block ", bad,
          " has a column outside [0, block columns) or not increasing in its block row");
  require(bcsr.cols == 0 || bcsr.rows <= std::numeric_limits<int64_t>::max() / int64_t(sizeof(V)) / bcsr.cols,
          SPARSETC_STATUS_SIZE_OVERFLOW, "a dense ", bcsr.rows, "x", bcsr.cols, " matrix does not fit in memory");

  DenseMatrix<V> dense;
  dense.rows = bcsr.rows;
  dense.cols = bcsr.cols;
  dense.order = SPARSETC_ORDER_ROW;
  dense.data.assign(size_t(bcsr.rows * bcsr.cols), V(0));
  V* out = dense.data.data();
  parallel_chunks(block_rows, 0, std::max<int64_t>(1, kRowsPerChunk / h), [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I)
      for (int64_t b = ptr[size_t(I)]; b < ptr[size_t(I + 1)]; ++b) {
        const int64_t c0 = int64_t(bcsr.block_col[size_t(b)]) * w;
        const int64_t height = std::min(h, bcsr.rows - I * h), width = std::min(w, bcsr.cols - c0);
        for (int64_t i = 0; i < height; ++i)
          for (int64_t j = 0; j < width; ++j)
            out[(I * h + i) * bcsr.cols + c0 + j] = bcsr.values[size_t(b * area + i * w + j)];
      }
  });
  return dense;
}

#define SPARSETC_INSTANTIATE(V)                                                \
  template BcsrMatrix<V> csr_to_bcsr<V>(const CsrMatrix<V>&, int, int);        \
  template DenseMatrix<V> bcsr_to_dense<V>(const BcsrMatrix<V>&);
SPARSETC_INSTANTIATE(float)
SPARSETC_INSTANTIATE(double)
#undef SPARSETC_INSTANTIATE

}  // namespace sparsetc::detail

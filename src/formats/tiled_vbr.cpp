// Host (reference) conversion CSR -> VBR (row groups x fixed-width column blocks, dense
// column-major blocks) and back to dense. Two passes over groups (count the blocks, then fill them
// at prefix-summed offsets), so the arrays never depend on the thread count.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "formats/tiled.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

inline int64_t ceil_div(int64_t n, int64_t d) { return n == 0 ? 0 : (n - 1) / d + 1; }

// Throws INVALID_VALUE unless group_ptr is a partition of [0, rows) into non-empty groups of
// consecutive rows.
void check_groups(const std::vector<int64_t>& group_ptr, int64_t rows, const char* op) {
  require(!group_ptr.empty(), SPARSETC_STATUS_INVALID_VALUE, op,
          ": group_ptr is empty (a partition of the rows needs at least the entry 0)");
  require(group_ptr.front() == 0, SPARSETC_STATUS_INVALID_VALUE, op, ": group_ptr starts at ", group_ptr.front(),
          " instead of 0");
  require(group_ptr.back() == rows, SPARSETC_STATUS_INVALID_VALUE, op, ": group_ptr ends at ", group_ptr.back(),
          " instead of the number of rows ", rows);
  const int64_t groups = int64_t(group_ptr.size()) - 1;
  const int64_t bad = first_where(groups, [&](int64_t g) { return group_ptr[size_t(g + 1)] <= group_ptr[size_t(g)]; });
  require(bad < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": group_ptr is not strictly increasing: group ", bad,
          " is [", bad < 0 ? 0 : group_ptr[size_t(bad)], ", ", bad < 0 ? 0 : group_ptr[size_t(bad + 1)], ")");
}

}  // namespace

template <typename V>
VbrMatrix<V> csr_to_vbr(const CsrMatrix<V>& csr, const std::vector<int64_t>& group_ptr, int64_t block_width) {
  using namespace tiled_internal;
  constexpr const char* op = "csr_to_vbr";
  check_csr_arrays(csr.rows, csr.cols, csr.row_ptr, csr.col_idx.size(), csr.values.size(), op);
  require(block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": block width ", block_width,
          " (must be at least 1)");
  check_groups(group_ptr, csr.rows, op);
  const int64_t bw = block_width, groups = int64_t(group_ptr.size()) - 1;
  require_int32_indices(ceil_div(csr.cols, bw), "column blocks", op);
  VbrMatrix<V> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  out.block_width = bw;
  out.group_ptr = group_ptr;

  const int64_t* rp = csr.row_ptr.data();
  const int64_t* ci = csr.col_idx.data();
  const int64_t* gp = group_ptr.data();
  // Chunks of about the same number of groups; a group's cost is its rows and entries.
  const int64_t chunk = std::max<int64_t>(1, int64_t(1024) * groups / std::max<int64_t>(csr.rows, 1));
  std::vector<int64_t>& bp = out.block_ptr;
  bp.assign(size_t(groups + 1), 0);
  parallel_chunks(groups, 0, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) bp[size_t(g + 1)] = distinct_column_blocks(rp, ci, gp[g], gp[g + 1], bw, nullptr);
  });
  // Values per group: blocks * height * block_width, checked against int64 overflow.
  std::vector<int64_t> group_values(size_t(groups + 1), 0);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t n = bp[size_t(g + 1)], height = gp[g + 1] - gp[g];
    const bool fits = n == 0 || (bw <= kInt64Max / height && n <= kInt64Max / (height * bw) &&
                                 n * height * bw <= kInt64Max - group_values[size_t(g)]);
    require(fits, SPARSETC_STATUS_SIZE_OVERFLOW, op, ": the blocks of ", height, "x", bw,
            " values do not fit in memory");
    group_values[size_t(g + 1)] = group_values[size_t(g)] + n * height * bw;
    bp[size_t(g + 1)] += bp[size_t(g)];
  }
  const int64_t blocks = bp.back();
  out.block_col.resize(size_t(blocks));
  out.value_offset.resize(size_t(blocks + 1));
  out.value_offset[size_t(blocks)] = group_values.back();
  out.values.assign(size_t(group_values.back()), V(0));

  int32_t* bc = out.block_col.data();
  int64_t* vo = out.value_offset.data();
  V* val = out.values.data();
  parallel_chunks(groups, 0, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = bp[size_t(g)], last = bp[size_t(g + 1)], r0 = gp[g], r1 = gp[g + 1], height = r1 - r0;
      distinct_column_blocks(rp, ci, r0, r1, bw, bc + first);
      for (int64_t b = first; b < last; ++b) vo[b] = group_values[size_t(g)] + (b - first) * height * bw;
      for (int64_t r = r0; r < r1; ++r) {
        int64_t b = first;  // the row's entries and the group's blocks are both increasing
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
          const int64_t c = ci[k], cb = c / bw;
          while (bc[b] < cb) ++b;
          val[vo[b] + (r - r0) + (c - cb * bw) * height] = csr.values[size_t(k)];
        }
      }
    }
  });
  return out;
}

template <typename V>
DenseMatrix<V> vbr_to_dense(const VbrMatrix<V>& vbr) {
  constexpr const char* op = "vbr_to_dense";
  require(vbr.rows >= 0 && vbr.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, op, ": negative dimension ", vbr.rows, "x",
          vbr.cols);
  require(vbr.block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": block width ", vbr.block_width);
  check_groups(vbr.group_ptr, vbr.rows, op);
  const int64_t bw = vbr.block_width, groups = vbr.groups(), blocks = int64_t(vbr.block_col.size());
  const int64_t block_cols = ceil_div(vbr.cols, bw);
  const std::vector<int64_t>& gp = vbr.group_ptr;
  const std::vector<int64_t>& bp = vbr.block_ptr;
  const std::vector<int64_t>& vo = vbr.value_offset;
  require(int64_t(bp.size()) == groups + 1 && bp.front() == 0 && bp.back() == blocks, SPARSETC_STATUS_INVALID_VALUE,
          op, ": block_ptr has ", bp.size(), " entries from ", bp.front(), " to ", bp.back(), " for ", groups,
          " groups and ", blocks, " blocks");
  require(int64_t(vo.size()) == blocks + 1 && vo.front() == 0 && vo.back() == int64_t(vbr.values.size()),
          SPARSETC_STATUS_INVALID_VALUE, op, ": value_offset has ", vo.size(), " entries from ", vo.front(), " to ",
          vo.back(), " for ", blocks, " blocks and ", vbr.values.size(), " values");
  const int64_t bad_group = first_where(groups, [&](int64_t g) { return bp[size_t(g + 1)] < bp[size_t(g)]; });
  require(bad_group < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": block_ptr decreases at group ", bad_group);
  const int64_t bad = first_where(groups, [&](int64_t g) {
    const int64_t height = gp[size_t(g + 1)] - gp[size_t(g)];
    for (int64_t b = bp[size_t(g)]; b < bp[size_t(g + 1)]; ++b) {
      const int64_t c = vbr.block_col[size_t(b)];
      if (c < 0 || c >= block_cols || (b > bp[size_t(g)] && vbr.block_col[size_t(b - 1)] >= c)) return true;
      if (bw > kInt64Max / height || vo[size_t(b + 1)] - vo[size_t(b)] != height * bw) return true;
    }
    return false;
  });
  require(bad < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": group ", bad,
          " has a block column outside [0, column blocks), not increasing, or a block of the wrong size");
  require(vbr.cols == 0 || vbr.rows <= kInt64Max / int64_t(sizeof(V)) / vbr.cols, SPARSETC_STATUS_SIZE_OVERFLOW,
          "a dense ", vbr.rows, "x", vbr.cols, " matrix does not fit in memory");

  DenseMatrix<V> dense;
  dense.rows = vbr.rows;
  dense.cols = vbr.cols;
  dense.order = SPARSETC_ORDER_ROW;
  dense.data.assign(size_t(vbr.rows * vbr.cols), V(0));
  V* out = dense.data.data();
  const int64_t chunk = std::max<int64_t>(1, int64_t(1024) * groups / std::max<int64_t>(vbr.rows, 1));
  parallel_chunks(groups, 0, chunk, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const int64_t r0 = gp[size_t(g)], height = gp[size_t(g + 1)] - r0;
      for (int64_t b = bp[size_t(g)]; b < bp[size_t(g + 1)]; ++b) {
        const int64_t c0 = int64_t(vbr.block_col[size_t(b)]) * bw, width = std::min(bw, vbr.cols - c0);
        for (int64_t j = 0; j < width; ++j)
          for (int64_t i = 0; i < height; ++i)
            out[(r0 + i) * vbr.cols + c0 + j] = vbr.values[size_t(vo[size_t(b)] + i + j * height)];
      }
    }
  });
  return dense;
}

#define SPARSETC_INSTANTIATE(V)                                                                        \
  template VbrMatrix<V> csr_to_vbr<V>(const CsrMatrix<V>&, const std::vector<int64_t>&, int64_t);      \
  template DenseMatrix<V> vbr_to_dense<V>(const VbrMatrix<V>&);
SPARSETC_INSTANTIATE(float)
SPARSETC_INSTANTIATE(double)
#undef SPARSETC_INSTANTIATE

}  // namespace sparsetc::detail

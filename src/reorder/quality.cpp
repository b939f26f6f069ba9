// Quality of a blocking: BCSR blocks of fixed h x w over the stored row order (what the
// tensor-core kernel pays, and how evenly block rows are loaded), and the paper's VBR measures
// over the groups (Δ'_H and ρ', Sec. 4.3.1). Parallel over block rows and groups.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "reorder/reorder.hpp"

namespace sparsetc::detail::reorder {
namespace {

// For each row range [ptr[g], ptr[g+1]) of stored rows: the distinct column blocks and the sum of
// their widths (edge blocks narrower).
void count_blocks(const Pattern& a, const int64_t* permutation, const std::vector<int64_t>& ptr, int64_t w, int threads,
                  std::vector<int64_t>& blocks, std::vector<int64_t>& widths) {
  const int64_t ranges = int64_t(ptr.size()) - 1;
  const int64_t block_cols = a.cols == 0 ? 0 : (a.cols - 1) / w + 1;
  blocks.assign(size_t(ranges), 0);
  widths.assign(size_t(ranges), 0);
  const int t = std::max(1, std::min<int>(resolve_threads(threads), int(ranges / 64) + 1));
#pragma omp parallel num_threads(t)
  {
    std::vector<int64_t> seen(size_t(block_cols), -1);
#pragma omp for schedule(dynamic, 64)
    for (int64_t g = 0; g < ranges; ++g) {
      int64_t n = 0, width = 0;
      for (int64_t i = ptr[size_t(g)]; i < ptr[size_t(g + 1)]; ++i) {
        const int64_t r = permutation ? permutation[i] : i;
        for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
          const int64_t b = a.col_idx[k] / w;
          if (seen[size_t(b)] == g) continue;
          seen[size_t(b)] = g;
          ++n;
          width += std::min(w, a.cols - b * w);
        }
      }
      blocks[size_t(g)] = n;
      widths[size_t(g)] = width;
    }
  }
}

std::vector<int64_t> chunks(int64_t rows, int64_t h) {
  std::vector<int64_t> ptr;
  for (int64_t r = 0; r < rows; r += h) ptr.push_back(r);
  ptr.push_back(rows);
  return ptr;
}

}  // namespace

Blocking identity(int64_t rows, int64_t block_height) {
  require(block_height >= 1, SPARSETC_STATUS_INVALID_VALUE, "block_height must be >= 1, got ", block_height);
  Blocking b;
  b.permutation.resize(size_t(rows));
  for (int64_t i = 0; i < rows; ++i) b.permutation[size_t(i)] = i;
  b.group_ptr = chunks(rows, block_height);
  return b;
}

Quality measure(const Pattern& a, const int64_t* permutation, const std::vector<int64_t>& group_ptr,
                int64_t block_height, int64_t block_width, int threads) {
  require(block_height >= 1 && block_width >= 1, SPARSETC_STATUS_INVALID_VALUE,
          "block height and width must be >= 1, got ", block_height, "x", block_width);
  require(group_ptr.empty() || (group_ptr.front() == 0 && group_ptr.back() == a.rows), SPARSETC_STATUS_INVALID_VALUE,
          "groups do not cover the rows");
  Quality q;
  q.block_height = block_height;
  q.block_width = block_width;
  const int64_t nnz = a.row_ptr[a.rows];
  std::vector<int64_t> blocks, widths;

  const std::vector<int64_t> block_rows = chunks(a.rows, block_height);
  count_blocks(a, permutation, block_rows, block_width, threads, blocks, widths);
  q.block_rows = int64_t(blocks.size());
  for (int64_t n : blocks) q.blocks += n, q.blocks_per_block_row_max = std::max(q.blocks_per_block_row_max, n);
  if (q.block_rows > 0) {
    q.blocks_per_block_row_mean = double(q.blocks) / double(q.block_rows);
    double sum = 0;
    for (int64_t n : blocks) sum += (double(n) - q.blocks_per_block_row_mean) * (double(n) - q.blocks_per_block_row_mean);
    q.blocks_per_block_row_std = std::sqrt(sum / double(q.block_rows));
  }
  q.in_block_density = q.blocks ? double(nnz) / (double(q.blocks) * double(block_height) * double(block_width)) : 0.0;

  const std::vector<int64_t>& groups = group_ptr.empty() ? block_rows : group_ptr;
  if (!group_ptr.empty()) count_blocks(a, permutation, groups, block_width, threads, blocks, widths);
  q.groups = int64_t(groups.size()) - 1;
  q.mean_group_height = q.groups ? double(a.rows) / double(q.groups) : 0.0;
  double area = 0, height_sum = 0;
  for (int64_t g = 0; g < q.groups; ++g) {
    const double h = double(groups[size_t(g + 1)] - groups[size_t(g)]);
    q.vbr_blocks += blocks[size_t(g)];
    area += h * double(widths[size_t(g)]);
    height_sum += h * double(blocks[size_t(g)]);
  }
  q.vbr_in_block_density = area > 0 ? double(nnz) / area : 0.0;
  q.vbr_mean_block_height = q.vbr_blocks ? height_sum / double(q.vbr_blocks) : 0.0;
  return q;
}

double reachable_fill_bound(const Pattern& a, int64_t block_width) {
  require(block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, "block width must be >= 1, got ", block_width);
  int64_t pairs = 0;
  for (int64_t i = 0; i < a.rows; ++i) {
    int64_t last = -1;
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const int64_t block_col = a.col_idx[k] / block_width;
      pairs += block_col != last;
      last = block_col;
    }
  }
  const int64_t nnz = a.rows > 0 ? a.row_ptr[a.rows] : 0;
  return pairs > 0 ? double(nnz) / (double(pairs) * double(block_width)) : 0.0;
}

}  // namespace sparsetc::detail::reorder

#include "engine/spmm_row_order.hpp"

#include <chrono>

#include "core/error.hpp"
#include "gpu/device_memory.hpp"
#include "reorder/locality.hpp"

namespace sparsetc::detail {

SpmmRowOrder choose_spmm_row_order(int64_t rows, int64_t cols, int64_t nnz, int64_t n, const int64_t* d_row_ptr,
                                   const int32_t* d_col_idx, const GpuContext& context) {
  SpmmRowOrder choice;
  const bool square = rows == cols;
  const int64_t window = square ? kRowOrderWindow : kRowOrderSweepWindow;
  if (rows < 2 * window || nnz == 0) return choice;
  if (n < kRowOrderMinColumns) {
    choice.note = str("rows in A's order (N ", n, " < ", kRowOrderMinColumns, ")");
    return choice;
  }
  if (nnz > kRowOrderMaxEntries) {
    choice.note = str("rows in A's order (", nnz, " entries: past the row-order search's ", kRowOrderMaxEntries, ")");
    return choice;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<int64_t> row_ptr(size_t(rows) + 1);
  std::vector<int32_t> columns(static_cast<size_t>(nnz));
  copy_device_to_host(row_ptr.data(), d_row_ptr, row_ptr.size() * sizeof(int64_t), context.stream);
  copy_device_to_host(columns.data(), d_col_idx, columns.size() * sizeof(int32_t), context.stream);
  const std::vector<int64_t> col_idx(columns.begin(), columns.end());  // reorder::Pattern's width
  const reorder::Pattern a{rows, cols, row_ptr.data(), col_idx.data()};
  const double natural = reorder::window_column_reuse(a, {}, window);
  if (square && natural >= kRowOrderPoorReuse) {
    choice.note = str("rows in A's order (window column reuse ", natural, ")");
    return choice;
  }
  std::vector<int64_t> order = square ? reorder::reverse_cuthill_mckee(a) : reorder::rows_by_first_column(a);
  const char* name = square ? "reverse Cuthill-McKee" : "first-column";
  const double reordered = reorder::window_column_reuse(a, order, window);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (reordered >= natural + kRowOrderMinGain) {
    choice.order = std::move(order);
    choice.note = str("rows visited in ", name, " order (column reuse over windows of ", window, " rows ", natural,
                      " -> ", reordered, ", found in ", ms, " ms)");
  } else {
    choice.note = str("rows in A's order (column reuse over windows of ", window, " rows ", natural, ", ", name,
                      " order ", reordered, ")");
  }
  return choice;
}

}  // namespace sparsetc::detail

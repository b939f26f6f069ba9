// The order in which the CSR kernel visits A's rows (SPARSETC_SPMM_ALG_CSR, and AUTO where it picks
// it). Rows are written in place, so an order changes neither C's layout nor its bits; it only
// changes which rows of B neighbouring rows find in L1. Measured on the H200 (docs/performance.md,
// "Row orders for locality"): reverse Cuthill-McKee made ca-AstroPh 9-15% faster in f32 and R-MAT-like
// neighbourhoods 7-13%, where the matrix's own order was poor, and memplus 25% slower, where it was
// good; the window column reuse of the two orders tells those apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {

struct SpmmRowOrder {
  std::vector<int64_t> order;  // row i visited i-th is row order[i]; empty: A's own order
  std::string note;            // what was decided and why (the plan's reason)
};

// The narrowest B an order is sought for (at N = 8 the orders measured 4% slower, at N = 32 even,
// from N = 128 on 5-6% faster where chosen), the rows of a window (about what one CTA of the CSR
// kernel has in flight), the reuse below which A's own order counts as poor, the gain an order must
// bring, and the largest A the host search takes. A rectangular A's rows are measured over windows
// of kRowOrderSweepWindow: its gain is B's rows kept in L2 by the rows in flight across the device
// (on the H200, rows by first column made lp_nug20 1.31x faster at N = 512 in f32, its reuse
// over 256 rows 0.05 -> 0.49, and lp_ken_18, lp_pds_10 and pds-50 5-16% slower, whose reuse over
// 256 rows the order lowers; over 16 rows the order raised lp_ken_18's).
inline constexpr int64_t kRowOrderMinColumns = 64;
inline constexpr int64_t kRowOrderWindow = 16;
inline constexpr int64_t kRowOrderSweepWindow = 256;
inline constexpr double kRowOrderPoorReuse = 0.35;
inline constexpr double kRowOrderMinGain = 0.2;
inline constexpr int64_t kRowOrderMaxEntries = int64_t(1) << 23;

// For A in device CSR (int64 offsets, int32 columns) times n columns of B: if A is square, reverse
// Cuthill-McKee when A's own order reuses little of B within a window and the new order reuses at
// least kRowOrderMinGain more; if not, rows by first column when they reuse at least
// kRowOrderMinGain more over windows of kRowOrderSweepWindow rows. Reads the pattern back to the
// host (a synchronisation point, at plan creation only).
SpmmRowOrder choose_spmm_row_order(int64_t rows, int64_t cols, int64_t nnz, int64_t n, const int64_t* d_row_ptr,
                                   const int32_t* d_col_idx, const GpuContext& context);

}  // namespace sparsetc::detail

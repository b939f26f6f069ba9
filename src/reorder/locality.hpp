// Row orders for locality: the order in which a C-stationary SpMM visits the rows of A decides how
// many of the rows of B that neighbouring rows read are still in the SM's L1 or in L2 (the rows are
// written in place, so the order changes neither the result's layout nor its bits). Reverse
// Cuthill-McKee puts the rows of a graph's neighbourhoods next to each other; for a rectangular A,
// rows by first column; the window column reuse measures what an order achieves, so the caller
// keeps it only where it beats the matrix's own order.
#pragma once

#include <cstdint>
#include <vector>

#include "reorder/reorder.hpp"

namespace sparsetc::detail::reorder {

// Reverse Cuthill-McKee of the pattern of A + A^T (A square, columns in [0, rows)): each connected
// component from a pseudo-peripheral row of least degree, neighbours by increasing degree, the
// whole order reversed. Row i of the order is original row order[i].
std::vector<int64_t> reverse_cuthill_mckee(const Pattern& a);

// A's rows by their first (smallest) column, rows with the same first column and the empty rows
// (last) in A's order. For a rectangular A, whose rows and columns are not the same vertices: rows
// that start together read nearby rows of B, so a sweep over B in this order keeps what L2 holds.
std::vector<int64_t> rows_by_first_column(const Pattern& a);

// 1 - (distinct columns) / (entries), summed over windows of `window` consecutive rows of the order
// (empty: the natural order): the share of a window's reads of B that repeat a row the window has
// read already. The distinct columns are measure()'s blocks of window x 1. 0 when A has no entries.
double window_column_reuse(const Pattern& a, const std::vector<int64_t>& order, int64_t window);

}  // namespace sparsetc::detail::reorder

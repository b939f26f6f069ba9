// Row permutations of reordered matrices: validation, composition, and the gathers that build a
// reordered matrix and restore the original row order for the CPU engine's multiplies.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/sparse.hpp"

namespace sparsetc::detail::reorder {

// Throws INVALID_VALUE naming the first entry outside [0, rows) or the first repeated one.
void check_permutation(const int64_t* permutation, int64_t rows);

bool is_identity(const std::vector<int64_t>& permutation);

// outer[inner[i]]: applying `inner` to a matrix already permuted by `outer` (stored row i of the
// result is original row outer[inner[i]]). An empty outer is the identity.
std::vector<int64_t> compose(const std::vector<int64_t>& outer, const std::vector<int64_t>& inner);

// Row i of the result is row permutation[i] of a.
template <typename V>
CsrMatrix<V> gather_rows(const CsrMatrix<V>& a, const std::vector<int64_t>& permutation, int threads = 0);

// The original order of a reordered matrix: row permutation[i] of the result is row i of stored.
template <typename V>
CsrMatrix<V> restore_row_order(const CsrMatrix<V>& stored, const std::vector<int64_t>& permutation, int threads = 0);

}  // namespace sparsetc::detail::reorder

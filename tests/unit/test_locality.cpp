// Row orders for locality (src/reorder/locality.cpp): reverse Cuthill-McKee is a permutation on
// every kind of square pattern (components, isolated rows, one-sided entries), undoes a scrambling
// of a path and of a band; rows by first column keep ties in order and undo a shuffled staircase;
// the window column reuse counts a window's repeated columns exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "formats/sparse.hpp"
#include "gen/generators.hpp"
#include "reorder/locality.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
namespace ro = sparsetc::detail::reorder;

// A pattern that owns its arrays; view() is what the functions take. cols 0: as many as rows.
struct Pattern {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> row_ptr{0};
  std::vector<int64_t> col_idx;
  ro::Pattern view() const { return {rows, cols, row_ptr.data(), col_idx.data()}; }
};

Pattern from_rows(const std::vector<std::set<int32_t>>& rows, int64_t cols = 0) {
  Pattern p;
  p.rows = int64_t(rows.size());
  p.cols = cols > 0 ? cols : p.rows;
  for (const auto& r : rows) {
    p.col_idx.insert(p.col_idx.end(), r.begin(), r.end());
    p.row_ptr.push_back(int64_t(p.col_idx.size()));
  }
  return p;
}

Pattern pattern_of(const sd::CsrMatrix<double>& m) {
  Pattern p;
  p.rows = m.rows;
  p.cols = m.cols;
  p.row_ptr = m.row_ptr;
  p.col_idx = m.col_idx;
  return p;
}

// P A P^T: row and column i of the result are row and column perm[i] of a.
Pattern symmetric_permutation(const Pattern& a, const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
  std::vector<std::set<int32_t>> rows(size_t(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) {
    const int64_t r = perm[size_t(i)];
    for (int64_t e = a.row_ptr[size_t(r)]; e < a.row_ptr[size_t(r) + 1]; ++e)
      rows[size_t(i)].insert(int32_t(inverse[size_t(a.col_idx[size_t(e)])]));
  }
  return from_rows(rows);
}

// max |i - j| over entries (i, j) of P A P^T for the order (row i of the order is row order[i]).
int64_t bandwidth_in(const Pattern& a, const std::vector<int64_t>& order) {
  std::vector<int64_t> position(order.size());
  for (size_t i = 0; i < order.size(); ++i) position[size_t(order[i])] = int64_t(i);
  int64_t width = 0;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t e = a.row_ptr[size_t(r)]; e < a.row_ptr[size_t(r) + 1]; ++e)
      width = std::max(width, std::abs(position[size_t(r)] - position[size_t(a.col_idx[size_t(e)])]));
  return width;
}

void expect_permutation(const std::vector<int64_t>& order, int64_t rows) {
  ASSERT_EQ(int64_t(order.size()), rows);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(sorted[size_t(i)], i) << "row " << i << " missing or repeated";
}

std::vector<int64_t> shuffled(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t(0));
  std::mt19937_64 rng(seed);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

TEST(Locality, ReverseCuthillMcKeeIsAPermutationOfEveryRow) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (int64_t n : {1, 2, 7, 64, 500}) {
    for (double density : {0.0, 0.002, 0.02, 0.3}) {
      // One-sided entries (A not symmetric), diagonal entries, isolated rows and several components.
      std::vector<std::set<int32_t>> rows(static_cast<size_t>(n));
      std::uniform_real_distribution<double> u(0, 1);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (u(rng) < density) rows[size_t(i)].insert(int32_t(j));
      const Pattern p = from_rows(rows);
      expect_permutation(ro::reverse_cuthill_mckee(p.view()), n);
    }
  }
}

TEST(Locality, ReverseCuthillMcKeeUndoesAScrambledPathAndBand) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  // A path (tridiagonal) relabelled at random: RCM walks it end to end, bandwidth 1 again.
  const int64_t n = 300;
  std::vector<std::set<int32_t>> path(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) path[size_t(i)].insert(int32_t(i - 1));
    path[size_t(i)].insert(int32_t(i));
    if (i + 1 < n) path[size_t(i)].insert(int32_t(i + 1));
  }
  const Pattern scrambled_path = symmetric_permutation(from_rows(path), shuffled(n, seed));
  const auto path_order =
      ro::reverse_cuthill_mckee(scrambled_path.view());
  expect_permutation(path_order, n);
  EXPECT_EQ(bandwidth_in(scrambled_path, path_order), 1) << "seed " << seed;

  // A band of half-width 5 relabelled: RCM brings the bandwidth back near 5 (from about n).
  const Pattern band = pattern_of(sd::generate_band(2000, 5, seed));
  const Pattern scrambled_band = symmetric_permutation(band, shuffled(band.rows, seed + 1));
  std::vector<int64_t> identity(size_t(band.rows));
  std::iota(identity.begin(), identity.end(), int64_t(0));
  ASSERT_GT(bandwidth_in(scrambled_band, identity), 1000);
  const auto band_order =
      ro::reverse_cuthill_mckee(scrambled_band.view());
  expect_permutation(band_order, band.rows);
  EXPECT_LE(bandwidth_in(scrambled_band, band_order), 2 * 5) << "seed " << seed;
}

TEST(Locality, WindowColumnReuseCountsRepeatedColumns) {
  // Windows of 2 rows: {0, 1} read columns 0, 1, 1, 2 (3 distinct of 4), {2, 3} read 5, 5 (1 of 2).
  const Pattern p = from_rows({{0, 1}, {1, 2}, {5}, {5}, {}}, 6);
  EXPECT_DOUBLE_EQ(ro::window_column_reuse(p.view(), {}, 2), 1.0 - 4.0 / 6.0);
  // Order 0, 2, 1, 3, 4: windows {0, 2} and {1, 3} repeat nothing.
  EXPECT_DOUBLE_EQ(ro::window_column_reuse(p.view(), {0, 2, 1, 3, 4}, 2), 0.0);
  // One window of everything: 4 distinct of 6; windows of 1 row: nothing repeats within a row.
  EXPECT_DOUBLE_EQ(ro::window_column_reuse(p.view(), {}, 8), 1.0 - 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(ro::window_column_reuse(p.view(), {}, 1), 0.0);
  const Pattern empty = from_rows({{}, {}}, 3);
  EXPECT_DOUBLE_EQ(ro::window_column_reuse(empty.view(), {}, 2), 0.0);
}

TEST(Locality, RowsByFirstColumnKeepTiesInOrderAndEmptyRowsLast) {
  // First columns 7, none, 2, 7, 0, none, 2 (of 9 columns: a rectangular pattern).
  const Pattern p = from_rows({{7, 8}, {}, {2, 5}, {7}, {0, 1, 8}, {}, {2}}, 9);
  EXPECT_EQ(ro::rows_by_first_column(p.view()), (std::vector<int64_t>{4, 2, 6, 0, 3, 1, 5}));
  EXPECT_TRUE(ro::rows_by_first_column(from_rows({}, 3).view()).empty());
  // A staircase whose rows were shuffled comes back in order, and reuses more of B over windows.
  const uint64_t seed = sparsetc_test::fresh_seed();
  std::mt19937_64 rng(seed);
  std::vector<int64_t> shuffled(512);
  std::iota(shuffled.begin(), shuffled.end(), int64_t(0));
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::vector<std::set<int32_t>> rows(shuffled.size());
  for (size_t i = 0; i < shuffled.size(); ++i)
    for (int32_t k = 0; k < 6; ++k) rows[i].insert(int32_t(4 * shuffled[i] + 2 * k));
  const Pattern staircase = from_rows(rows, 4 * 512 + 16);
  const std::vector<int64_t> order = ro::rows_by_first_column(staircase.view());
  for (size_t i = 0; i < order.size(); ++i) ASSERT_EQ(shuffled[size_t(order[i])], int64_t(i)) << "seed " << seed;
  EXPECT_GT(ro::window_column_reuse(staircase.view(), order, 64),
            ro::window_column_reuse(staircase.view(), {}, 64) + 0.3)
      << "seed " << seed;
}

TEST(Locality, RejectsWhatItCannotMeasure) {
  const Pattern p = from_rows({{0, 1}, {1}});
  try {
    ro::window_column_reuse(p.view(), {}, 0);
    ADD_FAILURE() << "a window of 0 rows was taken";
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE);
  }
  try {
    ro::window_column_reuse(p.view(), {0}, 2);
    ADD_FAILURE() << "an order of 1 row for 2 was taken";
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE);
  }
  const Pattern outside = from_rows({{0, 2}, {1}});  // column 2 of a 2-row matrix
  try {
    ro::reverse_cuthill_mckee(outside.view());
    ADD_FAILURE() << "a column outside a square matrix was taken";
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE);
  }
}

}  // namespace

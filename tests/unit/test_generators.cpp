// Matrix generators (src/gen): exact structure of the deterministic families, statistics of the
// random ones, the ground truth of the 1-SA scrambled block matrices, determinism (seeds, thread
// counts, pinned fingerprints) and every spec-parse error.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/error.hpp"
#include "gen/generators.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::CsrMatrix;
using sparsetc::detail::Error;
using sparsetc::detail::generate;
using sparsetc::detail::generate_band;
using sparsetc::detail::generate_poisson2d5;
using sparsetc::detail::generate_poisson3d27;
using sparsetc::detail::generate_poisson3d7;
using sparsetc::detail::generate_rmat;
using sparsetc::detail::generate_scrambled_blocks;
using sparsetc::detail::generate_uniform;
using sparsetc_test::fresh_seed;
using Matrix = CsrMatrix<double>;

std::string seed_text(uint64_t seed) { return "seed " + std::to_string(seed); }

// The CSR invariants every generator output must satisfy, plus the value range.
::testing::AssertionResult valid_csr(const Matrix& m) {
  auto bad = [](auto... parts) {
    auto r = ::testing::AssertionFailure();
    (r << ... << parts);
    return r;
  };
  if (m.rows < 0 || m.cols < 0) return bad("negative size ", m.rows, " x ", m.cols);
  if (m.row_ptr.size() != size_t(m.rows + 1)) return bad("row_ptr has ", m.row_ptr.size(), " entries");
  if (m.row_ptr[0] != 0) return bad("row_ptr[0] = ", m.row_ptr[0]);
  for (int64_t i = 0; i < m.rows; ++i)
    if (m.row_ptr[size_t(i + 1)] < m.row_ptr[size_t(i)]) return bad("row_ptr decreases at row ", i);
  if (m.row_ptr.back() != int64_t(m.col_idx.size())) return bad("row_ptr[rows] != col_idx.size()");
  if (m.values.size() != m.col_idx.size()) return bad("values.size() != col_idx.size()");
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t p = m.row_ptr[size_t(i)]; p < m.row_ptr[size_t(i + 1)]; ++p) {
      const int64_t j = m.col_idx[size_t(p)];
      if (j < 0 || j >= m.cols) return bad("column ", j, " out of range in row ", i);
      if (p > m.row_ptr[size_t(i)] && m.col_idx[size_t(p - 1)] >= j)
        return bad("columns not sorted and unique in row ", i);
      const double v = std::fabs(m.values[size_t(p)]);
      if (!(v >= 0.5 && v <= 1.5)) return bad("value ", m.values[size_t(p)], " out of range at (", i, ", ", j, ")");
    }
  return ::testing::AssertionSuccess();
}

// Values have both signs and spread over [0.5, 1.5] (checked when there are enough of them).
void expect_value_spread(const Matrix& m) {
  ASSERT_GE(m.nnz(), 200);
  int64_t negative = 0, low = 0, high = 0;
  for (const double v : m.values) {
    negative += v < 0;
    low += std::fabs(v) < 0.75;
    high += std::fabs(v) > 1.25;
  }
  const double n = double(m.nnz());
  EXPECT_GT(negative, 0.35 * n);
  EXPECT_LT(negative, 0.65 * n);
  EXPECT_GT(low, 0.15 * n);
  EXPECT_GT(high, 0.15 * n);
}

std::vector<int64_t> row_cols(const Matrix& m, int64_t i) {
  return {m.col_idx.begin() + m.row_ptr[size_t(i)], m.col_idx.begin() + m.row_ptr[size_t(i + 1)]};
}
int64_t row_len(const Matrix& m, int64_t i) { return m.row_ptr[size_t(i + 1)] - m.row_ptr[size_t(i)]; }

std::set<std::pair<int64_t, int64_t>> pattern(const Matrix& m) {
  std::set<std::pair<int64_t, int64_t>> s;
  for (int64_t i = 0; i < m.rows; ++i)
    for (const int64_t j : row_cols(m, i)) s.insert({i, j});
  return s;
}

bool pattern_symmetric(const Matrix& m) {
  const auto s = pattern(m);
  for (const auto& [i, j] : s)
    if (!s.count({j, i})) return false;
  return true;
}

bool bit_identical(const Matrix& a, const Matrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
         a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0;
}

// FNV-1a over sizes, structure and the bits of the values.
uint64_t fingerprint(const Matrix& m) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](uint64_t word) {
    for (int k = 0; k < 8; ++k) h = (h ^ ((word >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  };
  add(uint64_t(m.rows));
  add(uint64_t(m.cols));
  for (const int64_t p : m.row_ptr) add(uint64_t(p));
  for (const int64_t j : m.col_idx) add(uint64_t(j));
  for (const double v : m.values) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    add(bits);
  }
  return h;
}

// Histogram of row lengths.
std::map<int64_t, int64_t> length_histogram(const Matrix& m) {
  std::map<int64_t, int64_t> h;
  for (int64_t i = 0; i < m.rows; ++i) h[row_len(m, i)]++;
  return h;
}

// Expects `call` to throw Error(INVALID_VALUE) whose message contains every piece.
template <typename Call>
void expect_invalid(Call&& call, const std::vector<std::string>& pieces, const std::string& what) {
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE) << what << ": " << e.what();
    for (const auto& piece : pieces)
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos)
          << what << ": message \"" << e.what() << "\" lacks \"" << piece << "\"";
  }
}

// ---------------------------------------------------------------------------------------------
// band

TEST(GenBand, SmallCaseExactStructure) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const Matrix m = generate_band(7, 2, seed);
  ASSERT_TRUE(valid_csr(m));
  EXPECT_EQ(m.rows, 7);
  EXPECT_EQ(m.cols, 7);
  const std::vector<std::vector<int64_t>> want = {{0, 1, 2},       {0, 1, 2, 3}, {0, 1, 2, 3, 4}, {1, 2, 3, 4, 5},
                                                  {2, 3, 4, 5, 6}, {3, 4, 5, 6}, {4, 5, 6}};
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(row_cols(m, i), want[size_t(i)]) << "row " << i;
  EXPECT_TRUE(pattern_symmetric(m));
}

TEST(GenBand, NnzFormulaAndEdgeCases) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (const auto& [n, h] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 0}, {10, 0}, {10, 1}, {10, 3}, {10, 9}, {100, 7}, {1000, 31}, {513, 256}}) {
    const Matrix m = generate_band(n, h, seed);
    ASSERT_TRUE(valid_csr(m)) << n << ":" << h;
    EXPECT_EQ(m.nnz(), n * (2 * h + 1) - h * (h + 1)) << n << ":" << h;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(row_len(m, i), std::min(n - 1, i + h) - std::max<int64_t>(0, i - h) + 1) << n << ":" << h;
  }
  // A half width beyond the matrix is a full matrix.
  const Matrix full = generate_band(5, 10, seed);
  ASSERT_TRUE(valid_csr(full));
  EXPECT_EQ(full.nnz(), 25);
  // Empty.
  const Matrix empty = generate_band(0, 3, seed);
  ASSERT_TRUE(valid_csr(empty));
  EXPECT_EQ(empty.rows, 0);
  EXPECT_EQ(empty.nnz(), 0);
}

TEST(GenBand, ValuesInRangeWithBothSigns) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const Matrix m = generate_band(2000, 5, seed);
  ASSERT_TRUE(valid_csr(m));
  expect_value_spread(m);
}

// ---------------------------------------------------------------------------------------------
// Poisson stencils

// The stencil pattern by brute force over all pairs of grid points.
std::set<std::pair<int64_t, int64_t>> brute_stencil(int64_t g, int dims, bool box) {
  const int64_t n = dims == 2 ? g * g : g * g * g;
  std::set<std::pair<int64_t, int64_t>> s;
  auto coords = [&](int64_t i) { return std::vector<int64_t>{i % g, i / g % g, dims == 3 ? i / (g * g) : 0}; };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const auto a = coords(i), b = coords(j);
      int64_t sum = 0, mx = 0;
      for (int k = 0; k < 3; ++k) {
        sum += std::abs(a[size_t(k)] - b[size_t(k)]);
        mx = std::max(mx, std::abs(a[size_t(k)] - b[size_t(k)]));
      }
      if (box ? mx <= 1 : sum <= 1) s.insert({i, j});
    }
  return s;
}

TEST(GenPoisson, TwoD5PointStructure) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (int64_t g = 0; g <= 9; ++g) {
    const Matrix m = generate_poisson2d5(g, seed);
    ASSERT_TRUE(valid_csr(m)) << g;
    EXPECT_EQ(m.rows, g * g);
    EXPECT_EQ(m.nnz(), 5 * g * g - 4 * g) << g;
    if (g >= 2) {
      auto h = length_histogram(m);
      EXPECT_EQ(h[5], (g - 2) * (g - 2)) << g;  // interior
      EXPECT_EQ(h[4], 4 * (g - 2)) << g;        // edges
      EXPECT_EQ(h[3], 4) << g;                  // corners
    }
    EXPECT_TRUE(pattern_symmetric(m)) << g;
    if (g >= 1 && g <= 6) {
      EXPECT_EQ(pattern(m), brute_stencil(g, 2, false)) << g;
    }
  }
  const Matrix m = generate_poisson2d5(5, seed);
  EXPECT_EQ(row_cols(m, 12), (std::vector<int64_t>{7, 11, 12, 13, 17}));  // (2, 2): natural ordering
  EXPECT_EQ(row_cols(m, 0), (std::vector<int64_t>{0, 1, 5}));
  EXPECT_EQ(row_cols(m, 24), (std::vector<int64_t>{19, 23, 24}));
}

TEST(GenPoisson, ThreeD7PointStructure) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (int64_t g = 0; g <= 7; ++g) {
    const Matrix m = generate_poisson3d7(g, seed);
    ASSERT_TRUE(valid_csr(m)) << g;
    EXPECT_EQ(m.rows, g * g * g);
    EXPECT_EQ(m.nnz(), 7 * g * g * g - 6 * g * g) << g;
    if (g >= 2) {
      auto h = length_histogram(m);
      EXPECT_EQ(h[7], (g - 2) * (g - 2) * (g - 2)) << g;
      EXPECT_EQ(h[6], 6 * (g - 2) * (g - 2)) << g;
      EXPECT_EQ(h[5], 12 * (g - 2)) << g;
      EXPECT_EQ(h[4], 8) << g;
    }
    EXPECT_TRUE(pattern_symmetric(m)) << g;
    if (g >= 1 && g <= 4) {
      EXPECT_EQ(pattern(m), brute_stencil(g, 3, false)) << g;
    }
  }
  const Matrix m = generate_poisson3d7(4, seed);
  EXPECT_EQ(row_cols(m, 21), (std::vector<int64_t>{5, 17, 20, 21, 22, 25, 37}));  // (1, 1, 1)
}

TEST(GenPoisson, ThreeD27PointStructure) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (int64_t g = 0; g <= 7; ++g) {
    const Matrix m = generate_poisson3d27(g, seed);
    ASSERT_TRUE(valid_csr(m)) << g;
    EXPECT_EQ(m.rows, g * g * g);
    EXPECT_EQ(m.nnz(), g == 0 ? 0 : (3 * g - 2) * (3 * g - 2) * (3 * g - 2)) << g;
    if (g >= 2) {
      auto h = length_histogram(m);
      EXPECT_EQ(h[27], (g - 2) * (g - 2) * (g - 2)) << g;  // interior
      EXPECT_EQ(h[18], 6 * (g - 2) * (g - 2)) << g;        // faces
      EXPECT_EQ(h[12], 12 * (g - 2)) << g;                 // edges
      EXPECT_EQ(h[8], 8) << g;                             // corners
    }
    EXPECT_TRUE(pattern_symmetric(m)) << g;
    if (g >= 1 && g <= 4) {
      EXPECT_EQ(pattern(m), brute_stencil(g, 3, true)) << g;
    }
  }
}

TEST(GenPoisson, ValuesInRangeWithBothSigns) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (const Matrix& m : {generate_poisson2d5(20, seed), generate_poisson3d7(8, seed), generate_poisson3d27(6, seed)}) {
    ASSERT_TRUE(valid_csr(m));
    expect_value_spread(m);
  }
}

// ---------------------------------------------------------------------------------------------
// R-MAT

TEST(GenRmat, BoundedNnzAndSkewedDegrees) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const int scale = 14;
  const int64_t degree = 8, n = int64_t(1) << scale;
  const Matrix m = generate_rmat(scale, degree, 0.57, 0.19, 0.19, seed);
  ASSERT_TRUE(valid_csr(m));
  EXPECT_EQ(m.rows, n);
  EXPECT_EQ(m.cols, n);
  EXPECT_LE(m.nnz(), degree * n);
  EXPECT_GE(m.nnz(), degree * n / 2);  // merging removes some edges, not most of them
  const double mean = double(m.nnz()) / double(n);
  int64_t max_row = 0, empty_rows = 0;
  for (int64_t i = 0; i < n; ++i) {
    max_row = std::max(max_row, row_len(m, i));
    empty_rows += row_len(m, i) == 0;
  }
  EXPECT_GT(double(max_row), 20 * mean) << "max " << max_row << " mean " << mean;
  EXPECT_GT(empty_rows, n / 10);  // power-law: many rows receive no edge at all
  // Columns are skewed too, and the top-left quadrant (a) holds the most entries.
  std::vector<int64_t> col_count(size_t(n), 0);
  int64_t quadrant[2][2] = {{0, 0}, {0, 0}};
  for (int64_t i = 0; i < n; ++i)
    for (const int64_t j : row_cols(m, i)) {
      col_count[size_t(j)]++;
      quadrant[i >= n / 2][j >= n / 2]++;
    }
  EXPECT_GT(double(*std::max_element(col_count.begin(), col_count.end())), 20 * mean);
  EXPECT_GT(quadrant[0][0], quadrant[0][1]);
  EXPECT_GT(quadrant[0][0], quadrant[1][0]);
  EXPECT_GT(quadrant[0][1], quadrant[1][1]);
  EXPECT_GT(quadrant[1][0], quadrant[1][1]);
  expect_value_spread(m);
}

TEST(GenRmat, EqualQuadrantsAreNotSkewed) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const Matrix m = generate_rmat(12, 8, 0.25, 0.25, 0.25, seed);
  ASSERT_TRUE(valid_csr(m));
  int64_t max_row = 0;
  for (int64_t i = 0; i < m.rows; ++i) max_row = std::max(max_row, row_len(m, i));
  EXPECT_LT(max_row, 40);  // Poisson(8) rows: the skew above comes from a, b, c, d
  EXPECT_GT(m.nnz(), 8 * 4096 * 99 / 100);
}

TEST(GenRmat, DegenerateQuadrantsAndMerging) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const int64_t last = (int64_t(1) << 10) - 1;
  struct Case {
    double a, b, c;
    int64_t row, col;
  };
  for (const Case& k :
       {Case{1, 0, 0, 0, 0}, Case{0, 1, 0, 0, last}, Case{0, 0, 1, last, 0}, Case{0, 0, 0, last, last}}) {
    const Matrix m = generate_rmat(10, 4, k.a, k.b, k.c, seed);  // 4096 copies of one edge
    ASSERT_TRUE(valid_csr(m));
    ASSERT_EQ(m.nnz(), 1) << k.a << " " << k.b << " " << k.c;
    EXPECT_EQ(row_len(m, k.row), 1);
    EXPECT_EQ(m.col_idx[0], k.col);
  }
  // Scale 1: 400 edges reach all four entries (self loops included) and are merged to 4.
  const Matrix two = generate_rmat(1, 200, 0.57, 0.19, 0.19, seed);
  ASSERT_TRUE(valid_csr(two));
  EXPECT_EQ(two.nnz(), 4);
  // Scale 0 is a 1 x 1 matrix; degree 0 is empty.
  const Matrix one = generate_rmat(0, 3, 0.57, 0.19, 0.19, seed);
  ASSERT_TRUE(valid_csr(one));
  EXPECT_EQ(one.rows, 1);
  EXPECT_EQ(one.nnz(), 1);
  const Matrix none = generate_rmat(8, 0, 0.57, 0.19, 0.19, seed);
  ASSERT_TRUE(valid_csr(none));
  EXPECT_EQ(none.rows, 256);
  EXPECT_EQ(none.nnz(), 0);
}

// ---------------------------------------------------------------------------------------------
// uniform

TEST(GenUniform, ExactDistinctColumnsPerRow) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  // (rows, per_row, cols) covering every sampling path: few per row, dense bitmap, complement,
  // sparse hash set, full rows and empty rows.
  for (const auto& [rows, per_row, cols] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{300, 1, 1000},
                                                                                              {300, 16, 1000},
                                                                                              {50, 300, 1000},
                                                                                              {50, 900, 1000},
                                                                                              {20, 100, 1000000},
                                                                                              {10, 40, 40},
                                                                                              {10, 0, 5},
                                                                                              {3, 0, 0},
                                                                                              {0, 5, 10},
                                                                                              {200, 17, 17}}) {
    const Matrix m = generate_uniform(rows, cols, per_row, seed);
    ASSERT_TRUE(valid_csr(m)) << rows << ":" << per_row << ":" << cols;
    EXPECT_EQ(m.rows, rows);
    EXPECT_EQ(m.cols, cols);
    for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(row_len(m, i), per_row) << "row " << i;
  }
}

TEST(GenUniform, ColumnsAreUniform) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (const auto& [rows, per_row, cols] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {20000, 8, 64}, {4000, 40, 64}, {200, 1000, 1280}, {3000, 50, 100000}}) {
    const Matrix m = generate_uniform(rows, cols, per_row, seed);
    ASSERT_TRUE(valid_csr(m));
    // Column counts (bucketed into 64 ranges) within 6 standard deviations of the mean.
    std::vector<double> bucket(64, 0);
    for (const int64_t j : m.col_idx) bucket[size_t(j * 64 / cols)]++;
    const double expect = double(m.nnz()) / 64;
    for (size_t b = 0; b < 64; ++b)
      EXPECT_NEAR(bucket[b], expect, 6 * std::sqrt(expect)) << rows << ":" << per_row << ":" << cols << " bucket " << b;
    // Rows differ from each other.
    EXPECT_NE(row_cols(m, 0), row_cols(m, 1));
  }
  expect_value_spread(generate_uniform(100, 1000, 8, seed));
}

TEST(GenUniform, TooManyPerRowIsInvalid) {
  expect_invalid([] { generate_uniform(10, 5, 6, 1); }, {"per_row", "6", "5"}, "per_row > cols");
  expect_invalid([] { generate_uniform(-1, 5, 1, 1); }, {"rows", ">= 0"}, "negative rows");
  expect_invalid([] { generate_uniform(10, 5, -1, 1); }, {"per_row", ">= 0"}, "negative per_row");
}

// ---------------------------------------------------------------------------------------------
// scrambled blocks (1-SA paper)

// Entry counts per (group, block column) of a scrambled block matrix.
std::map<std::pair<int64_t, int64_t>, int64_t> block_counts(const Matrix& m, const std::vector<int64_t>& groups,
                                                            int64_t delta) {
  std::map<std::pair<int64_t, int64_t>, int64_t> counts;
  for (int64_t i = 0; i < m.rows; ++i)
    for (const int64_t j : row_cols(m, i)) counts[{groups[size_t(i)], j / delta}]++;
  return counts;
}

TEST(GenBlocks, GroundTruthBlockStructure) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const int64_t n = 512, delta = 32, nb = n / delta;
  const double theta = 0.2, rho = 0.3;
  std::vector<int64_t> groups;
  const Matrix m = generate_scrambled_blocks(n, delta, theta, rho, seed, &groups);
  ASSERT_TRUE(valid_csr(m));
  ASSERT_EQ(groups.size(), size_t(n));
  EXPECT_EQ(m.rows, n);
  EXPECT_EQ(m.cols, n);

  // Every group is one original block row: exactly delta rows each.
  std::vector<int64_t> group_size(size_t(nb), 0);
  for (const int64_t g : groups) {
    ASSERT_GE(g, 0);
    ASSERT_LT(g, nb);
    group_size[size_t(g)]++;
  }
  for (int64_t g = 0; g < nb; ++g) EXPECT_EQ(group_size[size_t(g)], delta) << "group " << g;

  // Rows of one group have their support inside the group's set of nonzero blocks, and every
  // nonzero block holds exactly round(rho * delta^2) entries: the original blocking is exact.
  const int64_t per_block = std::llround(rho * double(delta * delta));
  const auto counts = block_counts(m, groups, delta);
  for (const auto& [block, count] : counts)
    EXPECT_EQ(count, per_block) << "group " << block.first << " block column " << block.second;
  const int64_t nonzero_blocks = int64_t(counts.size());
  EXPECT_EQ(nonzero_blocks, std::llround(theta * double(nb * nb)));
  EXPECT_NEAR(double(nonzero_blocks) / double(nb * nb), theta, 1.0 / double(nb * nb));
  EXPECT_NEAR(double(m.nnz()) / double(nonzero_blocks * delta * delta), rho, 1.0 / double(delta * delta));
  std::set<std::set<int64_t>> supports;
  for (int64_t g = 0; g < nb; ++g) {
    std::set<int64_t> s;
    for (const auto& [block, count] : counts)
      if (block.first == g) s.insert(block.second);
    supports.insert(s);
  }
  EXPECT_GT(supports.size(), size_t(nb / 2)) << "block rows should have different nonzero blocks";
}

TEST(GenBlocks, FractionsMatchParametersStatistically) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  // The paper's figure setting, scaled down: n = 2048, delta = 64, theta = 0.1, rho = 0.05.
  const int64_t n = 2048, delta = 64, nb = n / delta;
  const double theta = 0.1, rho = 0.05;
  std::vector<int64_t> groups;
  const Matrix m = generate_scrambled_blocks(n, delta, theta, rho, seed, &groups);
  ASSERT_TRUE(valid_csr(m));
  const auto counts = block_counts(m, groups, delta);
  EXPECT_NEAR(double(counts.size()) / double(nb * nb), theta, 0.002);
  EXPECT_NEAR(double(m.nnz()) / (double(counts.size()) * double(delta * delta)), rho, 0.001);
  // As the paper notes, neither the nonzero blocks per block row nor the entries per row are fixed.
  std::vector<int64_t> per_group(size_t(nb), 0);
  for (const auto& [block, count] : counts) per_group[size_t(block.first)]++;
  EXPECT_NE(*std::min_element(per_group.begin(), per_group.end()),
            *std::max_element(per_group.begin(), per_group.end()));
  // Blocks are chosen uniformly: block columns are hit about equally often (theta * nb = 3.2 per
  // block column on average; the maximum of 32 such counts stays small).
  std::vector<int64_t> per_block_col(size_t(nb), 0);
  for (const auto& [block, count] : counts) per_block_col[size_t(block.second)]++;
  EXPECT_LE(*std::max_element(per_block_col.begin(), per_block_col.end()), 20);
  // Inside a nonzero block, each row holds about rho * delta entries (hypergeometric).
  std::map<std::pair<int64_t, int64_t>, int64_t> row_block;  // (row, block column) -> entries
  for (int64_t i = 0; i < n; ++i)
    for (const int64_t j : row_cols(m, i)) row_block[{i, j / delta}]++;
  int64_t sum = 0, rows_in_blocks = 0;
  rows_in_blocks = int64_t(counts.size()) * delta;
  for (const auto& [rb, count] : row_block) sum += count;
  EXPECT_NEAR(double(sum) / double(rows_in_blocks), rho * double(delta), 0.1);
  std::set<int64_t> lengths;
  for (int64_t i = 0; i < n; ++i) lengths.insert(row_len(m, i));
  EXPECT_GT(lengths.size(), size_t(5));
}

TEST(GenBlocks, ScramblingPermutesRows) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const int64_t n = 1024, delta = 64, nb = n / delta;
  std::vector<int64_t> groups;
  const Matrix m = generate_scrambled_blocks(n, delta, 0.3, 0.5, seed, &groups);
  ASSERT_TRUE(valid_csr(m));
  EXPECT_FALSE(std::is_sorted(groups.begin(), groups.end()));
  int64_t in_place = 0, same_as_previous = 0;
  for (int64_t p = 0; p < n; ++p) {
    in_place += groups[size_t(p)] == p / delta;
    if (p > 0) same_as_previous += groups[size_t(p)] == groups[size_t(p - 1)];
  }
  EXPECT_LT(in_place, 3 * n / nb);  // about n / nb by chance
  EXPECT_LT(same_as_previous, 3 * n / nb);
  // Another seed scrambles differently.
  std::vector<int64_t> other;
  generate_scrambled_blocks(n, delta, 0.3, 0.5, seed + 1, &other);
  EXPECT_NE(groups, other);
  // groups is optional and does not change the matrix.
  EXPECT_TRUE(bit_identical(m, generate_scrambled_blocks(n, delta, 0.3, 0.5, seed)));
}

TEST(GenBlocks, RaggedLastBlockAndExtremes) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  {
    // 100 = 3 * 32 + 4: the last block row and column are 4 wide.
    const int64_t n = 100, delta = 32;
    const double rho = 0.5;
    std::vector<int64_t> groups;
    const Matrix m = generate_scrambled_blocks(n, delta, 0.5, rho, seed, &groups);
    ASSERT_TRUE(valid_csr(m));
    std::map<int64_t, int64_t> group_size;
    for (const int64_t g : groups) group_size[g]++;
    EXPECT_EQ(group_size, (std::map<int64_t, int64_t>{{0, 32}, {1, 32}, {2, 32}, {3, 4}}));
    const auto counts = block_counts(m, groups, delta);
    EXPECT_EQ(counts.size(), size_t(8));  // round(0.5 * 16)
    auto extent = [&](int64_t b) { return std::min(delta, n - b * delta); };
    for (const auto& [block, count] : counts)
      EXPECT_EQ(count, std::llround(rho * double(extent(block.first) * extent(block.second))));
  }
  {
    // theta = rho = 1: the full matrix.
    const Matrix m = generate_scrambled_blocks(40, 8, 1.0, 1.0, seed);
    ASSERT_TRUE(valid_csr(m));
    EXPECT_EQ(m.nnz(), 1600);
  }
  {
    // rho * delta^2 < 0.5: a nonzero block still holds one entry; theta * blocks < 0.5: one block.
    std::vector<int64_t> groups;
    const Matrix m = generate_scrambled_blocks(64, 4, 0.5, 0.01, seed, &groups);
    ASSERT_TRUE(valid_csr(m));
    EXPECT_EQ(m.nnz(), 128);
    for (const auto& [block, count] : block_counts(m, groups, 4)) EXPECT_EQ(count, 1);
    const Matrix one = generate_scrambled_blocks(64, 8, 0.001, 0.5, seed);
    EXPECT_EQ(one.nnz(), 32);
  }
  {
    const Matrix empty = generate_scrambled_blocks(0, 8, 0.5, 0.5, seed);
    ASSERT_TRUE(valid_csr(empty));
    EXPECT_EQ(empty.rows, 0);
    // A block larger than the matrix is one block.
    const Matrix single = generate_scrambled_blocks(10, 64, 1.0, 0.5, seed);
    ASSERT_TRUE(valid_csr(single));
    EXPECT_EQ(single.nnz(), 50);
  }
}

TEST(GenBlocks, ValuesInRangeWithBothSigns) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const Matrix m = generate_scrambled_blocks(512, 32, 0.2, 0.2, seed);
  ASSERT_TRUE(valid_csr(m));
  expect_value_spread(m);
}

TEST(GenBlocks, InvalidParameters) {
  expect_invalid([] { generate_scrambled_blocks(64, 8, 0.0, 0.5, 1); }, {"theta", "(0, 1]"}, "theta 0");
  expect_invalid([] { generate_scrambled_blocks(64, 8, 1.5, 0.5, 1); }, {"theta"}, "theta 1.5");
  expect_invalid([] { generate_scrambled_blocks(64, 8, NAN, 0.5, 1); }, {"theta"}, "theta nan");
  expect_invalid([] { generate_scrambled_blocks(64, 8, 0.5, 0.0, 1); }, {"rho", "(0, 1]"}, "rho 0");
  expect_invalid([] { generate_scrambled_blocks(64, 8, 0.5, -0.1, 1); }, {"rho"}, "rho < 0");
  expect_invalid([] { generate_scrambled_blocks(64, 0, 0.5, 0.5, 1); }, {"delta", ">= 1"}, "delta 0");
  expect_invalid([] { generate_scrambled_blocks(-1, 8, 0.5, 0.5, 1); }, {"n"}, "n < 0");
}

// ---------------------------------------------------------------------------------------------
// determinism

const std::vector<std::string> kSmallSpecs = {"band:50:3",        "poisson2d5:8", "poisson3d7:5",
                                              "poisson3d27:4",    "rmat:8:8",     "rmat:9:4:0.45:0.15:0.15",
                                              "uniform:100:5:40", "uniform:60:7", "blocks:128:16:0.3:0.4"};

TEST(GenDeterminism, SameSeedSameMatrixDifferentSeedDifferent) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (const auto& spec : kSmallSpecs) {
    const Matrix a = generate(spec, seed), b = generate(spec, seed), c = generate(spec, seed ^ 0x5bd1e995);
    ASSERT_TRUE(valid_csr(a)) << spec;
    ASSERT_TRUE(valid_csr(c)) << spec;
    EXPECT_TRUE(bit_identical(a, b)) << spec;
    EXPECT_FALSE(bit_identical(a, c)) << spec;
    const bool random_structure =
        spec.rfind("rmat", 0) == 0 || spec.rfind("uniform", 0) == 0 || spec.rfind("blocks", 0) == 0;
    if (random_structure) {
      EXPECT_NE(a.col_idx, c.col_idx) << spec;
    } else {
      ASSERT_EQ(a.col_idx, c.col_idx) << spec;
      int64_t same = 0;
      for (size_t p = 0; p < a.values.size(); ++p) same += a.values[p] == c.values[p];
      EXPECT_LT(same, int64_t(a.values.size()) / 20 + 1) << spec;
    }
  }
}

TEST(GenDeterminism, IndependentOfThreadCount) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP";
#else
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  const int saved = omp_get_max_threads();
  for (const std::string spec : {"rmat:14:8", "uniform:5000:20:3000", "uniform:300:200:1000", "blocks:1024:32:0.2:0.3",
                                 "poisson3d27:12", "band:3000:17"}) {
    omp_set_num_threads(1);
    const Matrix one = generate(spec, seed);
    omp_set_num_threads(2);
    const Matrix two = generate(spec, seed);
    omp_set_num_threads(5);
    const Matrix five = generate(spec, seed);
    EXPECT_TRUE(bit_identical(one, two)) << spec;
    EXPECT_TRUE(bit_identical(one, five)) << spec;
  }
  omp_set_num_threads(saved);
#endif
}

// Pinned outputs for a fixed seed: the generators are portable (no <random> distributions, no
// thread-dependent choices), so these fingerprints are the same on every platform and compiler. A
// change here changes every generated test and benchmark input: update deliberately.
TEST(GenDeterminism, PinnedFingerprints) {
  const std::vector<std::pair<std::string, uint64_t>> pinned = {
      {"band:50:3", 0xa59426c58d69519bull},
      {"poisson2d5:8", 0xb4a5210196c20371ull},
      {"poisson3d7:5", 0xffa7cad5fc3d7ac1ull},
      {"poisson3d27:4", 0x5732325201aed277ull},
      {"rmat:10:8", 0xdc0c9129c1cec362ull},
      {"uniform:100:5:40", 0x3f0322a7e7a4a0a1ull},
      {"uniform:30:600:1000", 0xf25522acb6d47380ull},
      {"uniform:10:50:100000", 0x50a0a2a59e3f3582ull},
      {"blocks:256:32:0.2:0.3", 0x1c6ecf432f6cad04ull},
  };
  for (const auto& [spec, want] : pinned) {
    const uint64_t got = fingerprint(generate(spec, 20240531));
    EXPECT_EQ(got, want) << spec << ": 0x" << std::hex << got;
  }
}

// ---------------------------------------------------------------------------------------------
// spec parser

TEST(GenSpec, MatchesDirectCalls) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  EXPECT_TRUE(bit_identical(generate("band:40:4", seed), generate_band(40, 4, seed)));
  EXPECT_TRUE(bit_identical(generate("poisson2d5:7", seed), generate_poisson2d5(7, seed)));
  EXPECT_TRUE(bit_identical(generate("poisson3d7:5", seed), generate_poisson3d7(5, seed)));
  EXPECT_TRUE(bit_identical(generate("poisson3d27:5", seed), generate_poisson3d27(5, seed)));
  EXPECT_TRUE(bit_identical(generate("rmat:9:6", seed), generate_rmat(9, 6, 0.57, 0.19, 0.19, seed)));
  EXPECT_TRUE(bit_identical(generate("rmat:9:6:0.4:0.2:0.3", seed), generate_rmat(9, 6, 0.4, 0.2, 0.3, seed)));
  EXPECT_TRUE(bit_identical(generate("uniform:80:6", seed), generate_uniform(80, 80, 6, seed)));
  EXPECT_TRUE(bit_identical(generate("uniform:80:6:500", seed), generate_uniform(80, 500, 6, seed)));
  EXPECT_TRUE(
      bit_identical(generate("blocks:256:32:0.25:0.125", seed), generate_scrambled_blocks(256, 32, 0.25, 0.125, seed)));
  EXPECT_TRUE(
      bit_identical(generate("blocks:256:32:1:1e-1", seed), generate_scrambled_blocks(256, 32, 1.0, 0.1, seed)));
}

TEST(GenSpec, ErrorsNameTheSpecAndTheProblem) {
  struct Case {
    std::string spec;
    std::vector<std::string> pieces;
  };
  const std::vector<Case> cases = {
      // unknown kind: the message lists every known kind
      {"", {"unknown kind ''", "band", "poisson2d5", "poisson3d7", "poisson3d27", "rmat", "uniform", "blocks"}},
      {"foo:1", {"unknown kind 'foo'", "band:n:half_width", "blocks:n:delta:theta:rho"}},
      {"Band:10:2", {"unknown kind 'Band'"}},
      {"poisson3d:4", {"unknown kind 'poisson3d'"}},
      // wrong number of fields
      {"band", {"band takes 2 fields", "band:n:half_width", "got 0"}},
      {"band:10", {"band takes 2 fields", "got 1"}},
      {"band:10:2:3", {"band takes 2 fields", "got 3"}},
      {"poisson2d5", {"poisson2d5 takes 1 field", "got 0"}},
      {"poisson3d7:4:4", {"poisson3d7 takes 1 field", "got 2"}},
      {"poisson3d27:", {"field 1 (g) is not an integer"}},
      {"rmat:10", {"rmat takes 2 or 5 fields", "rmat:scale:degree[:a:b:c]", "got 1"}},
      {"rmat:10:8:0.5", {"rmat takes 2 or 5 fields", "got 3"}},
      {"rmat:10:8:0.5:0.2", {"rmat takes 2 or 5 fields", "got 4"}},
      {"rmat:10:8:0.5:0.2:0.1:0.1", {"got 6"}},
      {"uniform:10", {"uniform takes 2 or 3 fields", "got 1"}},
      {"uniform:10:2:20:5", {"got 4"}},
      {"blocks:64:8:0.5", {"blocks takes 4 fields", "blocks:n:delta:theta:rho", "got 3"}},
      // non-numeric fields
      {"band:x:2", {"field 1 (n) is not an integer: 'x'"}},
      {"band:10:", {"field 2 (half_width) is not an integer: ''"}},
      {"band:10:2.5", {"field 2 (half_width) is not an integer: '2.5'"}},
      {"band:10:2 ", {"field 2 (half_width) is not an integer: '2 '"}},
      {"band:+10:2", {"field 1 (n) is not an integer"}},
      {"band:1e3:2", {"field 1 (n) is not an integer"}},
      {"band:99999999999999999999:1", {"field 1 (n) is out of the 64-bit integer range"}},
      {"poisson2d5:four", {"field 1 (g) is not an integer: 'four'"}},
      {"rmat:10:8:a:0.2:0.1", {"field 3 (a) is not a number: 'a'"}},
      {"rmat:10:8:0.5:0.2:0.1x", {"field 5 (c) is not a number: '0.1x'"}},
      {"uniform:10:2:many", {"field 3 (cols) is not an integer"}},
      {"blocks:64:8:zero:0.5", {"field 3 (theta) is not a number"}},
      {"blocks:64:8:0.5:nan", {"field 4 (rho) is not a finite number"}},
      {"blocks:64:8:inf:0.5", {"field 3 (theta) is not a finite number"}},
      // out-of-range values
      {"band:-5:1", {"n must be >= 0", "-5"}},
      {"band:10:-1", {"half_width must be >= 0", "-1"}},
      {"poisson2d5:-3", {"g must be >= 0"}},
      {"poisson3d27:-1", {"g must be >= 0"}},
      {"rmat:-1:8", {"scale must be in [0, 40]", "-1"}},
      {"rmat:41:1", {"scale must be in [0, 40]", "41"}},
      {"rmat:10:-8", {"degree must be >= 0"}},
      {"rmat:10:8:0.6:0.3:0.3", {"a + b + c must be <= 1"}},
      {"rmat:10:8:-0.1:0.5:0.1", {"probability a must be in [0, 1]"}},
      {"rmat:10:8:0.1:1.5:0.1", {"probability b must be in [0, 1]"}},
      {"uniform:10:20", {"per_row (20) must not exceed the number of columns (10)"}},
      {"uniform:10:5:3", {"per_row (5)", "(3)"}},
      {"uniform:-10:2", {"rows must be >= 0"}},
      {"uniform:10:2:-1", {"cols must be >= 0"}},
      {"blocks:64:8:0:0.5", {"theta", "must be in (0, 1]", "got 0"}},
      {"blocks:64:8:1.01:0.5", {"theta", "(0, 1]"}},
      {"blocks:64:8:-0.5:0.5", {"theta"}},
      {"blocks:64:8:0.5:0", {"rho", "must be in (0, 1]"}},
      {"blocks:64:8:0.5:2", {"rho"}},
      {"blocks:64:0:0.5:0.5", {"delta (block size) must be >= 1"}},
      {"blocks:64:-8:0.5:0.5", {"delta"}},
      {"blocks:-64:8:0.5:0.5", {"n must be in [0, 2^31]"}},
      // sizes whose nnz would exceed 2^40
      {"band:1099511627777:0", {"more than the limit of 2^40"}},
      {"band:2000000:1000000", {"more than the limit of 2^40"}},
      {"band:9223372036854775807:9223372036854775807", {"more than the limit of 2^40"}},
      {"poisson2d5:500000", {"more than the limit of 2^40"}},
      {"poisson3d7:6000", {"more than the limit of 2^40"}},
      {"poisson3d27:3500", {"more than the limit of 2^40"}},
      {"poisson3d27:9223372036854775807", {"more than the limit of 2^40"}},
      {"rmat:36:32", {"more than the limit of 2^40"}},
      {"rmat:30:9223372036854775807", {"more than the limit of 2^40"}},
      {"uniform:1099511627776:2", {"more than the limit of 2^40"}},
      {"uniform:2000000000000:0", {"more than the limit of 2^40"}},
      {"blocks:2147483649:64:0.5:0.5", {"n must be in [0, 2^31]"}},
      {"blocks:2000000:1000:0.5:0.6", {"more than the limit of 2^40"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> pieces = c.pieces;
    pieces.push_back("generator spec '" + c.spec + "'");
    expect_invalid([&] { generate(c.spec, 1); }, pieces, "spec '" + c.spec + "'");
  }
}

TEST(GenSpec, DirectCallsValidateToo) {
  expect_invalid([] { generate_band(-1, 2, 1); }, {"band", "n must be >= 0"}, "band n");
  expect_invalid([] { generate_poisson3d7(-2, 1); }, {"poisson3d7", "g must be >= 0"}, "poisson3d7 g");
  expect_invalid([] { generate_rmat(-1, 4, 0.57, 0.19, 0.19, 1); }, {"rmat", "scale"}, "rmat scale");
  expect_invalid([] { generate_rmat(4, 4, 0.57, 0.19, 0.3, 1); }, {"rmat", "a + b + c"}, "rmat sum");
  expect_invalid([] { generate_rmat(4, 4, NAN, 0.19, 0.3, 1); }, {"rmat", "probability a"}, "rmat nan");
}

// ---------------------------------------------------------------------------------------------
// large cases: structure of the benchmark sizes (timings are printed, not asserted)

TEST(GenLarge, BenchmarkSizesAreValid) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_text(seed));
  for (const std::string spec : {"poisson3d27:64", "uniform:200000:16", "rmat:18:16", "blocks:8192:64:0.1:0.2"}) {
    const auto start = std::chrono::steady_clock::now();
    const Matrix m = generate(spec, seed);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[ generate ] %-24s %10lld nnz  %.3f s\n", spec.c_str(), static_cast<long long>(m.nnz()), seconds);
    ASSERT_TRUE(valid_csr(m)) << spec;
    if (spec == "poisson3d27:64") {
      EXPECT_EQ(m.nnz(), 190 * 190 * 190);
    }
    if (spec == "uniform:200000:16") {
      EXPECT_EQ(m.nnz(), 3200000);
    }
    if (spec == "rmat:18:16") {
      EXPECT_LE(m.nnz(), int64_t(16) << 18);
      EXPECT_GT(m.nnz(), int64_t(8) << 18);
    }
    if (spec == "blocks:8192:64:0.1:0.2") {
      EXPECT_EQ(m.nnz(), 1638 * 819);
    }
  }
}

}  // namespace

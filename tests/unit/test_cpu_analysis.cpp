// CPU structure analysis and product counts: hand-computed matrices (row statistics, BCSR blocks,
// 8x8 tile densities, DCSR strips, H_norm and SSF), empty shapes, random matrices (odd sizes, empty
// rows and columns, dense clusters) against a naive recomputation of every field, thread-count
// independence (bitwise) and argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::Analysis;
using sparsetc::detail::CsrMatrix;
using sparsetc_test::Triplets;

using sparsetc_test::csr_of;

Triplets from_list(int64_t rows, int64_t cols, const std::vector<std::pair<int64_t, int64_t>>& entries) {
  Triplets t{rows, cols, {}};
  for (const auto& rc : entries) t.entries[rc] = 1.0;
  return t;
}

TEST(CpuAnalysis, HandComputed) {
  // Row lengths 2, 0, 3, 1; farthest entries (0, 3) and (3, 0).
  const Triplets At = from_list(4, 5, {{0, 0}, {0, 3}, {2, 1}, {2, 2}, {2, 4}, {3, 0}});
  // B's row lengths 1, 2, 0, 1, 2: products row 0: 1 + 1, row 2: 2 + 0 + 2, row 3: 1.
  const Triplets Bt = from_list(5, 2, {{0, 1}, {1, 0}, {1, 1}, {3, 0}, {4, 0}, {4, 1}});
  for (int threads : {1, 2, 7}) {
    const CsrMatrix<double> A = csr_of<double>(At), B = csr_of<double>(Bt);
    const Analysis r = sparsetc::detail::cpu_analyze(A, &B, threads);
    EXPECT_EQ(r.rows, 4);
    EXPECT_EQ(r.cols, 5);
    EXPECT_EQ(r.nnz, 6);
    EXPECT_EQ(r.empty_rows, 1);
    EXPECT_EQ(r.row_length_min, 0);
    EXPECT_EQ(r.row_length_max, 3);
    EXPECT_DOUBLE_EQ(r.row_length_mean, 1.5);
    EXPECT_DOUBLE_EQ(r.row_length_std, std::sqrt(1.25));  // deviations .5, -1.5, 1.5, -.5
    EXPECT_DOUBLE_EQ(r.density, 0.3);
    EXPECT_EQ(r.products, 7);
    EXPECT_EQ(r.bandwidth, 3);
    const Analysis no_b = sparsetc::detail::cpu_analyze<double>(A, nullptr, threads);
    EXPECT_EQ(no_b.products, -1);
    EXPECT_EQ(no_b.bandwidth, 3);
    const CsrMatrix<float> Af = csr_of<float>(At), Bf = csr_of<float>(Bt);
    EXPECT_EQ(sparsetc::detail::cpu_analyze(Af, &Bf, threads).products, 7);
    EXPECT_EQ(sparsetc::detail::cpu_count_products(Af, Bf, threads), 7);
  }
  // Entries below the diagonal only: bandwidth from the first entry of a row.
  const CsrMatrix<double> L = csr_of<double>(from_list(6, 6, {{5, 0}, {5, 5}, {1, 1}}));
  EXPECT_EQ(sparsetc::detail::cpu_analyze<double>(L, nullptr, 2).bandwidth, 5);
  const CsrMatrix<double> D = csr_of<double>(from_list(3, 3, {{0, 0}, {1, 1}, {2, 2}}));
  const Analysis d = sparsetc::detail::cpu_analyze<double>(D, &D, 2);
  EXPECT_EQ(d.bandwidth, 0);
  EXPECT_EQ(d.row_length_std, 0.0);
  EXPECT_EQ(d.products, 3);
}

TEST(CpuAnalysis, HandComputedBlocksAndStrips) {
  // 18 x 20, 8 entries:
  //   (0,0) (0,1) (0,9) (1,0) (7,7) (8,0) (9,17) (17,19)
  // 8x8 tiles (row/8, col/8): (0,0) holds 4 entries, (0,1) (1,0) (1,2) (2,2) one each.
  // 16x8 blocks: (0,0) (0,1) (0,2) (1,2); 16x16 blocks: (0,0) (0,1) (1,1).
  const Triplets At = from_list(18, 20, {{0, 0}, {0, 1}, {0, 9}, {1, 0}, {7, 7}, {8, 0}, {9, 17}, {17, 19}});
  const CsrMatrix<double> A = csr_of<double>(At);
  for (int threads : {1, 2, 7}) {
    // Strips of 8 columns: [0, 8) [8, 16) [16, 20).
    // Row segments (row, strip): entries  (0,0): 2  (0,1): 1  (1,0): 1  (7,0): 1  (8,0): 1  (9,2): 1  (17,2): 1.
    const Analysis r = sparsetc::detail::cpu_analyze<double>(A, nullptr, threads, 8);
    EXPECT_EQ(r.empty_rows, 12);
    EXPECT_EQ(r.bandwidth, 9);
    EXPECT_EQ(r.blocks_16x8, 4);
    EXPECT_EQ(r.blocks_16x16, 3);
    EXPECT_EQ(r.blocks_8x8, 5);
    EXPECT_DOUBLE_EQ(r.fill_16x8, 8.0 / (4 * 128));
    EXPECT_DOUBLE_EQ(r.fill_16x16, 8.0 / (3 * 256));
    EXPECT_DOUBLE_EQ(r.fill_8x8, 8.0 / (5 * 64));
    // Tile counts 1 1 1 1 4: median 1/64, mean 1.6/64, std sqrt((4 * 0.6^2 + 2.4^2) / 5) / 64 = 1.2/64.
    EXPECT_EQ(r.tile_density_median, 1.0 / 64);
    EXPECT_DOUBLE_EQ(r.tile_density_mean, 1.6 / 64);
    EXPECT_DOUBLE_EQ(r.tile_density_std, 1.2 / 64);
    EXPECT_EQ(r.strip_width, 8);
    EXPECT_EQ(r.nonempty_rows, 6);
    // n_nnzrow_strip: rows 0 1 7 8 | row 0 | rows 9 17 -> 4, 1, 2, mean 7/3.
    EXPECT_DOUBLE_EQ(r.nonempty_rows_per_strip_mean, 7.0 / 3);
    // H_norm = -(2/8 ln(2/8) + 6 * 1/8 ln(1/8)) / ln 8 = (0.25 * 2 + 0.75 * 3) / 3 = 11/12.
    EXPECT_DOUBLE_EQ(r.h_norm, 11.0 / 12);
    // SSF = (6/18) / ((7/3)/18) * (8/18) * (1 - 11/12) = 18/7 * 4/9 / 12 = 2/21.
    EXPECT_DOUBLE_EQ(r.ssf, 2.0 / 21);

    // Default strips (256: one strip): segments of 3, 1, 1, 1, 1, 1 entries.
    const Analysis d = sparsetc::detail::cpu_analyze<double>(A, nullptr, threads);
    EXPECT_EQ(d.strip_width, 256);
    EXPECT_EQ(d.nonempty_rows_per_strip_mean, 6.0);
    const double h = -(3.0 / 8 * std::log(3.0 / 8) + 5.0 / 8 * std::log(1.0 / 8)) / std::log(8.0);
    EXPECT_DOUBLE_EQ(d.h_norm, h);
    EXPECT_DOUBLE_EQ(d.ssf, 1.0 * (8.0 / 18) * (1 - h));
    // Strips of one column: every segment holds one entry, H_norm = 1 exactly, SSF = 0.
    const Analysis one = sparsetc::detail::cpu_analyze<double>(A, nullptr, threads, 1);
    EXPECT_EQ(one.h_norm, 1.0);
    EXPECT_EQ(one.ssf, 0.0);
    EXPECT_DOUBLE_EQ(one.nonempty_rows_per_strip_mean, 8.0 / 20);
  }
}

TEST(CpuAnalysis, TileMedianOfAnEvenCount) {
  // One block row, tiles in column groups 0..3 with 5, 1, 3, 2 entries: sorted 1 2 3 5, median
  // (2 + 3) / 2 entries; mean 11/4; population std sqrt(((5-2.75)^2 + 1.75^2 + 0.25^2 + 0.75^2) / 4).
  const Triplets At = from_list(8, 32, {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {7, 7},  // 5
                                        {4, 12},                                 // 1
                                        {0, 16}, {5, 17}, {6, 23},               // 3
                                        {1, 24}, {1, 31}});                      // 2
  const Analysis r = sparsetc::detail::cpu_analyze<double>(csr_of<double>(At), nullptr, 2);
  EXPECT_EQ(r.blocks_8x8, 4);
  EXPECT_EQ(r.blocks_16x8, 4);
  EXPECT_EQ(r.blocks_16x16, 2);
  EXPECT_EQ(r.tile_density_median, 2.5 / 64);
  EXPECT_DOUBLE_EQ(r.tile_density_mean, 2.75 / 64);
  EXPECT_DOUBLE_EQ(r.tile_density_std, std::sqrt((2.25 * 2.25 + 1.75 * 1.75 + 0.25 * 0.25 + 0.75 * 0.75) / 4) / 64);
  // A full 8x8 tile: density 1.
  Triplets full{8, 8, {}};
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j) full.entries[{i, j}] = 1;
  const Analysis f = sparsetc::detail::cpu_analyze<double>(csr_of<double>(full), nullptr, 1);
  EXPECT_EQ(f.tile_density_median, 1.0);
  EXPECT_EQ(f.tile_density_mean, 1.0);
  EXPECT_EQ(f.fill_8x8, 1.0);
  EXPECT_EQ(f.fill_16x16, 0.25);
}

TEST(CpuAnalysis, EmptyShapes) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{0, 0}, {0, 5}, {5, 0}, {3, 4}}) {
    const CsrMatrix<double> A = csr_of<double>(Triplets{rows, cols, {}});
    const CsrMatrix<double> B = csr_of<double>(Triplets{cols, 2, {}});
    const Analysis r = sparsetc::detail::cpu_analyze(A, &B, 2);
    EXPECT_EQ(r.rows, rows);
    EXPECT_EQ(r.cols, cols);
    EXPECT_EQ(r.nnz, 0);
    EXPECT_EQ(r.empty_rows, rows);
    EXPECT_EQ(r.row_length_min, 0);
    EXPECT_EQ(r.row_length_max, 0);
    EXPECT_EQ(r.row_length_mean, 0.0);
    EXPECT_EQ(r.row_length_std, 0.0);
    EXPECT_EQ(r.density, 0.0);
    EXPECT_EQ(r.products, 0);
    EXPECT_EQ(r.bandwidth, 0);
    EXPECT_EQ(r.blocks_16x8, 0);
    EXPECT_EQ(r.blocks_16x16, 0);
    EXPECT_EQ(r.blocks_8x8, 0);
    EXPECT_EQ(r.fill_16x8, 0.0);
    EXPECT_EQ(r.fill_16x16, 0.0);
    EXPECT_EQ(r.fill_8x8, 0.0);
    EXPECT_EQ(r.tile_density_median, 0.0);
    EXPECT_EQ(r.tile_density_mean, 0.0);
    EXPECT_EQ(r.tile_density_std, 0.0);
    EXPECT_EQ(r.strip_width, 256);
    EXPECT_EQ(r.nonempty_rows, 0);
    EXPECT_EQ(r.nonempty_rows_per_strip_mean, 0.0);
    EXPECT_EQ(r.h_norm, 0.0);
    EXPECT_EQ(r.ssf, 0.0);
  }
  const CsrMatrix<double> one = csr_of<double>(from_list(1, 1, {{0, 0}}));
  const Analysis r = sparsetc::detail::cpu_analyze(one, &one, 1);
  EXPECT_EQ(r.density, 1.0);
  EXPECT_EQ(r.products, 1);
  EXPECT_EQ(r.row_length_min, 1);
  EXPECT_EQ(r.empty_rows, 0);
  // One entry: one block of each shape, H_norm defined as 0, SSF = strips / rows.
  EXPECT_EQ(r.blocks_16x8, 1);
  EXPECT_EQ(r.blocks_8x8, 1);
  EXPECT_EQ(r.fill_8x8, 1.0 / 64);
  EXPECT_EQ(r.tile_density_median, 1.0 / 64);
  EXPECT_EQ(r.tile_density_std, 0.0);
  EXPECT_EQ(r.h_norm, 0.0);
  EXPECT_EQ(r.ssf, 1.0);
  const CsrMatrix<double> wide = csr_of<double>(from_list(2, 1000, {{1, 999}}));
  const Analysis w = sparsetc::detail::cpu_analyze<double>(wide, nullptr, 2, 100);
  EXPECT_EQ(w.strip_width, 100);
  EXPECT_EQ(w.nonempty_rows_per_strip_mean, 0.1);
  EXPECT_EQ(w.h_norm, 0.0);
  EXPECT_DOUBLE_EQ(w.ssf, 10.0 / 2);  // (1/2) / (0.1/2) * (1/2) * 1
}

// Naive recomputation of every field from the triplets (maps and sorts, long double).
Analysis naive(const Triplets& A, const Triplets* B, int64_t strip_width = 256) {
  Analysis r;
  r.rows = A.rows;
  r.cols = A.cols;
  r.nnz = int64_t(A.entries.size());
  std::vector<int64_t> length(size_t(A.rows), 0);
  for (const auto& [rc, v] : A.entries) {
    length[size_t(rc.first)]++;
    r.bandwidth = std::max(r.bandwidth, std::abs(rc.first - rc.second));
  }
  if (A.rows > 0) {
    r.row_length_min = *std::min_element(length.begin(), length.end());
    r.row_length_max = *std::max_element(length.begin(), length.end());
    r.empty_rows = std::count(length.begin(), length.end(), 0);
    long double sum = 0, sum2 = 0;
    for (int64_t l : length) sum += l;
    const long double mean = sum / A.rows;
    for (int64_t l : length) sum2 += (l - mean) * (l - mean);
    r.row_length_mean = double(mean);
    r.row_length_std = double(std::sqrt(sum2 / A.rows));
  }
  r.density = A.rows * A.cols > 0 ? double(r.nnz) / double(A.rows * A.cols) : 0.0;
  if (B) {
    std::vector<int64_t> b_length(size_t(B->rows), 0);
    for (const auto& [rc, v] : B->entries) b_length[size_t(rc.first)]++;
    r.products = 0;
    for (const auto& [rc, v] : A.entries) r.products += b_length[size_t(rc.second)];
  }
  // Blocks: the distinct (row / h, col / w) of the entries.
  auto blocks = [&](int64_t h, int64_t w) {
    std::map<std::pair<int64_t, int64_t>, int64_t> count;
    for (const auto& [rc, v] : A.entries) count[{rc.first / h, rc.second / w}]++;
    return count;
  };
  auto fill = [&](int64_t n, int64_t area) { return n > 0 ? double(r.nnz) / double(n * area) : 0.0; };
  r.blocks_16x8 = int64_t(blocks(16, 8).size());
  r.blocks_16x16 = int64_t(blocks(16, 16).size());
  const auto tiles = blocks(8, 8);
  r.blocks_8x8 = int64_t(tiles.size());
  r.fill_16x8 = fill(r.blocks_16x8, 128);
  r.fill_16x16 = fill(r.blocks_16x16, 256);
  r.fill_8x8 = fill(r.blocks_8x8, 64);
  if (!tiles.empty()) {
    std::vector<long double> d;
    for (const auto& [t, c] : tiles) d.push_back(c / 64.0L);
    std::sort(d.begin(), d.end());
    const size_t n = d.size();
    r.tile_density_median = double(n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2);
    long double sum = 0, sum2 = 0;
    for (long double x : d) sum += x;
    const long double mean = sum / n;
    for (long double x : d) sum2 += (x - mean) * (x - mean);
    r.tile_density_mean = double(mean);
    r.tile_density_std = double(std::sqrt(sum2 / n));
  }
  // DCSR: segments (row, strip) with their entries; per strip, the rows holding entries there.
  r.strip_width = strip_width;
  const int64_t strips = (A.cols + strip_width - 1) / strip_width;
  std::map<std::pair<int64_t, int64_t>, int64_t> segment;
  std::set<int64_t> nonempty;
  for (const auto& [rc, v] : A.entries) {
    segment[{rc.first, rc.second / strip_width}]++;
    nonempty.insert(rc.first);
  }
  r.nonempty_rows = int64_t(nonempty.size());
  std::vector<int64_t> rows_in_strip(size_t(strips), 0);
  for (const auto& [rs, c] : segment) rows_in_strip[size_t(rs.second)]++;
  long double strip_mean = 0, scaled_mean = 0;  // mean of n_nnzrow_strip and of n_nnzrow_strip / n
  for (int64_t k : rows_in_strip) {
    strip_mean += (long double)k / strips;
    scaled_mean += (long double)k / A.rows / strips;
  }
  r.nonempty_rows_per_strip_mean = double(strip_mean);
  // H_norm by Eq. 1; 1 - H_norm = sum p ln c / ln nnz (as sum p = 1), which stays exact (0) when
  // every segment holds one entry.
  long double h = 0, one_minus_h = 1;
  if (r.nnz > 1) {
    one_minus_h = 0;
    for (const auto& [rs, c] : segment) {
      const long double p = (long double)c / r.nnz;
      h -= p * std::log(p);
      one_minus_h += p * std::log((long double)c);
    }
    h /= std::log((long double)r.nnz);
    one_minus_h /= std::log((long double)r.nnz);
  }
  r.h_norm = double(h);
  if (r.nnz > 0)
    r.ssf = double(((long double)r.nonempty_rows / A.rows) / scaled_mean * ((long double)r.nnz / A.rows) *
                   one_minus_h);
  return r;
}

// Relative agreement of doubles, with a floor for values that should be 0.
::testing::AssertionResult close(double got, double want, double rel = 1e-12) {
  if (std::abs(got - want) <= rel * std::abs(want) + 1e-15) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (difference " << got - want << ")";
}

void expect_matches(const Analysis& r, const Analysis& want) {
  EXPECT_EQ(r.rows, want.rows);
  EXPECT_EQ(r.cols, want.cols);
  EXPECT_EQ(r.nnz, want.nnz);
  EXPECT_EQ(r.empty_rows, want.empty_rows);
  EXPECT_EQ(r.row_length_min, want.row_length_min);
  EXPECT_EQ(r.row_length_max, want.row_length_max);
  EXPECT_TRUE(close(r.row_length_mean, want.row_length_mean, 1e-14)) << "row_length_mean";
  EXPECT_TRUE(close(r.row_length_std, want.row_length_std)) << "row_length_std";
  EXPECT_DOUBLE_EQ(r.density, want.density);
  EXPECT_EQ(r.products, want.products);
  EXPECT_EQ(r.bandwidth, want.bandwidth);
  EXPECT_EQ(r.blocks_16x8, want.blocks_16x8);
  EXPECT_EQ(r.blocks_16x16, want.blocks_16x16);
  EXPECT_EQ(r.blocks_8x8, want.blocks_8x8);
  EXPECT_TRUE(close(r.fill_16x8, want.fill_16x8)) << "fill_16x8";
  EXPECT_TRUE(close(r.fill_16x16, want.fill_16x16)) << "fill_16x16";
  EXPECT_TRUE(close(r.fill_8x8, want.fill_8x8)) << "fill_8x8";
  EXPECT_EQ(r.tile_density_median, want.tile_density_median);  // a multiple of 1/128: exact
  EXPECT_TRUE(close(r.tile_density_mean, want.tile_density_mean)) << "tile_density_mean";
  EXPECT_TRUE(close(r.tile_density_std, want.tile_density_std)) << "tile_density_std";
  EXPECT_EQ(r.strip_width, want.strip_width);
  EXPECT_EQ(r.nonempty_rows, want.nonempty_rows);
  EXPECT_TRUE(close(r.nonempty_rows_per_strip_mean, want.nonempty_rows_per_strip_mean))
      << "nonempty_rows_per_strip_mean";
  EXPECT_TRUE(close(r.h_norm, want.h_norm)) << "h_norm";
  EXPECT_TRUE(close(r.ssf, want.ssf)) << "ssf";
}

// Every field bitwise equal (floating ones included).
void expect_identical(const Analysis& a, const Analysis& b) {
  static_assert(sizeof(Analysis) % 8 == 0, "Analysis holds 8-byte fields only: no padding");
  EXPECT_EQ(0, std::memcmp(&a, &b, sizeof(Analysis)));
}

// Dense clusters (so tiles reach 64 entries) at random unaligned places, scattered entries, and
// empty rows and column ranges.
Triplets clustered(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Triplets t{rows, cols, {}};
  const int64_t clusters = 1 + (rows * cols) / 2000;
  for (int64_t k = 0; k < clusters; ++k) {
    const int64_t h = 1 + int64_t(u(rng) * 24), w = 1 + int64_t(u(rng) * 24);
    const int64_t i0 = int64_t(u(rng) * double(rows)), j0 = int64_t(u(rng) * double(cols / 2));  // right half empty
    const double p = u(rng) < 0.3 ? 1.0 : u(rng);
    for (int64_t i = i0; i < std::min(rows, i0 + h); ++i)
      for (int64_t j = j0; j < std::min(cols, j0 + w); ++j)
        if (i % 5 != 3 && u(rng) < p) t.entries[{i, j}] = 1.0;  // rows 3, 8, 13, ... empty
  }
  for (int64_t k = 0; k < rows / 3; ++k) {
    const int64_t i = int64_t(u(rng) * double(rows)), j = int64_t(u(rng) * double(cols));
    if (i % 5 != 3) t.entries[{i, j}] = 1.0;
  }
  return t;
}

TEST(CpuAnalysis, RandomMatchesNaive) {
  struct Case {
    int64_t m, k, n;
    double density;
  };
  for (const Case& c : {Case{1, 1, 1, 1.0}, Case{37, 45, 3, 1.0}, Case{37, 50, 20, 0.1}, Case{300, 200, 90, 0.02},
                        Case{9000, 40, 30, 0.1}, Case{50, 9000, 3, 0.001}, Case{200, 200, 200, 0.0},
                        Case{8193, 301, 5, 0.01}}) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE(testing::Message() << "seed " << seed << " " << c.m << "x" << c.k);
    const Triplets At = sparsetc_test::random_triplets(c.m, c.k, c.density, seed);
    const Triplets Bt = sparsetc_test::random_triplets(c.k, c.n, c.density, seed + 3);
    const CsrMatrix<double> A = csr_of<double>(At), B = csr_of<double>(Bt);
    for (int64_t strip : {0, 1, 3, 8, 64, 1000000}) {
      SCOPED_TRACE(testing::Message() << "strip_width " << strip);
      const Analysis want = naive(At, &Bt, strip > 0 ? strip : 256);
      Analysis first;
      for (int threads : {1, 2, 7}) {
        const Analysis r = sparsetc::detail::cpu_analyze(A, &B, threads, strip);
        expect_matches(r, want);
        EXPECT_EQ(sparsetc::detail::cpu_count_products(A, B, threads), want.products);
        // Every field, floating ones included, is the same for any thread count.
        if (threads == 1) first = r;
        expect_identical(first, r);
      }
    }
  }
}

TEST(CpuAnalysis, ClusteredMatchesNaive) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{17, 23}, {101, 77}, {333, 517}, {9001, 129}, {5, 3001}}) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE(testing::Message() << "seed " << seed << " " << rows << "x" << cols);
    const Triplets At = clustered(rows, cols, seed);
    const CsrMatrix<float> A = csr_of<float>(At);
    for (int64_t strip : {0, 5, 16, 100}) {
      SCOPED_TRACE(testing::Message() << "strip_width " << strip);
      const Analysis want = naive(At, nullptr, strip > 0 ? strip : 256);
      const Analysis r1 = sparsetc::detail::cpu_analyze<float>(A, nullptr, 1, strip);
      expect_matches(r1, want);
      for (int threads : {2, 3, 8})
        expect_identical(r1, sparsetc::detail::cpu_analyze<float>(A, nullptr, threads, strip));
    }
  }
}

TEST(CpuAnalysis, WideHypersparse) {
  // So wide that the block counting sorts instead of marking: the same entries in a narrow matrix
  // (marked) give the same blocks and tiles, and the wide one matches the naive recomputation.
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  Triplets wide = clustered(333, 517, seed);
  wide.cols = int64_t(1) << 22;
  for (int64_t k = 0; k < 50; ++k) wide.entries[{k * 6, (k * 7919 * 1021) % wide.cols}] = 1;  // far columns
  const CsrMatrix<double> W = csr_of<double>(wide);
  for (int64_t strip : {0, 1000, 1 << 20}) {
    const Analysis w = sparsetc::detail::cpu_analyze<double>(W, nullptr, 3, strip);
    expect_matches(w, naive(wide, nullptr, strip > 0 ? strip : 256));
    expect_identical(w, sparsetc::detail::cpu_analyze<double>(W, nullptr, 1, strip));
  }
  // Without the far entries: the same blocks and tiles as the narrow matrix (which is marked).
  Triplets wide_core = clustered(333, 517, seed);
  wide_core.cols = wide.cols;
  const Analysis a = sparsetc::detail::cpu_analyze<double>(csr_of<double>(wide_core), nullptr, 2);
  const Analysis b = sparsetc::detail::cpu_analyze<double>(csr_of<double>(clustered(333, 517, seed)), nullptr, 2);
  EXPECT_EQ(a.blocks_16x8, b.blocks_16x8);
  EXPECT_EQ(a.blocks_16x16, b.blocks_16x16);
  EXPECT_EQ(a.blocks_8x8, b.blocks_8x8);
  EXPECT_EQ(a.tile_density_median, b.tile_density_median);
  EXPECT_EQ(a.tile_density_std, b.tile_density_std);
  EXPECT_EQ(a.fill_16x16, b.fill_16x16);
}

TEST(CpuAnalysis, BadStripWidth) {
  const CsrMatrix<double> A = csr_of<double>(from_list(3, 4, {{0, 1}}));
  try {
    sparsetc::detail::cpu_analyze<double>(A, nullptr, 1, -3);
    ADD_FAILURE() << "no error";
  } catch (const sparsetc::detail::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("strip_width"), std::string::npos) << e.what();
  }
}

TEST(CpuAnalysis, CountProductsLarge) {
  // Many entries so that the count is split over chunks; every row of B has i % 7 entries.
  const int64_t n = 50000;
  CsrMatrix<double> B;
  B.rows = n;
  B.cols = 8;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i % 7; ++j) B.col_idx.push_back(j), B.values.push_back(1);
    B.row_ptr.push_back(int64_t(B.col_idx.size()));
  }
  CsrMatrix<double> A;
  A.rows = 3;
  A.cols = n;
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t k = r; k < n; k += 1 + r) A.col_idx.push_back(k), A.values.push_back(1);
    A.row_ptr.push_back(int64_t(A.col_idx.size()));
  }
  int64_t want = 0;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t k = r; k < n; k += 1 + r) want += k % 7;
  for (int threads : {1, 2, 7}) EXPECT_EQ(sparsetc::detail::cpu_count_products(A, B, threads), want);
}

TEST(CpuAnalysis, ShapeMismatch) {
  const CsrMatrix<double> A = csr_of<double>(from_list(3, 4, {{0, 1}}));
  const CsrMatrix<double> B = csr_of<double>(from_list(5, 2, {{0, 1}}));
  try {
    sparsetc::detail::cpu_analyze(A, &B, 2);
    ADD_FAILURE() << "no error";
  } catch (const sparsetc::detail::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_DIMENSION_MISMATCH);
    EXPECT_NE(std::string(e.what()).find("A is 3x4 but B is 5x2"), std::string::npos) << e.what();
  }
}

}  // namespace

// CPU structure analysis and product counts: a hand-computed matrix, empty shapes, random
// matrices against a naive recomputation, thread-count independence and shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::Analysis;
using sparsetc::detail::CsrMatrix;
using sparsetc_test::Triplets;

template <typename V>
CsrMatrix<V> csr_of(const Triplets& t) {
  CsrMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.row_ptr.assign(size_t(t.rows + 1), 0);
  for (const auto& [rc, v] : t.entries) {
    m.row_ptr[size_t(rc.first + 1)]++;
    m.col_idx.push_back(rc.second);
    m.values.push_back(V(v));
  }
  for (int64_t i = 0; i < t.rows; ++i) m.row_ptr[size_t(i + 1)] += m.row_ptr[size_t(i)];
  return m;
}

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
  }
  const CsrMatrix<double> one = csr_of<double>(from_list(1, 1, {{0, 0}}));
  const Analysis r = sparsetc::detail::cpu_analyze(one, &one, 1);
  EXPECT_EQ(r.density, 1.0);
  EXPECT_EQ(r.products, 1);
  EXPECT_EQ(r.row_length_min, 1);
  EXPECT_EQ(r.empty_rows, 0);
}

// Naive recomputation from the triplets.
Analysis naive(const Triplets& A, const Triplets* B) {
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
  return r;
}

TEST(CpuAnalysis, RandomMatchesNaive) {
  struct Case {
    int64_t m, k, n;
    double density;
  };
  for (const Case& c : {Case{1, 1, 1, 1.0}, Case{37, 50, 20, 0.1}, Case{300, 200, 90, 0.02}, Case{9000, 40, 30, 0.1},
                        Case{50, 9000, 3, 0.001}, Case{200, 200, 200, 0.0}}) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE(testing::Message() << "seed " << seed << " " << c.m << "x" << c.k);
    const Triplets At = sparsetc_test::random_triplets(c.m, c.k, c.density, seed);
    const Triplets Bt = sparsetc_test::random_triplets(c.k, c.n, c.density, seed + 3);
    const Analysis want = naive(At, &Bt);
    const CsrMatrix<double> A = csr_of<double>(At), B = csr_of<double>(Bt);
    Analysis first;
    for (int threads : {1, 2, 7}) {
      const Analysis r = sparsetc::detail::cpu_analyze(A, &B, threads);
      EXPECT_EQ(r.rows, want.rows);
      EXPECT_EQ(r.cols, want.cols);
      EXPECT_EQ(r.nnz, want.nnz);
      EXPECT_EQ(r.empty_rows, want.empty_rows);
      EXPECT_EQ(r.row_length_min, want.row_length_min);
      EXPECT_EQ(r.row_length_max, want.row_length_max);
      EXPECT_NEAR(r.row_length_mean, want.row_length_mean, 1e-14 * (1 + want.row_length_mean));
      EXPECT_NEAR(r.row_length_std, want.row_length_std, 1e-12 * (1 + want.row_length_std));
      EXPECT_DOUBLE_EQ(r.density, want.density);
      EXPECT_EQ(r.products, want.products);
      EXPECT_EQ(r.bandwidth, want.bandwidth);
      EXPECT_EQ(sparsetc::detail::cpu_count_products(A, B, threads), want.products);
      // Every field, floating ones included, is the same for any thread count.
      if (threads == 1) first = r;
      EXPECT_EQ(0, std::memcmp(&first.row_length_std, &r.row_length_std, sizeof(double)));
      EXPECT_EQ(0, std::memcmp(&first.row_length_mean, &r.row_length_mean, sizeof(double)));
    }
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

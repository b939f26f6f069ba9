// CPU SpGEMM against the naive float64 reference: exact structure, values within rounding,
// symbolic + numeric equal to the fused product, thread-count reproducibility, structural zeros,
// rows with more than 65536 products, and shape and state errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::CsrMatrix;
using sparsetc::detail::Error;
using sparsetc_test::Triplets;

using sparsetc_test::csr_of;

// The triplets as the engine sees them (values rounded to V), optionally in absolute value.
template <typename V>
Triplets as_seen(const Triplets& t, bool absolute) {
  Triplets r{t.rows, t.cols, {}};
  for (const auto& [rc, v] : t.entries) r.entries[rc] = absolute ? std::fabs(double(V(v))) : double(V(v));
  return r;
}

template <typename V>
double tolerance() {
  return std::is_same_v<V, double> ? 1e-13 : 1e-5;
}

// C is well formed: offsets, sorted unique in-range columns, values sized.
template <typename V>
void expect_canonical(const CsrMatrix<V>& C, bool with_values) {
  ASSERT_EQ(int64_t(C.row_ptr.size()), C.rows + 1);
  ASSERT_EQ(C.row_ptr.front(), 0);
  ASSERT_EQ(C.row_ptr.back(), C.nnz());
  ASSERT_EQ(C.values.size(), with_values ? C.col_idx.size() : size_t(0));
  for (int64_t i = 0; i < C.rows; ++i)
    for (int64_t p = C.row_ptr[size_t(i)]; p < C.row_ptr[size_t(i + 1)]; ++p) {
      ASSERT_GE(C.col_idx[size_t(p)], 0);
      ASSERT_LT(C.col_idx[size_t(p)], C.cols);
      if (p > C.row_ptr[size_t(i)]) {
        ASSERT_LT(C.col_idx[size_t(p - 1)], C.col_idx[size_t(p)]) << "row " << i;
      }
    }
}

// C equals the reference: the same key set, values within tol * (|A||B|)_ij.
template <typename V>
void expect_matches(const CsrMatrix<V>& C, const Triplets& A, const Triplets& B) {
  const Triplets want = sparsetc_test::reference_spgemm(as_seen<V>(A, false), as_seen<V>(B, false));
  const Triplets bound = sparsetc_test::reference_spgemm(as_seen<V>(A, true), as_seen<V>(B, true));
  expect_canonical(C, true);
  ASSERT_EQ(C.rows, A.rows);
  ASSERT_EQ(C.cols, B.cols);
  ASSERT_EQ(C.nnz(), int64_t(want.entries.size()));
  auto it = want.entries.begin();
  std::vector<double> got_all, want_all;
  for (int64_t i = 0; i < C.rows; ++i)
    for (int64_t p = C.row_ptr[size_t(i)]; p < C.row_ptr[size_t(i + 1)]; ++p, ++it) {
      const int64_t j = C.col_idx[size_t(p)];
      ASSERT_EQ(it->first, std::make_pair(i, j)) << "structure differs";
      const double got = double(C.values[size_t(p)]);
      ASSERT_LE(std::fabs(got - it->second), tolerance<V>() * bound.entries.at({i, j}) + 1e-300)
          << "(" << i << ", " << j << ") got " << got << " want " << it->second;
      got_all.push_back(got);
      want_all.push_back(it->second);
    }
  EXPECT_LT(sparsetc_test::relative_error(got_all, want_all), tolerance<V>());
}

template <typename V>
void expect_bitwise_equal(const CsrMatrix<V>& X, const CsrMatrix<V>& Y) {
  ASSERT_EQ(X.rows, Y.rows);
  ASSERT_EQ(X.cols, Y.cols);
  ASSERT_EQ(X.row_ptr, Y.row_ptr);
  ASSERT_EQ(X.col_idx, Y.col_idx);
  ASSERT_EQ(X.values.size(), Y.values.size());
  if (!X.values.empty()) {
    EXPECT_EQ(0, std::memcmp(X.values.data(), Y.values.data(), X.values.size() * sizeof(V)));
  }
}

struct Shape {
  int64_t m, k, n;
  double density_a, density_b;
};
const Shape kShapes[] = {{1, 1, 1, 1.0, 1.0},        {0, 5, 4, 0.5, 0.5},     {5, 0, 4, 0.5, 0.5},
                         {4, 5, 0, 0.5, 0.5},        {6, 7, 3, 0.0, 0.5},     {6, 7, 3, 0.5, 0.0},
                         {30, 40, 25, 0.1, 0.1},     {100, 80, 120, 0.05, 0.05}, {200, 300, 100, 0.02, 0.03},
                         {40, 30, 50, 0.5, 0.5},     {1, 60, 70, 0.8, 0.4},   {70, 1, 70, 0.5, 0.5},
                         {150, 150, 150, 0.03, 0.03}};

template <typename V>
void check_against_reference(int threads) {
  for (const Shape& s : kShapes) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE(testing::Message() << "seed " << seed << " A " << s.m << "x" << s.k << " B " << s.k << "x" << s.n);
    const Triplets At = sparsetc_test::random_triplets(s.m, s.k, s.density_a, seed);
    const Triplets Bt = sparsetc_test::random_triplets(s.k, s.n, s.density_b, seed + 17);
    const CsrMatrix<V> A = csr_of<V>(At), B = csr_of<V>(Bt);
    const CsrMatrix<V> C = sparsetc::detail::cpu_spgemm<V>(A, B, threads);
    expect_matches(C, At, Bt);
    // Symbolic then numeric: the same pattern and bitwise the same values.
    CsrMatrix<V> S = sparsetc::detail::cpu_spgemm_symbolic<V>(A, B, threads);
    expect_canonical(S, false);
    EXPECT_EQ(S.row_ptr, C.row_ptr);
    EXPECT_EQ(S.col_idx, C.col_idx);
    sparsetc::detail::cpu_spgemm_numeric<V>(A, B, S, threads);
    expect_bitwise_equal(S, C);
    // Numeric again on the same C (plans reuse it).
    sparsetc::detail::cpu_spgemm_numeric<V>(A, B, S, threads);
    expect_bitwise_equal(S, C);
    EXPECT_EQ(sparsetc::detail::cpu_count_products<V>(A, B, threads),
              [&] {
                int64_t n = 0;
                for (const auto& [rc, v] : At.entries)
                  for (const auto& [rc2, w] : Bt.entries) n += rc2.first == rc.second;
                return n;
              }());
  }
}

TEST(CpuSpgemm, MatchesReferenceDouble) { check_against_reference<double>(2); }
TEST(CpuSpgemm, MatchesReferenceFloat) { check_against_reference<float>(2); }
TEST(CpuSpgemm, MatchesReferenceSingleThread) { check_against_reference<double>(1); }
TEST(CpuSpgemm, MatchesReferenceManyThreads) { check_against_reference<double>(5); }

// Skewed rows: power-law-like lengths, a few dense rows, empty rows.
Triplets skewed_triplets(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  Triplets t{rows, cols, {}};
  for (int64_t i = 0; i < rows; ++i) {
    if (rng() % 10 == 0) continue;
    const int64_t len = std::min<int64_t>(cols, int64_t(1 + 400.0 / double(1 + rng() % 200)));
    for (int64_t e = 0; e < len; ++e) t.entries[{i, int64_t(rng() % uint64_t(cols))}] = (rng() % 2 ? 1 : -1) * u(rng);
  }
  return t;
}

template <typename V>
void check_reproducible() {
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  const Triplets At = skewed_triplets(3000, 2000, seed), Bt = skewed_triplets(2000, 2500, seed + 1);
  const CsrMatrix<V> A = csr_of<V>(At), B = csr_of<V>(Bt);
  const CsrMatrix<V> C1 = sparsetc::detail::cpu_spgemm<V>(A, B, 1);
  for (int threads : {2, 7}) {
    expect_bitwise_equal(C1, sparsetc::detail::cpu_spgemm<V>(A, B, threads));
    CsrMatrix<V> S = sparsetc::detail::cpu_spgemm_symbolic<V>(A, B, threads);
    sparsetc::detail::cpu_spgemm_numeric<V>(A, B, S, threads);
    expect_bitwise_equal(C1, S);
  }
  expect_matches(C1, At, Bt);
}

TEST(CpuSpgemm, BitwiseReproducibleAcrossThreadCounts) {
  check_reproducible<double>();
  check_reproducible<float>();
}

TEST(CpuSpgemm, KeepsStructuralZeros) {
  // [1 1] * [1; -1] = [0], stored; and a row whose products cancel among others.
  Triplets A{2, 2, {{{0, 0}, 1.0}, {{0, 1}, 1.0}, {{1, 0}, 2.0}}};
  Triplets B{2, 2, {{{0, 0}, 1.0}, {{1, 0}, -1.0}, {{0, 1}, 3.0}}};
  const CsrMatrix<double> C = sparsetc::detail::cpu_spgemm<double>(csr_of<double>(A), csr_of<double>(B), 2);
  ASSERT_EQ(C.row_ptr, (std::vector<int64_t>{0, 2, 4}));
  ASSERT_EQ(C.col_idx, (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(C.values, (std::vector<double>{0.0, 3.0, 2.0, 6.0}));
  // Explicit zeros in the inputs also give structural entries.
  Triplets Z{1, 1, {{{0, 0}, 0.0}}};
  const CsrMatrix<double> CZ = sparsetc::detail::cpu_spgemm<double>(csr_of<double>(Z), csr_of<double>(Z), 1);
  EXPECT_EQ(CZ.nnz(), 1);
  EXPECT_EQ(CZ.values, std::vector<double>{0.0});
}

// Rows with more than 65536 products: one with many distinct columns (dense scan of the
// accumulator), one whose products collapse onto few columns of a very wide B (sort).
TEST(CpuSpgemm, RowsWithManyProducts) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  {
    Triplets A{3, 300, {}}, B{300, 1000, {}};
    for (int64_t k = 0; k < 300; ++k) A.entries[{1, k}] = u(rng);
    A.entries[{2, 5}] = u(rng);
    for (int64_t k = 0; k < 300; ++k)
      for (int e = 0; e < 300; ++e) B.entries[{k, int64_t(rng() % 1000)}] = u(rng);
    const CsrMatrix<double> Ac = csr_of<double>(A), Bc = csr_of<double>(B);
    ASSERT_GT(sparsetc::detail::cpu_count_products(Ac, Bc, 2), 65536);
    expect_matches(sparsetc::detail::cpu_spgemm<double>(Ac, Bc, 2), A, B);
  }
  {
    const int64_t width = 1 << 20;
    std::vector<int64_t> columns;
    for (int c = 0; c < 1000; ++c) columns.push_back(int64_t(rng() % uint64_t(width)));
    Triplets A{2, 80, {}}, B{80, width, {}};
    for (int64_t k = 0; k < 80; ++k) A.entries[{0, k}] = u(rng);
    for (int64_t k = 0; k < 80; ++k)
      for (int64_t c : columns) B.entries[{k, c}] = u(rng);
    const CsrMatrix<double> Ac = csr_of<double>(A), Bc = csr_of<double>(B);
    ASSERT_GT(sparsetc::detail::cpu_count_products(Ac, Bc, 2), 65536);
    const CsrMatrix<double> C = sparsetc::detail::cpu_spgemm<double>(Ac, Bc, 2);
    expect_matches(C, A, B);
    CsrMatrix<double> S = sparsetc::detail::cpu_spgemm_symbolic<double>(Ac, Bc, 2);
    sparsetc::detail::cpu_spgemm_numeric<double>(Ac, Bc, S, 2);
    expect_bitwise_equal(S, C);
  }
}

// A 2D 5-point Laplacian squared: integer values, exact in double; a 13-point stencil.
TEST(CpuSpgemm, PoissonSquaredExact) {
  const int64_t g = 50, n = g * g;
  Triplets T{n, n, {}};
  for (int64_t y = 0; y < g; ++y)
    for (int64_t x = 0; x < g; ++x) {
      const int64_t i = y * g + x;
      T.entries[{i, i}] = 4;
      if (y > 0) T.entries[{i, i - g}] = -1;
      if (x > 0) T.entries[{i, i - 1}] = -1;
      if (x < g - 1) T.entries[{i, i + 1}] = -1;
      if (y < g - 1) T.entries[{i, i + g}] = -1;
    }
  const CsrMatrix<double> A = csr_of<double>(T);
  const CsrMatrix<double> C = sparsetc::detail::cpu_spgemm<double>(A, A, 2);
  const Triplets want = sparsetc_test::reference_spgemm(T, T);
  ASSERT_EQ(C.nnz(), int64_t(want.entries.size()));
  auto it = want.entries.begin();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = C.row_ptr[size_t(i)]; p < C.row_ptr[size_t(i + 1)]; ++p, ++it) {
      ASSERT_EQ(it->first, std::make_pair(i, C.col_idx[size_t(p)]));
      ASSERT_EQ(it->second, C.values[size_t(p)]);
    }
  // Interior rows have 13 entries.
  EXPECT_EQ(C.row_ptr[size_t(g * (g / 2) + g / 2 + 1)] - C.row_ptr[size_t(g * (g / 2) + g / 2)], 13);
}

template <typename F>
void expect_error(F&& f, sparsetc_status_t status, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected status " << status;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CpuSpgemm, ShapeMismatch) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> A = csr_of<double>(sparsetc_test::random_triplets(3, 4, 0.5, seed));
  const CsrMatrix<double> B = csr_of<double>(sparsetc_test::random_triplets(5, 2, 0.5, seed + 1));
  using namespace sparsetc::detail;
  expect_error([&] { cpu_spgemm(A, B, 2); }, SPARSETC_STATUS_DIMENSION_MISMATCH, "A is 3x4 but B is 5x2");
  expect_error([&] { cpu_spgemm_symbolic(A, B, 2); }, SPARSETC_STATUS_DIMENSION_MISMATCH, "A is 3x4 but B is 5x2");
  CsrMatrix<double> C;
  expect_error([&] { cpu_spgemm_numeric(A, B, C, 2); }, SPARSETC_STATUS_DIMENSION_MISMATCH, "A is 3x4 but B is 5x2");
  expect_error([&] { cpu_count_products(A, B, 2); }, SPARSETC_STATUS_DIMENSION_MISMATCH, "A is 3x4 but B is 5x2");
}

TEST(CpuSpgemm, NumericRejectsForeignPattern) {
  using namespace sparsetc::detail;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  const CsrMatrix<double> A = csr_of<double>(sparsetc_test::random_triplets(20, 15, 0.2, seed, false));
  const CsrMatrix<double> B = csr_of<double>(sparsetc_test::random_triplets(15, 12, 0.2, seed + 1, false));
  const CsrMatrix<double> good = cpu_spgemm_symbolic(A, B, 2);
  ASSERT_GT(good.nnz(), 1);
  // Never through symbolic, or a product of other shapes.
  CsrMatrix<double> empty;
  expect_error([&] { cpu_spgemm_numeric(A, B, empty, 2); }, SPARSETC_STATUS_INVALID_STATE, "C is 0x0");
  const CsrMatrix<double> B2 = csr_of<double>(sparsetc_test::random_triplets(15, 13, 0.2, seed + 2));
  CsrMatrix<double> other = cpu_spgemm_symbolic(A, B2, 2);
  expect_error([&] { cpu_spgemm_numeric(A, B, other, 2); }, SPARSETC_STATUS_INVALID_STATE, "C is 20x13");
  // Offsets that disagree with the indices.
  CsrMatrix<double> bad_offsets = good;
  bad_offsets.row_ptr.pop_back();
  expect_error([&] { cpu_spgemm_numeric(A, B, bad_offsets, 2); }, SPARSETC_STATUS_INVALID_STATE, "row offsets");
  CsrMatrix<double> bad_last = good;
  bad_last.col_idx.push_back(0);
  expect_error([&] { cpu_spgemm_numeric(A, B, bad_last, 2); }, SPARSETC_STATUS_INVALID_STATE, "row offsets");
  // Same sizes, a different pattern: an entry missing, an entry added, a column out of range.
  CsrMatrix<double> missing = good;
  for (size_t i = 1; i < missing.row_ptr.size(); ++i)
    if (missing.row_ptr[i] > 0) {
      missing.col_idx.erase(missing.col_idx.begin() + missing.row_ptr[i] - 1);
      for (size_t r = i; r < missing.row_ptr.size(); ++r) missing.row_ptr[r]--;
      break;
    }
  expect_error([&] { cpu_spgemm_numeric(A, B, missing, 2); }, SPARSETC_STATUS_INVALID_STATE, "pattern");
  CsrMatrix<double> full;
  full.rows = 20;
  full.cols = 12;
  for (int64_t i = 0; i < 20; ++i) {
    for (int64_t j = 0; j < 12; ++j) full.col_idx.push_back(j);
    full.row_ptr.push_back(int64_t(full.col_idx.size()));
  }
  if (good.nnz() < 240)
    expect_error([&] { cpu_spgemm_numeric(A, B, full, 2); }, SPARSETC_STATUS_INVALID_STATE, "entries but A*B has");
  CsrMatrix<double> out_of_range = good;
  out_of_range.col_idx.back() = 12;
  expect_error([&] { cpu_spgemm_numeric(A, B, out_of_range, 2); }, SPARSETC_STATUS_INVALID_STATE, "out of range");
  // The good pattern still works after all this.
  CsrMatrix<double> C = good;
  cpu_spgemm_numeric(A, B, C, 2);
  expect_bitwise_equal(C, cpu_spgemm(A, B, 2));
}

}  // namespace

// CPU SpMM against the naive float64 reference: random shapes and densities, every layout pair,
// padded leading dimensions, alpha/beta combinations, the transpose, thread-count reproducibility
// and shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::CsrMatrix;
using sparsetc::detail::DenseView;
using sparsetc::detail::Error;
using sparsetc_test::Triplets;

using sparsetc_test::csr_of;

// The triplets as the engine sees them (values rounded to V), optionally transposed or in |.|.
template <typename V>
Triplets as_seen(const Triplets& t, bool transpose, bool absolute) {
  Triplets r{transpose ? t.cols : t.rows, transpose ? t.rows : t.cols, {}};
  for (const auto& [rc, v] : t.entries) {
    const double x = double(V(v));
    r.entries[transpose ? std::make_pair(rc.second, rc.first) : rc] = absolute ? std::fabs(x) : x;
  }
  return r;
}

// Dense matrix in a padded buffer whose padding (and, when poisoned, contents) is NaN.
template <typename V>
struct Dense {
  std::vector<V> buffer;
  DenseView<V> view;
  DenseView<const V> cview() const { return {view.data, view.rows, view.cols, view.ld, view.order}; }
};

template <typename V>
Dense<V> make_dense(int64_t rows, int64_t cols, sparsetc_order_t order, int64_t pad,
                    const std::vector<double>* row_major) {
  Dense<V> d;
  const int64_t ld = std::max<int64_t>(1, (order == SPARSETC_ORDER_ROW ? cols : rows) + pad);
  const int64_t lines = order == SPARSETC_ORDER_ROW ? rows : cols;
  d.buffer.assign(size_t(ld * lines), std::numeric_limits<V>::quiet_NaN());
  d.view = {d.buffer.data(), rows, cols, ld, order};
  if (row_major)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) d.view.at(i, j) = V((*row_major)[size_t(i * cols + j)]);
  return d;
}

template <typename V>
std::vector<double> read_row_major(const Dense<V>& d) {
  std::vector<double> out;
  for (int64_t i = 0; i < d.view.rows; ++i)
    for (int64_t j = 0; j < d.view.cols; ++j) out.push_back(double(d.view.at(i, j)));
  return out;
}

// Every buffer element outside the logical matrix is still NaN.
template <typename V>
bool padding_untouched(const Dense<V>& d) {
  const bool row = d.view.order == SPARSETC_ORDER_ROW;
  const int64_t inner = row ? d.view.cols : d.view.rows;
  for (size_t k = 0; k < d.buffer.size(); ++k)
    if (int64_t(k) % d.view.ld >= inner && !std::isnan(d.buffer[k])) return false;
  return true;
}

// Values exactly representable in V, uniform in [-1, 1].
template <typename V>
std::vector<double> random_values(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = double(V(u(rng)));
  return v;
}

template <typename V>
double tolerance() {
  return std::is_same_v<V, double> ? 1e-13 : 1e-5;
}

struct Shape {
  int64_t m, k, n;  // op(A) is m x k, B is k x n
  double density;
};

const Shape kShapes[] = {{1, 1, 1, 1.0},  {0, 5, 3, 0.5},   {5, 0, 3, 0.5},     {4, 6, 0, 0.5},
                         {37, 23, 5, 0.2}, {64, 80, 17, 0.05}, {50, 40, 8, 0.0}, {120, 150, 33, 0.03},
                         {3, 400, 4, 0.3}, {1, 7, 1, 1.0},   {90, 60, 64, 0.1}};

struct Scalars {
  double alpha, beta;
};
const Scalars kScalars[] = {{1, 0}, {2.5, -0.5}, {0, 1.5}, {0, 0}, {-1, 1}};

// One shape, every layout pair, padding and alpha/beta combination, against the reference.
template <typename V>
void check_against_reference(const Shape& s, sparsetc_operation_t op, int threads) {
  const bool transpose = op == SPARSETC_OP_TRANSPOSE;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << " op(A) " << s.m << "x" << s.k << " n " << s.n
                                  << " density " << s.density << " op " << op);
  // A is stored so that op(A) is m x k.
  const Triplets stored = transpose ? sparsetc_test::random_triplets(s.k, s.m, s.density, seed)
                                    : sparsetc_test::random_triplets(s.m, s.k, s.density, seed);
  const CsrMatrix<V> A = csr_of<V>(stored);
  const Triplets opA = as_seen<V>(stored, transpose, false), opA_abs = as_seen<V>(stored, transpose, true);
  std::mt19937_64 rng(seed ^ 0x5bd1e995);
  const std::vector<double> B = random_values<V>(size_t(s.k * s.n), rng);
  const std::vector<double> C0 = random_values<V>(size_t(s.m * s.n), rng);
  std::vector<double> B_abs(B), C0_abs(C0);
  for (double& x : B_abs) x = std::fabs(x);
  for (double& x : C0_abs) x = std::fabs(x);

  for (const Scalars& sc : kScalars) {
    const V alpha = V(sc.alpha), beta = V(sc.beta);
    const std::vector<double> want = sparsetc_test::reference_spmm(opA, B, s.n, sc.alpha, sc.beta, C0);
    const std::vector<double> bound =
        sparsetc_test::reference_spmm(opA_abs, B_abs, s.n, std::fabs(sc.alpha), std::fabs(sc.beta), C0_abs);
    for (sparsetc_order_t b_order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
      for (sparsetc_order_t c_order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
        for (int64_t pad : {0, 3}) {
          SCOPED_TRACE(testing::Message() << "alpha " << sc.alpha << " beta " << sc.beta << " B order " << b_order
                                          << " C order " << c_order << " pad " << pad);
          const Dense<V> Bd = make_dense<V>(s.k, s.n, b_order, pad, &B);
          // beta == 0: C is all NaN and must not be read.
          Dense<V> Cd = make_dense<V>(s.m, s.n, c_order, pad, sc.beta == 0 ? nullptr : &C0);
          sparsetc::detail::cpu_spmm<V>(A, op, Bd.cview(), Cd.view, alpha, beta, threads);
          const std::vector<double> got = read_row_major(Cd);
          ASSERT_EQ(got.size(), want.size());
          for (size_t e = 0; e < want.size(); ++e) {
            ASSERT_TRUE(std::isfinite(got[e])) << "element " << e;
            ASSERT_LE(std::fabs(got[e] - want[e]), tolerance<V>() * bound[e] + 1e-300)
                << "element " << e << " got " << got[e] << " want " << want[e];
          }
          // Normwise too, but against sum |a||b| rather than |C|: a product that cancels (a 1x7
          // times 7x1 with beta != 0, say) has no relative-error bound of its own.
          double err2 = 0, bound2 = 0;
          for (size_t e = 0; e < want.size(); ++e) {
            err2 += (got[e] - want[e]) * (got[e] - want[e]);
            bound2 += bound[e] * bound[e];
          }
          EXPECT_LE(std::sqrt(err2), tolerance<V>() * std::sqrt(bound2) + 1e-300);
          EXPECT_TRUE(padding_untouched(Cd));
          EXPECT_TRUE(padding_untouched(Bd));
        }
  }
}

TEST(CpuSpmm, MatchesReferenceDouble) {
  for (const Shape& s : kShapes) check_against_reference<double>(s, SPARSETC_OP_NON_TRANSPOSE, 2);
}

TEST(CpuSpmm, MatchesReferenceFloat) {
  for (const Shape& s : kShapes) check_against_reference<float>(s, SPARSETC_OP_NON_TRANSPOSE, 2);
}

TEST(CpuSpmm, TransposeMatchesReferenceDouble) {
  for (const Shape& s : kShapes) check_against_reference<double>(s, SPARSETC_OP_TRANSPOSE, 2);
}

TEST(CpuSpmm, TransposeMatchesReferenceFloat) {
  for (const Shape& s : kShapes) check_against_reference<float>(s, SPARSETC_OP_TRANSPOSE, 3);
}

TEST(CpuSpmm, SingleThreadMatchesReference) {
  check_against_reference<double>({70, 45, 9, 0.1}, SPARSETC_OP_NON_TRANSPOSE, 1);
  check_against_reference<double>({70, 45, 9, 0.1}, SPARSETC_OP_TRANSPOSE, 1);
}

// Skewed rows: a few dense rows among sparse ones, and empty rows.
Triplets skewed_triplets(int64_t rows, int64_t cols, uint64_t seed) {
  Triplets t = sparsetc_test::random_triplets(rows, cols, 0.004, seed);
  std::mt19937_64 rng(seed + 1);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (int64_t r = 0; r < rows; r += 97)
    for (int64_t j = 0; j < cols; j += 1 + int64_t(rng() % 3)) t.entries[{r, j}] = (rng() % 2 ? 1 : -1) * u(rng);
  return t;
}

template <typename V>
void check_reproducible(sparsetc_operation_t op) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << " op " << op);
  const CsrMatrix<V> A = csr_of<V>(skewed_triplets(1500, 1100, seed));
  const int64_t m = op == SPARSETC_OP_TRANSPOSE ? A.cols : A.rows, k = op == SPARSETC_OP_TRANSPOSE ? A.rows : A.cols;
  const int64_t n = 13;
  std::mt19937_64 rng(seed);
  const std::vector<double> B = random_values<V>(size_t(k * n), rng), C0 = random_values<V>(size_t(m * n), rng);
  for (sparsetc_order_t b_order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
    for (sparsetc_order_t c_order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL}) {
      const Dense<V> Bd = make_dense<V>(k, n, b_order, 1, &B);
      std::vector<std::vector<V>> results;
      for (int threads : {1, 2, 7}) {
        Dense<V> Cd = make_dense<V>(m, n, c_order, 2, &C0);
        sparsetc::detail::cpu_spmm<V>(A, op, Bd.cview(), Cd.view, V(1.25), V(-0.75), threads);
        results.push_back(Cd.buffer);
      }
      for (size_t r = 1; r < results.size(); ++r)
        EXPECT_EQ(0, std::memcmp(results[0].data(), results[r].data(), results[0].size() * sizeof(V)))
            << "B order " << b_order << " C order " << c_order << " run " << r;
    }
}

TEST(CpuSpmm, BitwiseReproducibleAcrossThreadCounts) {
  check_reproducible<double>(SPARSETC_OP_NON_TRANSPOSE);
  check_reproducible<double>(SPARSETC_OP_TRANSPOSE);
  check_reproducible<float>(SPARSETC_OP_NON_TRANSPOSE);
  check_reproducible<float>(SPARSETC_OP_TRANSPOSE);
}

TEST(CpuSpmm, AlphaZeroDoesNotReadB) {
  const CsrMatrix<double> A = csr_of<double>(sparsetc_test::random_triplets(6, 5, 0.5, sparsetc_test::fresh_seed()));
  Dense<double> Bd = make_dense<double>(5, 4, SPARSETC_ORDER_ROW, 0, nullptr);  // all NaN
  const std::vector<double> C0(24, 2.0);
  Dense<double> Cd = make_dense<double>(6, 4, SPARSETC_ORDER_COL, 1, &C0);
  sparsetc::detail::cpu_spmm<double>(A, SPARSETC_OP_NON_TRANSPOSE, Bd.cview(), Cd.view, 0.0, 3.0, 2);
  for (double x : read_row_major(Cd)) EXPECT_EQ(x, 6.0);
  EXPECT_TRUE(padding_untouched(Cd));
}

// Throws and checks status and message.
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

TEST(CpuSpmm, ShapeErrors) {
  const CsrMatrix<double> A = csr_of<double>(sparsetc_test::random_triplets(5, 7, 0.3, sparsetc_test::fresh_seed()));
  Dense<double> B63 = make_dense<double>(6, 3, SPARSETC_ORDER_ROW, 0, nullptr);
  Dense<double> B73 = make_dense<double>(7, 3, SPARSETC_ORDER_ROW, 0, nullptr);
  Dense<double> B53 = make_dense<double>(5, 3, SPARSETC_ORDER_COL, 0, nullptr);
  Dense<double> C53 = make_dense<double>(5, 3, SPARSETC_ORDER_ROW, 0, nullptr);
  Dense<double> C43 = make_dense<double>(4, 3, SPARSETC_ORDER_ROW, 0, nullptr);
  Dense<double> C54 = make_dense<double>(5, 4, SPARSETC_ORDER_COL, 0, nullptr);
  Dense<double> C73 = make_dense<double>(7, 3, SPARSETC_ORDER_COL, 0, nullptr);
  using sparsetc::detail::cpu_spmm;
  const auto N = SPARSETC_OP_NON_TRANSPOSE, T = SPARSETC_OP_TRANSPOSE;
  expect_error([&] { cpu_spmm<double>(A, N, B63.cview(), C53.view, 1.0, 0.0, 2); },
               SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A) is 5x7 but B is 6x3");
  expect_error([&] { cpu_spmm<double>(A, N, B73.cview(), C43.view, 1.0, 0.0, 2); },
               SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A)*B is 5x3 but C is 4x3");
  expect_error([&] { cpu_spmm<double>(A, N, B73.cview(), C54.view, 1.0, 0.0, 2); },
               SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A)*B is 5x3 but C is 5x4");
  expect_error([&] { cpu_spmm<double>(A, T, B73.cview(), C73.view, 1.0, 0.0, 2); },
               SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A) is 7x5 but B is 7x3");
  expect_error([&] { cpu_spmm<double>(A, T, B53.cview(), C53.view, 1.0, 0.0, 2); },
               SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A)*B is 7x3 but C is 5x3");
  // Leading dimension below the minimum, unknown operation and order.
  DenseView<const double> bad_ld = B73.cview();
  bad_ld.ld = 2;
  expect_error([&] { cpu_spmm<double>(A, N, bad_ld, C53.view, 1.0, 0.0, 2); }, SPARSETC_STATUS_INVALID_VALUE,
               "leading dimension");
  DenseView<double> bad_c_ld = C53.view;
  bad_c_ld.order = SPARSETC_ORDER_COL;
  bad_c_ld.ld = 4;
  expect_error([&] { cpu_spmm<double>(A, N, B73.cview(), bad_c_ld, 1.0, 0.0, 2); }, SPARSETC_STATUS_INVALID_VALUE,
               "leading dimension");
  expect_error([&] { cpu_spmm<double>(A, sparsetc_operation_t(2), B73.cview(), C53.view, 1.0, 0.0, 2); },
               SPARSETC_STATUS_INVALID_VALUE, "operation");
  DenseView<const double> bad_order = B73.cview();
  bad_order.order = sparsetc_order_t(0);
  expect_error([&] { cpu_spmm<double>(A, N, bad_order, C53.view, 1.0, 0.0, 2); }, SPARSETC_STATUS_INVALID_VALUE,
               "order");
}

// A 2D 5-point Laplacian: integer values, so every result is exact in double.
TEST(CpuSpmm, PoissonExact) {
  const int64_t g = 60, n = g * g, nb = 8;
  CsrMatrix<double> A;
  A.rows = A.cols = n;
  A.row_ptr.assign(1, 0);
  for (int64_t y = 0; y < g; ++y)
    for (int64_t x = 0; x < g; ++x) {
      const int64_t i = y * g + x;
      if (y > 0) A.col_idx.push_back(i - g), A.values.push_back(-1);
      if (x > 0) A.col_idx.push_back(i - 1), A.values.push_back(-1);
      A.col_idx.push_back(i), A.values.push_back(4);
      if (x < g - 1) A.col_idx.push_back(i + 1), A.values.push_back(-1);
      if (y < g - 1) A.col_idx.push_back(i + g), A.values.push_back(-1);
      A.row_ptr.push_back(int64_t(A.col_idx.size()));
    }
  std::vector<double> B(size_t(n * nb));
  for (size_t e = 0; e < B.size(); ++e) B[e] = double(int64_t(e % 17) - 8);
  for (sparsetc_operation_t op : {SPARSETC_OP_NON_TRANSPOSE, SPARSETC_OP_TRANSPOSE}) {
    const Dense<double> Bd = make_dense<double>(n, nb, SPARSETC_ORDER_ROW, 0, &B);
    Dense<double> Cd = make_dense<double>(n, nb, SPARSETC_ORDER_COL, 0, nullptr);
    sparsetc::detail::cpu_spmm<double>(A, op, Bd.cview(), Cd.view, 1.0, 0.0, 2);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < nb; ++j) {
        double want = 0;
        for (int64_t p = A.row_ptr[size_t(i)]; p < A.row_ptr[size_t(i + 1)]; ++p)
          want += A.values[size_t(p)] * B[size_t(A.col_idx[size_t(p)] * nb + j)];
        ASSERT_EQ(Cd.view.at(i, j), want) << i << ", " << j;  // A is symmetric: A^T B = A B
      }
  }
}

}  // namespace

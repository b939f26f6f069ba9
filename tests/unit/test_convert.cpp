// formats/convert: every conversion against an independent construction from Triplets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "formats/convert.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using namespace sparsetc::detail;
using sparsetc_test::fresh_seed;
using sparsetc_test::random_triplets;
using sparsetc_test::Triplets;

using sparsetc_test::csr_of;  // the CSR a conversion must produce: the triplets' own, values rounded

// Entries sorted by (column, row), built straight from the map.
template <typename V>
CscMatrix<V> expected_csc(const Triplets& t) {
  std::map<std::pair<int64_t, int64_t>, double> by_col;
  for (const auto& [rc, v] : t.entries) by_col[{rc.second, rc.first}] = v;
  CscMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.col_ptr.assign(size_t(t.cols + 1), 0);
  for (const auto& [cr, v] : by_col) {
    m.col_ptr[size_t(cr.first + 1)]++;
    m.row_idx.push_back(cr.second);
    m.values.push_back(V(v));
  }
  for (int64_t j = 0; j < t.cols; ++j) m.col_ptr[size_t(j + 1)] += m.col_ptr[size_t(j)];
  return m;
}

Triplets transposed(const Triplets& t) {
  Triplets r{t.cols, t.rows, {}};
  for (const auto& [rc, v] : t.entries) r.entries[{rc.second, rc.first}] = v;
  return r;
}

// The entries in a random order.
template <typename V>
CooMatrix<V> shuffled_coo(const Triplets& t, uint64_t seed) {
  std::vector<std::tuple<int64_t, int64_t, double>> e;
  for (const auto& [rc, v] : t.entries) e.emplace_back(rc.first, rc.second, v);
  std::mt19937_64 rng(seed);
  std::shuffle(e.begin(), e.end(), rng);
  CooMatrix<V> coo;
  coo.rows = t.rows;
  coo.cols = t.cols;
  for (const auto& [r, c, v] : e) {
    coo.row_idx.push_back(r);
    coo.col_idx.push_back(c);
    coo.values.push_back(V(v));
  }
  return coo;
}

template <typename V>
void expect_same(const CsrMatrix<V>& got, const CsrMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_EQ(got.values, want.values);
}
template <typename V>
void expect_same(const CscMatrix<V>& got, const CscMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.col_ptr, want.col_ptr);
  EXPECT_EQ(got.row_idx, want.row_idx);
  EXPECT_EQ(got.values, want.values);
}

template <typename F>
void expect_error(F&& f, sparsetc_status_t status, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
  }
}

// Shapes that stress the edges: empty, single row/column, empty rows and columns, nnz = 0,
// explicit zeros, and a larger one for the parallel paths.
std::vector<Triplets> test_matrices() {
  std::vector<Triplets> m;
  m.push_back(Triplets{0, 0, {}});
  m.push_back(Triplets{0, 7, {}});
  m.push_back(Triplets{5, 0, {}});
  m.push_back(Triplets{6, 4, {}});  // nnz = 0
  m.push_back(random_triplets(1, 50, 0.3, fresh_seed()));
  m.push_back(random_triplets(50, 1, 0.3, fresh_seed(), false));
  m.push_back(random_triplets(1, 1, 1.0, fresh_seed(), false));
  m.push_back(random_triplets(40, 60, 0.05, fresh_seed()));  // empty rows and columns
  m.push_back(random_triplets(100, 100, 0.3, fresh_seed()));
  m.push_back(random_triplets(3000, 1200, 0.004, fresh_seed()));
  m.push_back(random_triplets(1500, 30, 0.5, fresh_seed()));
  Triplets zeros = random_triplets(30, 30, 0.2, fresh_seed());
  zeros.entries[{0, 0}] = 0.0;  // explicit zeros survive every sparse conversion
  zeros.entries[{29, 29}] = -0.0;
  m.push_back(zeros);
  return m;
}

template <typename V>
class Convert : public testing::Test {};
using ValueTypes = testing::Types<float, double>;
TYPED_TEST_SUITE(Convert, ValueTypes);

TYPED_TEST(Convert, CooToCsrSorts) {
  using V = TypeParam;
  for (const Triplets& t : test_matrices()) {
    SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " nnz " << t.entries.size());
    const CooMatrix<V> coo = shuffled_coo<V>(t, fresh_seed());
    for (auto dup : {SPARSETC_DUPLICATES_ERROR, SPARSETC_DUPLICATES_SUM}) expect_same(coo_to_csr(coo, dup), csr_of<V>(t));
  }
}

TYPED_TEST(Convert, CooToCsrSumsDuplicatesInInputOrder) {
  using V = TypeParam;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> row(0, 29), col(0, 19);
  std::uniform_real_distribution<double> value(-1, 1);
  CooMatrix<V> coo;
  coo.rows = 30;
  coo.cols = 20;
  std::map<std::pair<int64_t, int64_t>, V> sum;  // accumulated in input order, in V
  for (int k = 0; k < 3000; ++k) {
    const int64_t r = row(rng), c = col(rng);
    const V v = V(value(rng));
    coo.row_idx.push_back(r);
    coo.col_idx.push_back(c);
    coo.values.push_back(v);
    auto it = sum.find({r, c});
    if (it == sum.end()) sum[{r, c}] = v;
    else it->second += v;
  }
  const CsrMatrix<V> csr = coo_to_csr(coo, SPARSETC_DUPLICATES_SUM);
  Triplets t{30, 20, {}};
  for (const auto& [rc, v] : sum) t.entries[rc] = double(v);
  expect_same(csr, csr_of<V>(t));  // exact: the same additions in the same order
  EXPECT_THROW(coo_to_csr(coo, SPARSETC_DUPLICATES_ERROR), Error);
}

TYPED_TEST(Convert, CooToCsrDuplicateError) {
  using V = TypeParam;
  CooMatrix<V> coo;
  coo.rows = 5;
  coo.cols = 8;
  // (3,5) repeats at entry 2, before (1,1) repeats at entry 3: the input order decides.
  coo.row_idx = {3, 1, 3, 1, 0};
  coo.col_idx = {5, 1, 5, 1, 0};
  coo.values = {1, 2, 3, 4, 5};
  expect_error([&] { coo_to_csr(coo, SPARSETC_DUPLICATES_ERROR); }, SPARSETC_STATUS_DUPLICATE_ENTRY,
               "duplicate entry (row 3, column 5) at entries 0 and 2");
  const CsrMatrix<V> sum = coo_to_csr(coo, SPARSETC_DUPLICATES_SUM);
  EXPECT_EQ(sum.row_ptr, (std::vector<int64_t>{0, 1, 2, 2, 3, 3}));
  EXPECT_EQ(sum.col_idx, (std::vector<int64_t>{0, 1, 5}));
  EXPECT_EQ(sum.values, (std::vector<V>{5, 6, 4}));
  EXPECT_THROW(coo_to_csr(coo, 2), Error);
}

TYPED_TEST(Convert, CooToCsrRejectsBadIndices) {
  using V = TypeParam;
  CooMatrix<V> coo;
  coo.rows = 4;
  coo.cols = 3;
  coo.row_idx = {0, 1, 4};
  coo.col_idx = {0, 1, 2};
  coo.values = {1, 2, 3};
  expect_error([&] { coo_to_csr(coo, SPARSETC_DUPLICATES_ERROR); }, SPARSETC_STATUS_INVALID_INDEX,
               "row index 4 out of range [0, 4) at entry 2");
  coo.row_idx = {0, 1, 2};
  coo.col_idx = {0, -1, 2};
  expect_error([&] { coo_to_csr(coo, SPARSETC_DUPLICATES_ERROR); }, SPARSETC_STATUS_INVALID_INDEX,
               "column index -1 out of range [0, 3) at entry 1 (row 1)");
  coo.values.pop_back();
  EXPECT_THROW(coo_to_csr(coo, SPARSETC_DUPLICATES_ERROR), Error);
}

TYPED_TEST(Convert, CsrToCooAndBack) {
  using V = TypeParam;
  for (const Triplets& t : test_matrices()) {
    SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " nnz " << t.entries.size());
    const CsrMatrix<V> csr = csr_of<V>(t);
    const CooMatrix<V> coo = csr_to_coo(csr);
    ASSERT_EQ(coo.nnz(), int64_t(t.entries.size()));
    EXPECT_EQ(coo.rows, t.rows);
    EXPECT_EQ(coo.cols, t.cols);
    size_t k = 0;
    for (const auto& [rc, v] : t.entries) {
      EXPECT_EQ(coo.row_idx[k], rc.first);
      EXPECT_EQ(coo.col_idx[k], rc.second);
      EXPECT_EQ(coo.values[k], V(v));
      ++k;
    }
    expect_same(coo_to_csr(coo, SPARSETC_DUPLICATES_ERROR), csr);  // coo -> csr -> coo -> csr
  }
}

TYPED_TEST(Convert, CsrToCscAndBack) {
  using V = TypeParam;
  for (const Triplets& t : test_matrices()) {
    SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " nnz " << t.entries.size());
    const CsrMatrix<V> csr = csr_of<V>(t);
    const CscMatrix<V> csc = csr_to_csc(csr);
    expect_same(csc, expected_csc<V>(t));
    expect_same(csc_to_csr(csc), csr);
    expect_same(csc_to_csr(expected_csc<V>(t)), csr);
  }
}

TYPED_TEST(Convert, Transpose) {
  using V = TypeParam;
  for (const Triplets& t : test_matrices()) {
    SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " nnz " << t.entries.size());
    const CsrMatrix<V> csr = csr_of<V>(t);
    const CsrMatrix<V> tr = transpose(csr);
    expect_same(tr, csr_of<V>(transposed(t)));
    expect_same(transpose(tr), csr);
  }
}

TYPED_TEST(Convert, Dense) {
  using V = TypeParam;
  for (const Triplets& t : test_matrices()) {
    SCOPED_TRACE(testing::Message() << t.rows << "x" << t.cols << " nnz " << t.entries.size());
    const CsrMatrix<V> csr = csr_of<V>(t);
    for (auto order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL}) {
      const DenseMatrix<V> dense = csr_to_dense(csr, order);
      ASSERT_EQ(dense.rows, t.rows);
      ASSERT_EQ(dense.cols, t.cols);
      ASSERT_EQ(dense.order, order);
      ASSERT_EQ(int64_t(dense.data.size()), t.rows * t.cols);
      std::vector<V> want(size_t(t.rows * t.cols), V(0));
      for (const auto& [rc, v] : t.entries)
        want[size_t(order == SPARSETC_ORDER_ROW ? rc.first * t.cols + rc.second : rc.first + rc.second * t.rows)] = V(v);
      EXPECT_EQ(dense.data, want);
      // Back: exact zeros (explicit ones too) are dropped.
      Triplets nonzero{t.rows, t.cols, {}};
      for (const auto& [rc, v] : t.entries)
        if (v != 0) nonzero.entries[rc] = v;
      expect_same(dense_to_csr(dense.view()), csr_of<V>(nonzero));
    }
  }
  EXPECT_THROW(csr_to_dense(csr_of<V>(Triplets{2, 2, {}}), 0), Error);
}

TYPED_TEST(Convert, DenseWithPaddingNaNAndNegativeZero) {
  using V = TypeParam;
  const V nan = std::numeric_limits<V>::quiet_NaN();
  // 2x3 row-major with ld 5: the padding holds garbage that must be ignored.
  std::vector<V> data = {1, 0, -0.0, 99, 99, 0, nan, 2, 99, 99};
  DenseView<const V> view{data.data(), 2, 3, 5, SPARSETC_ORDER_ROW};
  CsrMatrix<V> csr = dense_to_csr(view);
  EXPECT_EQ(csr.row_ptr, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(csr.col_idx, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(csr.values[0], V(1));
  EXPECT_TRUE(std::isnan(csr.values[1]));
  EXPECT_EQ(csr.values[2], V(2));
  // The same matrix column-major with ld 3.
  std::vector<V> col = {1, 0, 99, 0, nan, 99, -0.0, 2, 99};
  DenseView<const V> cview{col.data(), 2, 3, 3, SPARSETC_ORDER_COL};
  CsrMatrix<V> csr2 = dense_to_csr(cview);
  EXPECT_EQ(csr2.row_ptr, csr.row_ptr);
  EXPECT_EQ(csr2.col_idx, csr.col_idx);
  DenseView<const V> bad{data.data(), 2, 3, 2, SPARSETC_ORDER_ROW};
  EXPECT_THROW(dense_to_csr(bad), Error);
  DenseView<const V> null{nullptr, 2, 3, 3, SPARSETC_ORDER_ROW};
  EXPECT_THROW(dense_to_csr(null), Error);
  DenseView<const V> empty{nullptr, 0, 3, 0, SPARSETC_ORDER_ROW};
  EXPECT_EQ(dense_to_csr(empty).row_ptr, (std::vector<int64_t>{0}));
}

TEST(ConvertCast, AllCombinations) {
  const Triplets t = random_triplets(60, 40, 0.1, fresh_seed());
  const CsrMatrix<double> d = csr_of<double>(t);
  const CsrMatrix<float> f = csr_of<float>(t);
  expect_same(cast_values<double>(d), d);
  expect_same(cast_values<float>(f), f);
  expect_same(cast_values<float>(d), f);  // rounded to nearest, as float(v)
  const CsrMatrix<double> back = cast_values<double>(f);
  EXPECT_EQ(back.row_ptr, d.row_ptr);
  EXPECT_EQ(back.col_idx, d.col_idx);
  for (size_t k = 0; k < back.values.size(); ++k) EXPECT_EQ(back.values[k], double(f.values[k]));
  CsrMatrix<double> huge = d;
  if (!huge.values.empty()) {
    huge.values[0] = 1e300;
    EXPECT_THROW(cast_values<float>(huge), Error);
    huge.values[0] = std::numeric_limits<double>::infinity();
    EXPECT_EQ(cast_values<float>(huge).values[0], std::numeric_limits<float>::infinity());
  }
}

}  // namespace

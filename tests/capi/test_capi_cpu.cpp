// The C API end to end on the CPU backend: SpMM and SpGEMM on generated and real matrices against
// the naive float64 reference of test_support.hpp (which shares no code with the library).
#include <cmath>
#include <random>

#include "capi_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

// Reads a library matrix back as triplets (via a zero-based int64/f64 CSR copy).
Triplets triplets_of(sparsetc_handle_t h, sparsetc_matrix_t m) {
  sparsetc_matrix_t csr = nullptr;
  EXPECT_OK(h, sparsetc_matrix_convert(h, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                       SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &csr));
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_OK(h, sparsetc_matrix_get_info(csr, &info));
  void *p = nullptr, *c = nullptr, *v = nullptr;
  EXPECT_OK(h, sparsetc_matrix_get_arrays(csr, &p, &c, &v));
  Triplets t{info.rows, info.cols, {}};
  for (int64_t i = 0; i < info.rows; ++i)
    for (int64_t e = static_cast<int64_t*>(p)[i]; e < static_cast<int64_t*>(p)[i + 1]; ++e)
      t.entries[{i, static_cast<int64_t*>(c)[e]}] = static_cast<double*>(v)[e];
  sparsetc_matrix_destroy(csr);
  return t;
}

class EndToEnd : public CapiTest {
 protected:
  void check_spmm(sparsetc_matrix_t A, int64_t n, sparsetc_order_t order) {
    Triplets t = triplets_of(h_, A);
    std::mt19937_64 rng(fresh_seed());
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> B(size_t(t.cols * n)), C0(size_t(t.rows * n));
    for (auto& x : B) x = u(rng);
    for (auto& x : C0) x = u(rng);
    const double alpha = 0.75, beta = -0.5;
    auto want = reference_spmm(t, B, n, alpha, beta, C0);
    // Lay B and C out in the requested order.
    std::vector<double> b(B.size()), c(C0.size());
    for (int64_t i = 0; i < t.cols; ++i)
      for (int64_t j = 0; j < n; ++j)
        b[size_t(order == SPARSETC_ORDER_ROW ? i * n + j : i + j * t.cols)] = B[size_t(i * n + j)];
    for (int64_t i = 0; i < t.rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[size_t(order == SPARSETC_ORDER_ROW ? i * n + j : i + j * t.rows)] = C0[size_t(i * n + j)];
    sparsetc_dense_t Bd = nullptr, Cd = nullptr;
    ASSERT_OK(h_, sparsetc_dense_create(h_, &Bd, t.cols, n, order == SPARSETC_ORDER_ROW ? n : t.cols, b.data(),
                                        SPARSETC_VALUE_F64, order, SPARSETC_MEMORY_HOST));
    ASSERT_OK(h_, sparsetc_dense_create(h_, &Cd, t.rows, n, order == SPARSETC_ORDER_ROW ? n : t.rows, c.data(),
                                        SPARSETC_VALUE_F64, order, SPARSETC_MEMORY_HOST));
    ASSERT_OK(h_, sparsetc_spmm(h_, SPARSETC_OP_NON_TRANSPOSE, alpha, A, Bd, beta, Cd, SPARSETC_COMPUTE_64F,
                                SPARSETC_SPMM_ALG_AUTO));
    std::vector<double> got(c.size());
    for (int64_t i = 0; i < t.rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        got[size_t(i * n + j)] = c[size_t(order == SPARSETC_ORDER_ROW ? i * n + j : i + j * t.rows)];
    EXPECT_LT(relative_error(got, want), 1e-13);
    sparsetc_dense_destroy(Bd);
    sparsetc_dense_destroy(Cd);
  }

  void check_spgemm(sparsetc_matrix_t A, sparsetc_matrix_t B, sparsetc_operation_t op_b = SPARSETC_OP_NON_TRANSPOSE) {
    Triplets ta = triplets_of(h_, A), tb = triplets_of(h_, B);
    if (op_b == SPARSETC_OP_TRANSPOSE) {
      Triplets t{tb.cols, tb.rows, {}};
      for (const auto& [rc, v] : tb.entries) t.entries[{rc.second, rc.first}] = v;
      tb = t;
    }
    Triplets want = reference_spgemm(ta, tb);
    sparsetc_matrix_t C = nullptr;
    ASSERT_OK(h_, sparsetc_spgemm(h_, SPARSETC_OP_NON_TRANSPOSE, A, op_b, B, SPARSETC_COMPUTE_64F,
                                  SPARSETC_SPGEMM_ALG_AUTO, &C));
    Triplets got = triplets_of(h_, C);
    ASSERT_EQ(got.entries.size(), want.entries.size());
    auto g = got.entries.begin();
    for (const auto& [rc, value] : want.entries) {
      ASSERT_EQ(g->first, rc);
      EXPECT_NEAR(g->second, value, 1e-12 * (1 + std::fabs(value)));
      ++g;
    }
    sparsetc_matrix_destroy(C);
  }
};

TEST_F(EndToEnd, GeneratedMatrices) {
  for (const char* spec : {"band:300:7", "poisson2d5:20", "poisson3d27:6", "rmat:9:8", "uniform:400:5:350",
                           "blocks:256:16:0.2:0.5"}) {
    SCOPED_TRACE(spec);
    sparsetc_matrix_t A = nullptr;
    ASSERT_OK(h_, sparsetc_matrix_generate(h_, spec, fresh_seed(), SPARSETC_VALUE_F64, &A));
    check_spmm(A, 13, SPARSETC_ORDER_ROW);
    check_spmm(A, 5, SPARSETC_ORDER_COL);
    // A * A^T (defined for rectangular A too), with the second operand stored as one-based CSC.
    sparsetc_matrix_t csc = nullptr;
    ASSERT_OK(h_, sparsetc_matrix_convert(h_, A, SPARSETC_FORMAT_CSC, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                          SPARSETC_BASE_ONE, SPARSETC_VALUE_F64, &csc));
    check_spgemm(A, csc, SPARSETC_OP_TRANSPOSE);
    sparsetc_matrix_destroy(csc);
    sparsetc_matrix_destroy(A);
  }
}

TEST_F(EndToEnd, RealMatrices) {
  int found = 0;
  for (const char* name : {"bcsstk01", "west0479", "lp_afiro", "can_1072", "3elt", "Erdos971"}) {
    const std::string path = matrix_path(name);
    if (path.empty()) continue;
    SCOPED_TRACE(name);
    ++found;
    sparsetc_matrix_t A = nullptr;
    ASSERT_OK(h_, sparsetc_matrix_read_mtx(h_, path.c_str(), SPARSETC_VALUE_F64, SPARSETC_INDEX_32, &A));
    check_spmm(A, 16, SPARSETC_ORDER_ROW);
    sparsetc_matrix_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_OK(h_, sparsetc_matrix_get_info(A, &info));
    if (info.rows == info.cols) check_spgemm(A, A);
    sparsetc_matrix_destroy(A);
  }
  if (!found) GTEST_SKIP() << "no matrices in " << matrix_dir();
}

TEST_F(EndToEnd, MixedPrecisionOnTheCpuReportsItsError) {
  sparsetc_matrix_t A = nullptr, A16 = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_generate(h_, "poisson2d5:16", fresh_seed(), SPARSETC_VALUE_F64, &A));
  ASSERT_OK(h_, sparsetc_matrix_convert(h_, A, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                        SPARSETC_BASE_ZERO, SPARSETC_VALUE_F16, &A16));
  Triplets t = triplets_of(h_, A);
  const int64_t n = 8;
  std::vector<double> B(size_t(t.cols * n), 0.25), zero(size_t(t.rows * n), 0.0);
  auto want = reference_spmm(t, B, n, 1.0, 0.0, zero);
  std::vector<uint16_t> b16(B.size(), 0x3400);  // 0.25 in fp16
  std::vector<float> c(zero.size(), NAN);
  sparsetc_dense_t Bd = nullptr, Cd = nullptr;
  ASSERT_OK(h_, sparsetc_dense_create(h_, &Bd, t.cols, n, n, b16.data(), SPARSETC_VALUE_F16, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  ASSERT_OK(h_, sparsetc_dense_create(h_, &Cd, t.rows, n, n, c.data(), SPARSETC_VALUE_F32, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  ASSERT_OK(h_, sparsetc_spmm(h_, SPARSETC_OP_NON_TRANSPOSE, 1.0, A16, Bd, 0.0, Cd, SPARSETC_COMPUTE_32F,
                              SPARSETC_SPMM_ALG_AUTO));
  std::vector<double> got(c.begin(), c.end());
  const double error = relative_error(got, want);
  // fp16 values of A (11-bit significands) bound the error near 2^-11.
  EXPECT_LT(error, 1e-3);
  EXPECT_GT(error, 0.0);  // the rounding to fp16 is real, so an exact match would mean fp16 was skipped
  RecordProperty("fp16_relative_error", std::to_string(error));
  sparsetc_dense_destroy(Bd);
  sparsetc_dense_destroy(Cd);
  sparsetc_matrix_destroy(A16);
  sparsetc_matrix_destroy(A);
}

TEST_F(EndToEnd, SpgemmNumericReuseFollowsNewValues) {
  sparsetc_matrix_t A = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_generate(h_, "poisson3d7:6", fresh_seed(), SPARSETC_VALUE_F64, &A));
  sparsetc_spgemm_plan_t plan = nullptr;
  ASSERT_OK(h_, sparsetc_spgemm_plan_create(h_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                            SPARSETC_COMPUTE_64F, SPARSETC_SPGEMM_ALG_AUTO, nullptr));
  int64_t nnz = 0;
  ASSERT_OK(h_, sparsetc_spgemm_symbolic(plan, &nnz));
  sparsetc_matrix_t C = nullptr;
  ASSERT_OK(h_, sparsetc_spgemm_numeric(plan, &C));
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_OK(h_, sparsetc_matrix_get_info(A, &info));
  std::vector<double> fresh(size_t(info.nnz));
  std::mt19937_64 rng(fresh_seed());
  for (auto& x : fresh) x = std::uniform_real_distribution<double>(-2, 2)(rng);
  ASSERT_OK(h_, sparsetc_matrix_set_values(h_, A, fresh.data()));
  sparsetc_matrix_t same = C;
  ASSERT_OK(h_, sparsetc_spgemm_numeric(plan, &C));
  EXPECT_EQ(C, same);  // values overwritten in place
  Triplets ta = triplets_of(h_, A);
  Triplets want = reference_spgemm(ta, ta), got = triplets_of(h_, C);
  ASSERT_EQ(got.entries.size(), want.entries.size());
  auto g = got.entries.begin();
  for (const auto& [rc, value] : want.entries) {
    EXPECT_EQ(g->first, rc);
    EXPECT_NEAR(g->second, value, 1e-12 * (1 + std::fabs(value)));
    ++g;
  }
  sparsetc_spgemm_plan_destroy(plan);
  sparsetc_matrix_destroy(C);
  sparsetc_matrix_destroy(A);
}

}  // namespace

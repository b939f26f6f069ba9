// Row reordering through the C API (CPU backend): a multiply on a reordered matrix gives exactly
// the original's result (SpMM both ops, SpGEMM with either or both operands reordered), the
// permutation and groups read back, composition, sparsetc_matrix_permute_rows and its validation,
// option checks, AUTO, and the quality report.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "capi_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> ptr;
  std::vector<int64_t> col;
  std::vector<double> val;
};

// A matrix's stored arrays as zero-based int64 / f64 (through sparsetc_matrix_convert, which
// keeps the stored row order).
Csr stored(sparsetc_handle_t h, sparsetc_matrix_t m) {
  sparsetc_matrix_t csr = nullptr;
  EXPECT_OK(h, sparsetc_matrix_convert(h, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                       SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &csr));
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_OK(h, sparsetc_matrix_get_info(csr, &info));
  void *p = nullptr, *c = nullptr, *v = nullptr;
  EXPECT_OK(h, sparsetc_matrix_get_arrays(csr, &p, &c, &v));
  Csr out{info.rows, info.cols, {}, {}, {}};
  out.ptr.assign(static_cast<int64_t*>(p), static_cast<int64_t*>(p) + info.rows + 1);
  out.col.assign(static_cast<int64_t*>(c), static_cast<int64_t*>(c) + info.nnz);
  out.val.assign(static_cast<double*>(v), static_cast<double*>(v) + info.nnz);
  sparsetc_matrix_destroy(csr);
  return out;
}

std::vector<int64_t> permutation_of(sparsetc_matrix_t m, int64_t rows) {
  std::vector<int64_t> perm(static_cast<size_t>(rows), -1);
  EXPECT_EQ(sparsetc_matrix_get_permutation(m, perm.data(), nullptr, nullptr), SPARSETC_STATUS_SUCCESS);
  return perm;
}

class ReorderCapi : public CapiTest {
 protected:
  sparsetc_matrix_t generate(const char* spec, sparsetc_value_type_t type = SPARSETC_VALUE_F64) {
    sparsetc_matrix_t A = nullptr;
    EXPECT_OK(h_, sparsetc_matrix_generate(h_, spec, fresh_seed(), type, &A));
    return A;
  }

  sparsetc_matrix_t reorder(sparsetc_matrix_t A, sparsetc_reorder_method_t method,
                            const sparsetc_reorder_options_t* options = nullptr) {
    sparsetc_matrix_t R = nullptr;
    EXPECT_OK(h_, sparsetc_matrix_reorder(h_, A, method, options, &R));
    return R;
  }

  // C = alpha op(M) B + beta C0 through the C API, returned row-major.
  std::vector<double> spmm(sparsetc_matrix_t M, sparsetc_operation_t op, const std::vector<double>& B,
                           const std::vector<double>& C0, int64_t m, int64_t k, int64_t n, sparsetc_order_t order,
                           sparsetc_value_type_t type) {
    auto lay = [&](const std::vector<double>& rowmajor, int64_t rows) {
      std::vector<double> out(rowmajor.size());
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j)
          out[size_t(order == SPARSETC_ORDER_ROW ? i * n + j : i + j * rows)] = rowmajor[size_t(i * n + j)];
      return out;
    };
    std::vector<double> b = lay(B, k), c = lay(C0, m);
    std::vector<float> bf(b.begin(), b.end()), cf(c.begin(), c.end());
    const bool f32 = type == SPARSETC_VALUE_F32;
    sparsetc_dense_t Bd = nullptr, Cd = nullptr;
    EXPECT_OK(h_, sparsetc_dense_create(h_, &Bd, k, n, order == SPARSETC_ORDER_ROW ? n : k,
                                        f32 ? static_cast<void*>(bf.data()) : b.data(), type, order,
                                        SPARSETC_MEMORY_HOST));
    EXPECT_OK(h_, sparsetc_dense_create(h_, &Cd, m, n, order == SPARSETC_ORDER_ROW ? n : m,
                                        f32 ? static_cast<void*>(cf.data()) : c.data(), type, order,
                                        SPARSETC_MEMORY_HOST));
    EXPECT_OK(h_, sparsetc_spmm(h_, op, 0.75, M, Bd, -0.5, Cd, SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPMM_ALG_CPU));
    sparsetc_dense_destroy(Bd);
    sparsetc_dense_destroy(Cd);
    if (f32) std::copy(cf.begin(), cf.end(), c.begin());
    std::vector<double> out(c.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[size_t(i * n + j)] = c[size_t(order == SPARSETC_ORDER_ROW ? i * n + j : i + j * m)];
    return out;
  }

  // A reordered matrix multiplies exactly like the original: same bits (the CPU engine puts the
  // rows back in order before the arithmetic).
  void expect_same_spmm(sparsetc_matrix_t A, sparsetc_matrix_t R, sparsetc_value_type_t type) {
    sparsetc_matrix_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_OK(h_, sparsetc_matrix_get_info(A, &info));
    std::mt19937_64 rng(fresh_seed());
    std::uniform_real_distribution<double> u(-1, 1);
    for (sparsetc_operation_t op : {SPARSETC_OP_NON_TRANSPOSE, SPARSETC_OP_TRANSPOSE})
      for (sparsetc_order_t order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL}) {
        const int64_t m = op == SPARSETC_OP_NON_TRANSPOSE ? info.rows : info.cols;
        const int64_t k = op == SPARSETC_OP_NON_TRANSPOSE ? info.cols : info.rows;
        const int64_t n = 7;
        std::vector<double> B(size_t(k * n)), C0(size_t(m * n));
        for (auto& x : B) x = type == SPARSETC_VALUE_F32 ? double(float(u(rng))) : u(rng);
        for (auto& x : C0) x = type == SPARSETC_VALUE_F32 ? double(float(u(rng))) : u(rng);
        const auto want = spmm(A, op, B, C0, m, k, n, order, type);
        const auto got = spmm(R, op, B, C0, m, k, n, order, type);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_TRUE(std::memcmp(got.data(), want.data(), got.size() * sizeof(double)) == 0)
            << "op " << op << " order " << order << ": relative error " << relative_error(got, want);
      }
  }

  Csr product(sparsetc_operation_t op_a, sparsetc_matrix_t A, sparsetc_operation_t op_b, sparsetc_matrix_t B) {
    sparsetc_matrix_t C = nullptr;
    EXPECT_OK(h_, sparsetc_spgemm(h_, op_a, A, op_b, B, SPARSETC_COMPUTE_64F, SPARSETC_SPGEMM_ALG_CPU, &C));
    Csr out = stored(h_, C);
    sparsetc_matrix_destroy(C);
    return out;
  }

  void expect_same_csr(const Csr& got, const Csr& want, const std::string& what) {
    EXPECT_EQ(got.rows, want.rows) << what;
    EXPECT_EQ(got.ptr, want.ptr) << what;
    EXPECT_EQ(got.col, want.col) << what;
    ASSERT_EQ(got.val.size(), want.val.size()) << what;
    for (size_t e = 0; e < want.val.size(); ++e)
      ASSERT_NEAR(got.val[e], want.val[e], 1e-12 * (1 + std::abs(want.val[e]))) << what << " entry " << e;
  }

  // Stored row i of R is row perm[i] of A, and the groups partition the rows.
  void expect_consistent(sparsetc_matrix_t A, sparsetc_matrix_t R) {
    const Csr a = stored(h_, A), r = stored(h_, R);
    const std::vector<int64_t> perm = permutation_of(R, a.rows);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < a.rows; ++i) ASSERT_EQ(sorted[size_t(i)], i);
    for (int64_t i = 0; i < a.rows; ++i) {
      const int64_t o = perm[size_t(i)];
      ASSERT_EQ(r.ptr[size_t(i + 1)] - r.ptr[size_t(i)], a.ptr[size_t(o + 1)] - a.ptr[size_t(o)]) << "row " << i;
      for (int64_t e = 0; e < r.ptr[size_t(i + 1)] - r.ptr[size_t(i)]; ++e) {
        ASSERT_EQ(r.col[size_t(r.ptr[size_t(i)] + e)], a.col[size_t(a.ptr[size_t(o)] + e)]);
        ASSERT_EQ(r.val[size_t(r.ptr[size_t(i)] + e)], a.val[size_t(a.ptr[size_t(o)] + e)]);
      }
    }
    int64_t groups = -1;
    ASSERT_OK(h_, sparsetc_matrix_get_permutation(R, nullptr, &groups, nullptr));
    ASSERT_GT(groups, 0);
    std::vector<int64_t> ptr(size_t(groups + 1), -1);
    ASSERT_OK(h_, sparsetc_matrix_get_permutation(R, nullptr, &groups, ptr.data()));
    EXPECT_EQ(ptr.front(), 0);
    EXPECT_EQ(ptr.back(), a.rows);
    EXPECT_TRUE(std::is_sorted(ptr.begin(), ptr.end()));
  }
};

TEST_F(ReorderCapi, MultipliesGiveTheOriginalResult) {
  for (const char* spec : {"blocks:512:16:0.1:0.3", "rmat:9:8", "uniform:300:6:200", "band:200:3"}) {
    SCOPED_TRACE(spec);
    for (sparsetc_value_type_t type : {SPARSETC_VALUE_F64, SPARSETC_VALUE_F32}) {
      sparsetc_matrix_t A = generate(spec, type);
      for (sparsetc_reorder_method_t method :
           {SPARSETC_REORDER_ONE_SA, SPARSETC_REORDER_SA, SPARSETC_REORDER_AUTO, SPARSETC_REORDER_IDENTITY}) {
        SCOPED_TRACE(method);
        sparsetc_matrix_t R = reorder(A, method);
        expect_consistent(A, R);
        expect_same_spmm(A, R, type);
        sparsetc_matrix_destroy(R);
      }
      sparsetc_matrix_destroy(A);
    }
  }
}

TEST_F(ReorderCapi, SpgemmWithReorderedOperands) {
  for (const char* spec : {"blocks:256:16:0.2:0.3", "rmat:8:6", "uniform:150:5:150"}) {
    SCOPED_TRACE(spec);
    sparsetc_matrix_t A = generate(spec), B = generate(spec);
    sparsetc_reorder_options_t o{};
    o.struct_size = sizeof o;
    o.tau = 0.3;
    sparsetc_matrix_t RA = reorder(A, SPARSETC_REORDER_ONE_SA, &o), RB = reorder(B, SPARSETC_REORDER_SA, &o);
    for (sparsetc_operation_t op_a : {SPARSETC_OP_NON_TRANSPOSE, SPARSETC_OP_TRANSPOSE})
      for (sparsetc_operation_t op_b : {SPARSETC_OP_NON_TRANSPOSE, SPARSETC_OP_TRANSPOSE}) {
        const Csr want = product(op_a, A, op_b, B);
        expect_same_csr(product(op_a, RA, op_b, B), want, "reordered A");
        expect_same_csr(product(op_a, A, op_b, RB), want, "reordered B");
        expect_same_csr(product(op_a, RA, op_b, RB), want, "both reordered");
      }
    // A A^T with the same reordered matrix on both sides.
    expect_same_csr(product(SPARSETC_OP_NON_TRANSPOSE, RA, SPARSETC_OP_TRANSPOSE, RA),
                    product(SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_TRANSPOSE, A), "R R^T");
    for (auto m : {A, B, RA, RB}) sparsetc_matrix_destroy(m);
  }
}

TEST_F(ReorderCapi, ReorderingComposes) {
  sparsetc_matrix_t A = generate("blocks:512:8:0.1:0.4");
  sparsetc_reorder_options_t o{};
  o.struct_size = sizeof o;
  o.block_width = 4;
  sparsetc_matrix_t R1 = reorder(A, SPARSETC_REORDER_SA, &o);
  sparsetc_matrix_t R2 = reorder(R1, SPARSETC_REORDER_ONE_SA, &o);
  expect_consistent(A, R2);  // R2's permutation is relative to A's rows
  expect_same_spmm(A, R2, SPARSETC_VALUE_F64);
  // permute_rows on a reordered matrix composes as well.
  std::vector<int64_t> reverse(512);
  std::iota(reverse.rbegin(), reverse.rend(), int64_t(0));
  sparsetc_matrix_t P = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_permute_rows(h_, R2, reverse.data(), &P));
  expect_same_spmm(A, P, SPARSETC_VALUE_F64);
  const std::vector<int64_t> p2 = permutation_of(R2, 512), p = permutation_of(P, 512);
  for (int64_t i = 0; i < 512; ++i) EXPECT_EQ(p[size_t(i)], p2[size_t(reverse[size_t(i)])]);
  int64_t groups = -1;
  ASSERT_OK(h_, sparsetc_matrix_get_permutation(P, nullptr, &groups, nullptr));
  EXPECT_EQ(groups, 0);  // a caller's permutation carries no groups
  for (auto m : {A, R1, R2, P}) sparsetc_matrix_destroy(m);
}

TEST_F(ReorderCapi, PermuteRows) {
  sparsetc_matrix_t A = generate("uniform:6:2:9"), R = nullptr;
  const int64_t perm[6] = {5, 3, 1, 0, 2, 4};
  ASSERT_OK(h_, sparsetc_matrix_permute_rows(h_, A, perm, &R));
  EXPECT_EQ(permutation_of(R, 6), std::vector<int64_t>(perm, perm + 6));
  expect_same_spmm(A, R, SPARSETC_VALUE_F64);
  sparsetc_matrix_destroy(R);

  const int64_t repeated[6] = {5, 3, 1, 3, 2, 4};
  expect_failure(sparsetc_matrix_permute_rows(h_, A, repeated, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "permutation[3] = 3 repeats permutation[1]");
  EXPECT_EQ(R, nullptr);
  const int64_t outside[6] = {5, 3, 1, 0, 6, 4};
  expect_failure(sparsetc_matrix_permute_rows(h_, A, outside, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "permutation[4] = 6 is outside [0, 6)");
  const int64_t negative[6] = {5, 3, -1, 0, 2, 4};
  expect_failure(sparsetc_matrix_permute_rows(h_, A, negative, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "permutation[2] = -1");
  expect_failure(sparsetc_matrix_permute_rows(h_, A, nullptr, &R), SPARSETC_STATUS_NULL_POINTER, "permutation");
  expect_failure(sparsetc_matrix_permute_rows(h_, nullptr, perm, &R), SPARSETC_STATUS_NULL_POINTER, "A");
  expect_failure(sparsetc_matrix_permute_rows(h_, A, perm, nullptr), SPARSETC_STATUS_NULL_POINTER, "result");
  sparsetc_matrix_destroy(A);
}

TEST_F(ReorderCapi, RejectsBadArguments) {
  sparsetc_matrix_t A = generate("band:50:2"), R = nullptr;
  expect_failure(sparsetc_matrix_reorder(h_, A, 7, nullptr, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "unknown reordering method 7");
  sparsetc_reorder_options_t o{};
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_ONE_SA, &o, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "struct_size");
  o.struct_size = sizeof o;
  o.tau = 1.5;
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_ONE_SA, &o, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "options->tau");
  o.tau = 0;
  o.block_width = -8;
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_ONE_SA, &o, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "options->block_width");
  o.block_width = 0;
  o.pad_groups = 2;
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_ONE_SA, &o, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "options->pad_groups");
  o.pad_groups = 0;
  o.max_group_height = -1;
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_ONE_SA, &o, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "options->max_group_height");
  o.max_group_height = 0;
  o.auto_min_reduction = 1;
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_AUTO, &o, &R), SPARSETC_STATUS_INVALID_VALUE,
                 "auto_min_reduction");
  expect_failure(sparsetc_matrix_reorder(h_, nullptr, SPARSETC_REORDER_ONE_SA, nullptr, &R),
                 SPARSETC_STATUS_NULL_POINTER, "A");
  expect_failure(sparsetc_matrix_reorder(h_, A, SPARSETC_REORDER_ONE_SA, nullptr, nullptr),
                 SPARSETC_STATUS_NULL_POINTER, "reordered");
  EXPECT_EQ(sparsetc_matrix_get_permutation(nullptr, nullptr, nullptr, nullptr), SPARSETC_STATUS_NULL_POINTER);
  sparsetc_reorder_quality_t q{};
  expect_failure(sparsetc_matrix_get_reorder_quality(h_, A, 16, 8, &q), SPARSETC_STATUS_INVALID_VALUE, "struct_size");
  q.struct_size = sizeof q;
  expect_failure(sparsetc_matrix_get_reorder_quality(h_, A, -1, 8, &q), SPARSETC_STATUS_INVALID_VALUE, "height");
  sparsetc_matrix_destroy(A);
}

// Older callers pass a shorter options struct: the fields past it keep their defaults.
TEST_F(ReorderCapi, ShortOptionsStructKeepsDefaults) {
  sparsetc_matrix_t A = generate("blocks:512:16:0.1:0.5");
  sparsetc_reorder_options_t o{};
  o.struct_size = offsetof(sparsetc_reorder_options_t, block_width);  // tau only
  o.tau = 0.5;
  o.block_width = 999;  // not read
  sparsetc_matrix_t R = reorder(A, SPARSETC_REORDER_ONE_SA, &o), D = reorder(A, SPARSETC_REORDER_ONE_SA);
  EXPECT_EQ(permutation_of(R, 512), permutation_of(D, 512));
  for (auto m : {A, R, D}) sparsetc_matrix_destroy(m);
}

TEST_F(ReorderCapi, AutoAndQuality) {
  // A band matrix is best left alone; a scrambled block matrix is reordered.
  sparsetc_matrix_t band = generate("band:2000:12");
  sparsetc_matrix_t R = reorder(band, SPARSETC_REORDER_AUTO);
  std::vector<int64_t> identity(2000);
  std::iota(identity.begin(), identity.end(), int64_t(0));
  EXPECT_EQ(permutation_of(R, 2000), identity);
  sparsetc_matrix_destroy(R);
  sparsetc_matrix_destroy(band);

  sparsetc_matrix_t A = generate("blocks:2048:16:0.05:0.5");
  R = reorder(A, SPARSETC_REORDER_AUTO);
  std::vector<int64_t> identity2048(2048);
  std::iota(identity2048.begin(), identity2048.end(), int64_t(0));
  EXPECT_NE(permutation_of(R, 2048), identity2048);
  sparsetc_reorder_quality_t before{}, after{};
  before.struct_size = after.struct_size = sizeof before;
  ASSERT_OK(h_, sparsetc_matrix_get_reorder_quality(h_, A, 16, 8, &before));
  ASSERT_OK(h_, sparsetc_matrix_get_reorder_quality(h_, R, 0, 0, &after));
  EXPECT_EQ(after.block_height, 16);
  EXPECT_EQ(after.block_width, 8);
  EXPECT_LT(after.blocks, before.blocks / 2);
  EXPECT_GT(after.in_block_density, 2 * before.in_block_density);
  EXPECT_EQ(before.groups, 2048 / 16);  // no recorded groups: block_height chunks
  EXPECT_GT(after.groups, 0);
  EXPECT_NEAR(after.mean_group_height * double(after.groups), 2048.0, 1e-9);
  EXPECT_EQ(after.block_rows, 128);
  EXPECT_NEAR(after.blocks_per_block_row_mean, double(after.blocks) / 128.0, 1e-12);
  EXPECT_GT(after.vbr_mean_block_height, 1.0);
  // A short struct gets a prefix.
  sparsetc_reorder_quality_t prefix;
  std::memset(&prefix, 0x7f, sizeof prefix);
  prefix.struct_size = offsetof(sparsetc_reorder_quality_t, in_block_density);
  ASSERT_OK(h_, sparsetc_matrix_get_reorder_quality(h_, R, 16, 8, &prefix));
  EXPECT_EQ(prefix.blocks, after.blocks);
  int64_t untouched;
  std::memset(&untouched, 0x7f, sizeof untouched);
  EXPECT_EQ(prefix.block_rows, untouched);
  sparsetc_matrix_destroy(R);
  sparsetc_matrix_destroy(A);
}

// Types and bases survive: an f16, one-based, int32 matrix reordered and read back.
TEST_F(ReorderCapi, KeepsTypesAndValues) {
  sparsetc_matrix_t A = generate("rmat:8:4"), half = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_convert(h_, A, SPARSETC_FORMAT_COO, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                        SPARSETC_BASE_ONE, SPARSETC_VALUE_F16, &half));
  sparsetc_matrix_t R = reorder(half, SPARSETC_REORDER_ONE_SA);
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_OK(h_, sparsetc_matrix_get_info(R, &info));
  EXPECT_EQ(info.format, SPARSETC_FORMAT_CSR);
  EXPECT_EQ(info.value_type, SPARSETC_VALUE_F16);
  EXPECT_EQ(info.base, SPARSETC_BASE_ONE);
  EXPECT_EQ(info.index_type, SPARSETC_INDEX_32);
  expect_consistent(half, R);
  for (auto m : {A, half, R}) sparsetc_matrix_destroy(m);
}

TEST_F(ReorderCapi, EmptyMatrices) {
  const int64_t offsets[4] = {0, 0, 0, 0};
  for (int64_t cols : {0, 5}) {
    sparsetc_matrix_t A = nullptr, R = nullptr;
    ASSERT_OK(h_, sparsetc_matrix_create_csr(h_, &A, 3, cols, 0, offsets, nullptr, nullptr, SPARSETC_INDEX_64,
                                             SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                             SPARSETC_MEMORY_HOST, SPARSETC_COPY));
    for (sparsetc_reorder_method_t method :
         {SPARSETC_REORDER_ONE_SA, SPARSETC_REORDER_SA, SPARSETC_REORDER_AUTO, SPARSETC_REORDER_IDENTITY}) {
      ASSERT_OK(h_, sparsetc_matrix_reorder(h_, A, method, nullptr, &R));
      EXPECT_EQ(permutation_of(R, 3), (std::vector<int64_t>{0, 1, 2}));  // one class of empty rows, in order
      sparsetc_reorder_quality_t q{};
      q.struct_size = sizeof q;
      ASSERT_OK(h_, sparsetc_matrix_get_reorder_quality(h_, R, 16, 8, &q));
      EXPECT_EQ(q.blocks, 0);
      sparsetc_matrix_destroy(R);
    }
    sparsetc_matrix_destroy(A);
  }
}

// Device matrices: reordering works through the host; the device paths that cannot answer in the
// original row order refuse to multiply them (the tensor-core path can: tests/gpu).
TEST_F(ReorderCapi, ReorderedDeviceMatricesAreRefusedWhereTheOrderWouldBeLost) {
  int32_t devices = 0;
  sparsetc_get_device_count(&devices);
  if (devices == 0) GTEST_SKIP() << "no CUDA device";
  sparsetc_handle_t g = nullptr;
  ASSERT_EQ(sparsetc_create_with_backend(&g, SPARSETC_BACKEND_GPU, 0), SPARSETC_STATUS_SUCCESS);
  sparsetc_matrix_t A = nullptr, dA = nullptr, dR = nullptr;
  ASSERT_OK(g, sparsetc_matrix_generate(g, "blocks:256:16:0.2:0.3", 1, SPARSETC_VALUE_F32, &A));
  ASSERT_OK(g, sparsetc_matrix_copy_to(g, A, SPARSETC_MEMORY_DEVICE, &dA));
  ASSERT_OK(g, sparsetc_matrix_reorder(g, dA, SPARSETC_REORDER_ONE_SA, nullptr, &dR));
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_OK(g, sparsetc_matrix_get_info(dR, &info));
  EXPECT_EQ(info.memory, SPARSETC_MEMORY_DEVICE);
  // Its permutation survives the trip through the host.
  sparsetc_matrix_t hR = nullptr;
  ASSERT_OK(g, sparsetc_matrix_reorder(g, A, SPARSETC_REORDER_ONE_SA, nullptr, &hR));
  EXPECT_EQ(permutation_of(dR, 256), permutation_of(hR, 256));
  sparsetc_spgemm_plan_t plan = nullptr;
  EXPECT_EQ(sparsetc_spgemm_plan_create(g, &plan, SPARSETC_OP_NON_TRANSPOSE, dR, SPARSETC_OP_NON_TRANSPOSE, dA,
                                        SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, nullptr),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_NE(message_of(g).find("reordered matrix in device memory"), std::string::npos) << message_of(g);
  sparsetc_dense_t B = nullptr, C = nullptr;  // plans take shapes only: no memory needed
  ASSERT_OK(g, sparsetc_dense_create(g, &B, 256, 4, 4, nullptr, SPARSETC_VALUE_F32, SPARSETC_ORDER_ROW,
                                     SPARSETC_MEMORY_DEVICE));
  ASSERT_OK(g, sparsetc_dense_create(g, &C, 256, 4, 4, nullptr, SPARSETC_VALUE_F32, SPARSETC_ORDER_ROW,
                                     SPARSETC_MEMORY_DEVICE));
  sparsetc_spmm_plan_t spmm = nullptr;
  EXPECT_EQ(sparsetc_spmm_plan_create(g, &spmm, SPARSETC_OP_NON_TRANSPOSE, dR, B, C, SPARSETC_COMPUTE_DEFAULT,
                                      SPARSETC_SPMM_ALG_AUTO),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_NE(message_of(g).find("row-reordered device matrix"), std::string::npos) << message_of(g);
  EXPECT_EQ(sparsetc_spmm_plan_create(g, &spmm, SPARSETC_OP_NON_TRANSPOSE, dR, B, C, SPARSETC_COMPUTE_DEFAULT,
                                      SPARSETC_SPMM_ALG_CUSPARSE),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_NE(message_of(g).find("row-reordered device matrix"), std::string::npos) << message_of(g);
  // A reordered host matrix copied to the device stays reordered (and so is refused there too);
  // copied back, it multiplies in the original row order again.
  sparsetc_matrix_t dR2 = nullptr, back = nullptr;
  ASSERT_OK(g, sparsetc_matrix_copy_to(g, hR, SPARSETC_MEMORY_DEVICE, &dR2));
  EXPECT_EQ(permutation_of(dR2, 256), permutation_of(hR, 256));
  EXPECT_EQ(sparsetc_spmm_plan_create(g, &spmm, SPARSETC_OP_NON_TRANSPOSE, dR2, B, C, SPARSETC_COMPUTE_DEFAULT,
                                      SPARSETC_SPMM_ALG_AUTO),
            SPARSETC_STATUS_NOT_SUPPORTED);
  ASSERT_OK(g, sparsetc_matrix_copy_to(g, dR2, SPARSETC_MEMORY_HOST, &back));
  EXPECT_EQ(permutation_of(back, 256), permutation_of(hR, 256));
  sparsetc_dense_destroy(B);
  sparsetc_dense_destroy(C);
  for (auto m : {A, dA, dR, hR, dR2, back}) sparsetc_matrix_destroy(m);
  sparsetc_destroy(g);
}

}  // namespace

namespace {

TEST_F(ReorderCapi, ConversionKeepsThePermutation) {
  sparsetc_matrix_t A = generate("blocks:256:16:0.2:0.3");
  sparsetc_matrix_t R = reorder(A, SPARSETC_REORDER_ONE_SA);
  sparsetc_matrix_t csc = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_convert(h_, R, SPARSETC_FORMAT_CSC, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                        SPARSETC_BASE_ONE, SPARSETC_VALUE_F64, &csc));
  EXPECT_EQ(permutation_of(csc, 256), permutation_of(R, 256));
  expect_same_spmm(A, csc, SPARSETC_VALUE_F64);
  for (auto m : {A, R, csc}) sparsetc_matrix_destroy(m);
}

}  // namespace

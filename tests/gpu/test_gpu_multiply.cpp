// SpMM and SpGEMM on the GPU backend through the C API, against the naive float64 reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dense_values.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

struct SpmmCase {
  int64_t m, k, n;
  sparsetc_order_t order;
  sparsetc_value_type_t type;
  double alpha, beta;
};

void PrintTo(const SpmmCase& c, std::ostream* os) {
  *os << c.m << "x" << c.k << " N=" << c.n << (c.order == SPARSETC_ORDER_ROW ? " row-major" : " column-major")
      << (c.type == SPARSETC_VALUE_F64 ? " f64" : " f32") << " alpha=" << c.alpha << " beta=" << c.beta;
}

std::string name(const ::testing::TestParamInfo<SpmmCase>& info) {
  const SpmmCase& c = info.param;
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "_n" + std::to_string(c.n) +
         (c.order == SPARSETC_ORDER_ROW ? "_row" : "_col") + (c.type == SPARSETC_VALUE_F64 ? "_f64" : "_f32") +
         (c.beta == 0 ? "_beta0" : "_beta") + std::to_string(info.index);
}

class GpuSpmm : public GpuTest, public ::testing::WithParamInterface<SpmmCase> {};

TEST_P(GpuSpmm, MatchesFloat64Reference) {
  const SpmmCase c = GetParam();
  const bool f64 = c.type == SPARSETC_VALUE_F64;
  auto t = random_triplets(c.m, c.k, 0.05, fresh_seed());
  auto a = to_csr<int32_t, int32_t>(t);
  std::vector<double> B(size_t(c.k * c.n)), C0(size_t(c.m * c.n));
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& x : B) x = u(rng);
  for (auto& x : C0) x = u(rng);
  auto want = reference_spmm(t, B, c.n, c.alpha, c.beta, C0);

  // Device operands in the case's layout; C poisoned with NaN where beta == 0 must not read it.
  const int64_t ldb = c.order == SPARSETC_ORDER_ROW ? c.n + 3 : c.k + 3;
  const int64_t ldc = c.order == SPARSETC_ORDER_ROW ? c.n + 1 : c.m + 1;
  auto at = [&](int64_t i, int64_t j, int64_t ld) { return c.order == SPARSETC_ORDER_ROW ? i * ld + j : i + j * ld; };
  const size_t b_span = size_t(ldb * (c.order == SPARSETC_ORDER_ROW ? c.k : c.n));
  const size_t c_span = size_t(ldc * (c.order == SPARSETC_ORDER_ROW ? c.m : c.n));
  std::vector<double> b_host(b_span, 0.0), c_host(c_span, 0.0);
  for (int64_t i = 0; i < c.k; ++i)
    for (int64_t j = 0; j < c.n; ++j) b_host[size_t(at(i, j, ldb))] = B[size_t(i * c.n + j)];
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j)
      c_host[size_t(at(i, j, ldc))] = c.beta == 0 ? std::numeric_limits<double>::quiet_NaN() : C0[size_t(i * c.n + j)];

  std::vector<float> vals_f(a.val.begin(), a.val.end()), b_f(b_host.begin(), b_host.end()),
      c_f(c_host.begin(), c_host.end());
  DeviceArray<int32_t> rp(a.row_ptr), ci(a.col);
  DeviceArray<double> vd(a.val), bd(b_host), cd(c_host);
  DeviceArray<float> vf(vals_f), bf(b_f), cf(c_f);
  sparsetc_matrix_t A = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, c.m, c.k, int64_t(a.col.size()), rp.get(), ci.get(),
                                             f64 ? static_cast<void*>(vd.get()) : vf.get(), SPARSETC_INDEX_32,
                                             SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, c.type, SPARSETC_MEMORY_DEVICE,
                                             SPARSETC_COPY));
  sparsetc_dense_t Bd = nullptr, Cd = nullptr;
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &Bd, c.k, c.n, ldb, f64 ? static_cast<void*>(bd.get()) : bf.get(),
                                        c.type, c.order, SPARSETC_MEMORY_DEVICE));
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &Cd, c.m, c.n, ldc, f64 ? static_cast<void*>(cd.get()) : cf.get(),
                                        c.type, c.order, SPARSETC_MEMORY_DEVICE));
  // Every device path: AUTO's choice, cuSPARSE (its preferred algorithm) and the CSR/DCSR kernels.
  for (sparsetc_spmm_alg_t alg : {SPARSETC_SPMM_ALG_AUTO, SPARSETC_SPMM_ALG_CUSPARSE, SPARSETC_SPMM_ALG_CSR,
                                  SPARSETC_SPMM_ALG_DCSR}) {
    SCOPED_TRACE("algorithm " + std::to_string(alg));
    if (f64) {
      ASSERT_EQ(cudaMemcpy(cd.get(), c_host.data(), c_span * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
    } else {
      ASSERT_EQ(cudaMemcpy(cf.get(), c_f.data(), c_span * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    }
    sparsetc_spmm_plan_t plan = nullptr;
    ASSERT_OK(gpu_, sparsetc_spmm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, Bd, Cd,
                                              SPARSETC_COMPUTE_DEFAULT, alg));
    ASSERT_OK(gpu_, sparsetc_spmm_execute(plan, c.alpha, Bd, c.beta, Cd, nullptr, 0));
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    sparsetc_spmm_plan_destroy(plan);

    std::vector<double> got(size_t(c.m * c.n));
    std::vector<double> c_back = f64 ? cd.download() : std::vector<double>();
    std::vector<float> c_back_f = f64 ? std::vector<float>() : cf.download();
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        size_t p = size_t(at(i, j, ldc));
        got[size_t(i * c.n + j)] = f64 ? c_back[p] : double(c_back_f[p]);
      }
    // Every element written (no NaN left from the poison) and within the precision's bound.
    for (double x : got) ASSERT_TRUE(std::isfinite(x));
    double error = relative_error(got, want);
    EXPECT_LT(error, f64 ? 1e-13 : 1e-5) << "relative error " << error;
    // Padding between rows/columns untouched.
    for (int64_t o = 0; o < (c.order == SPARSETC_ORDER_ROW ? c.m : c.n); ++o) {
      size_t pad = size_t(o * ldc + (c.order == SPARSETC_ORDER_ROW ? c.n : c.m));
      double original = c_host[pad];
      double now = f64 ? c_back[pad] : double(c_back_f[pad]);
      EXPECT_TRUE(now == original || (std::isnan(now) && std::isnan(original)));
    }
  }
  sparsetc_dense_destroy(Bd);
  sparsetc_dense_destroy(Cd);
  sparsetc_matrix_destroy(A);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuSpmm,
    ::testing::Values(SpmmCase{257, 129, 33, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F64, 1.5, 0.0},
                      SpmmCase{257, 129, 33, SPARSETC_ORDER_COL, SPARSETC_VALUE_F64, -1.0, 0.5},
                      SpmmCase{100, 300, 8, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 1.0, 1.0},
                      SpmmCase{100, 300, 7, SPARSETC_ORDER_COL, SPARSETC_VALUE_F32, 2.0, 0.0},
                      SpmmCase{1, 1, 1, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F64, 1.0, 0.0},
                      SpmmCase{513, 64, 128, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 1.0, -2.0}),
    name);

// cuSPARSE reads a COO as if its entries were in row order (other orders gave wrong sums,
// silently): asked for by name it refuses such a matrix with a message, takes one in row order,
// and AUTO multiplies either.
TEST_F(GpuTest, CusparseRefusesACooOutOfRowOrderAndAutoMultipliesIt) {
  // A = [[1 0 2], [0 3 0], [4 0 5]] as COO, rows descending in the shuffled copy.
  const std::vector<int32_t> rows{2, 2, 1, 0, 0}, cols{2, 0, 1, 2, 0};
  const std::vector<int32_t> sorted_rows{0, 0, 1, 2, 2}, sorted_cols{0, 2, 1, 0, 2};
  const std::vector<double> vals{5, 4, 3, 2, 1}, sorted_vals{1, 2, 3, 4, 5};
  const std::vector<double> b{1, 10, 2, 20, 3, 30};  // 3 x 2, row-major
  const std::vector<double> want{7, 70, 6, 60, 19, 190};
  DeviceArray<int32_t> r(rows), c(cols), sr(sorted_rows), sc(sorted_cols);
  DeviceArray<double> v(vals), sv(sorted_vals), bd(b), cd(std::vector<double>(6, 0.0));
  sparsetc_matrix_t shuffled = nullptr, in_order = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_create_coo(gpu_, &shuffled, 3, 3, 5, r.get(), c.get(), v.get(), SPARSETC_INDEX_32,
                                             SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_DEVICE,
                                             SPARSETC_BORROW));
  ASSERT_OK(gpu_, sparsetc_matrix_create_coo(gpu_, &in_order, 3, 3, 5, sr.get(), sc.get(), sv.get(),
                                             SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                             SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
  sparsetc_dense_t B = nullptr, C = nullptr;
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &B, 3, 2, 2, bd.get(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                        SPARSETC_MEMORY_DEVICE));
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &C, 3, 2, 2, cd.get(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                        SPARSETC_MEMORY_DEVICE));
  EXPECT_EQ(sparsetc_spmm(gpu_, SPARSETC_OP_NON_TRANSPOSE, 1.0, shuffled, B, 0.0, C, SPARSETC_COMPUTE_DEFAULT,
                          SPARSETC_SPMM_ALG_CUSPARSE),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_NE(last_error(gpu_).find("entry 2 lies in a row above"), std::string::npos) << last_error(gpu_);
  for (auto [A, alg] : {std::pair{in_order, SPARSETC_SPMM_ALG_CUSPARSE}, std::pair{shuffled, SPARSETC_SPMM_ALG_AUTO},
                        std::pair{in_order, SPARSETC_SPMM_ALG_AUTO}}) {
    ASSERT_EQ(cudaMemset(cd.get(), 0, 6 * sizeof(double)), cudaSuccess);
    ASSERT_OK(gpu_, sparsetc_spmm(gpu_, SPARSETC_OP_NON_TRANSPOSE, 1.0, A, B, 0.0, C, SPARSETC_COMPUTE_DEFAULT, alg));
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cd.download(), want) << "algorithm " << alg << (A == shuffled ? ", shuffled COO" : ", COO in row order");
  }
  sparsetc_dense_destroy(B);
  sparsetc_dense_destroy(C);
  sparsetc_matrix_destroy(shuffled);
  sparsetc_matrix_destroy(in_order);
}

// An allocator that refuses every allocation of at least *limit bytes.
sparsetc_allocator_t refusing_from(const size_t* limit) {
  return sparsetc_allocator_t{sizeof(sparsetc_allocator_t), const_cast<size_t*>(limit),
                              [](void* at_least, void** ptr, size_t bytes, void* stream) -> int32_t {
                                if (bytes >= *static_cast<size_t*>(at_least)) return 1;
                                return cudaMallocAsync(ptr, bytes, static_cast<cudaStream_t>(stream)) == cudaSuccess
                                           ? 0
                                           : 1;
                              },
                              [](void*, void* ptr, size_t, void* stream) {
                                cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
                              }};
}

// Where a dense operand sits in its f32 device buffer.
struct DenseAt {
  sparsetc_order_t order;
  int64_t ld, offset;  // leading dimension; elements before it in the buffer
};

// A plan of `alg` for C = A B (op(A) = A, the default compute type), which the caller destroys, and
// its reason; *plan stays null where the plan is refused (a failure of the test).
std::string plan_with_reason(sparsetc_handle_t h, sparsetc_spmm_plan_t* plan, sparsetc_matrix_t A, sparsetc_dense_t B,
                             sparsetc_dense_t C, sparsetc_spmm_alg_t alg, sparsetc_spmm_alg_t* ran = nullptr) {
  *plan = nullptr;
  if (sparsetc_spmm_plan_create(h, plan, SPARSETC_OP_NON_TRANSPOSE, A, B, C, SPARSETC_COMPUTE_DEFAULT, alg) !=
      SPARSETC_STATUS_SUCCESS) {
    ADD_FAILURE() << "sparsetc_spmm_plan_create: " << last_error(h);
    return {};
  }
  char reason[1024] = {0};
  sparsetc_spmm_alg_t chosen = 0;
  EXPECT_EQ(sparsetc_spmm_plan_get_alg(*plan, &chosen, reason, sizeof reason), SPARSETC_STATUS_SUCCESS);
  if (ran) *ran = chosen;
  return reason;
}

// The copies of B and C around the CSR/DCSR kernels against their absence. A (m x k, density
// 0.004) and a random B in `in` (f32, or f16 with fp32 sums), an f32 C, beta = 0, through a plan
// of each algorithm on the device handle and on one whose allocator refuses allocations as large
// as B's f32 copy would be (everything else of this multiply is smaller), so that the plan's
// copies are refused and B and C are used as they are. Each plan's reason must name the copies
// (`note`) and its workspace count them; every result is checked against float64 over the
// inputs as rounded, and with and without the copies it must be the same bits (the same sums in
// the same order). C's buffer is poisoned first and must stay so outside C.
void copies_and_in_place_agree(sparsetc_handle_t gpu, cudaStream_t stream, sparsetc_value_type_t in, int64_t m,
                               int64_t k, int64_t n, DenseAt b_at, DenseAt c_at,
                               const std::vector<sparsetc_spmm_alg_t>& algs, const std::string& note,
                               size_t workspace_at_least) {
  Triplets t = random_triplets(m, k, 0.004, fresh_seed());
  const auto rounded = [in](std::vector<double> x) { return unpack(pack(x, in), in); };
  for (auto& entry : t.entries) entry.second = rounded({entry.second})[0];
  const auto a = to_csr<int32_t, int32_t>(t);
  std::vector<double> b(size_t(k * n));
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& x : b) x = u(rng);
  b = rounded(b);
  const std::vector<double> want = reference_spmm(t, b, n, 1.0, 0.0, {});
  auto at = [](DenseAt d, int64_t i, int64_t j) {
    return size_t(d.offset + (d.order == SPARSETC_ORDER_ROW ? i * d.ld + j : i + j * d.ld));
  };
  auto span = [&](DenseAt d, int64_t rows) { return at(d, rows - 1, n - 1) + 1; };
  std::vector<double> b_stored(span(b_at, k), std::numeric_limits<double>::quiet_NaN());
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) b_stored[at(b_at, i, j)] = b[size_t(i * n + j)];
  const size_t c_elements = span(c_at, m), in_bytes = type_size(in);
  DeviceArray<int32_t> rp(a.row_ptr), ci(a.col);
  DeviceArray<uint8_t> av(pack(a.val, in)), bd(pack(b_stored, in));
  DeviceArray<float> cd(std::vector<float>(c_elements, 0.0f));

  const size_t copy_bytes = size_t(k * n) * sizeof(float);
  const sparsetc_allocator_t refusing = refusing_from(&copy_bytes);
  sparsetc_handle_t starved = nullptr;
  ASSERT_EQ(sparsetc_create_with_backend(&starved, SPARSETC_BACKEND_GPU, 0), SPARSETC_STATUS_SUCCESS);
  ASSERT_OK(starved, sparsetc_set_stream(starved, stream));
  ASSERT_OK(starved, sparsetc_set_allocator(starved, &refusing));

  for (sparsetc_spmm_alg_t alg : algs) {
    std::vector<std::vector<float>> results;
    for (sparsetc_handle_t h : {gpu, starved}) {
      SCOPED_TRACE(std::string("algorithm ") + std::to_string(alg) + (h == starved ? ", no memory for the copies" : ""));
      sparsetc_matrix_t A = nullptr;
      sparsetc_dense_t B = nullptr, C = nullptr;
      ASSERT_OK(h, sparsetc_matrix_create_csr(h, &A, m, k, int64_t(a.col.size()), rp.get(), ci.get(), av.get(),
                                              SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, in,
                                              SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
      ASSERT_OK(h, sparsetc_dense_create(h, &B, k, n, b_at.ld, bd.get() + b_at.offset * in_bytes, in, b_at.order,
                                         SPARSETC_MEMORY_DEVICE));
      ASSERT_OK(h, sparsetc_dense_create(h, &C, m, n, c_at.ld, cd.get() + c_at.offset, SPARSETC_VALUE_F32, c_at.order,
                                         SPARSETC_MEMORY_DEVICE));
      sparsetc_spmm_plan_t plan = nullptr;
      ASSERT_OK(h, sparsetc_spmm_plan_create(h, &plan, SPARSETC_OP_NON_TRANSPOSE, A, B, C, SPARSETC_COMPUTE_DEFAULT,
                                             alg));
      char reason[1024] = {0};
      sparsetc_spmm_alg_t ran = 0;
      ASSERT_OK(h, sparsetc_spmm_plan_get_alg(plan, &ran, reason, sizeof reason));
      EXPECT_NE(std::string(reason).find(note), std::string::npos) << reason;
      size_t bytes = 0;
      ASSERT_OK(h, sparsetc_spmm_workspace_size(plan, &bytes));
      EXPECT_GE(bytes, workspace_at_least);
      ASSERT_EQ(cudaMemset(cd.get(), 0xFF, c_elements * sizeof(float)), cudaSuccess);  // NaN
      ASSERT_OK(h, sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, nullptr, 0));
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const std::vector<float> got = cd.download();
      std::vector<double> c(size_t(m * n));
      std::vector<bool> inside(got.size(), false);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          c[size_t(i * n + j)] = got[at(c_at, i, j)];
          inside[at(c_at, i, j)] = true;
        }
      for (size_t e = 0; e < got.size(); ++e)
        if (!inside[e]) {
          ASSERT_TRUE(std::isnan(got[e])) << "written outside C at " << e;
        }
      EXPECT_LT(relative_error(c, want), 1e-6);
      results.push_back(got);
      sparsetc_spmm_plan_destroy(plan);
      sparsetc_dense_destroy(B);
      sparsetc_dense_destroy(C);
      sparsetc_matrix_destroy(A);
    }
    ASSERT_EQ(results.size(), 2u);
    ASSERT_EQ(results[0].size(), results[1].size());
    EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(float)), 0)
        << "algorithm " << alg << ": with the copies and without them differ (bits; the poison is NaN)";
  }
  sparsetc_memory_stats_t stats{};
  stats.struct_size = sizeof stats;
  ASSERT_OK(starved, sparsetc_get_memory_stats(starved, &stats));
  EXPECT_EQ(stats.live_allocations, 0);
  sparsetc_destroy(starved);
}

// A column-major B reaches the CSR/DCSR kernels as a row-major copy in the plan's workspace, and
// their result reaches a column-major C through a row-major one (the reason says so and the
// workspace counts both). Where the plan's own allocation for them is refused, the kernel reads B
// and writes C as they are: the same sums in the same order, so with beta = 0 the same bits.
TEST_F(GpuTest, ColumnMajorOperandsAreCopiedRowMajorAndUsedAsTheyAreWithoutMemory) {
  const int64_t m = 3000, k = 2000, n = 128;
  copies_and_in_place_agree(gpu_, stream_, SPARSETC_VALUE_F32, m, k, n, {SPARSETC_ORDER_COL, k, 0}, {SPARSETC_ORDER_COL, m, 0},
                            {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR},
                            "column-major B copied row-major first, column-major C written row-major, then added in",
                            size_t(k * n + m * n) * sizeof(float));
}

// AUTO picks cuSPARSE's CSR_ALG3 for f16 rows of 200 entries at N = 128, and cuSPARSE runs its
// default algorithm, which sums in C's f16, when B or C does not start on a 16-byte boundary (50
// fp16 units off on such rows). A plan made with B and C so placed passes cuSPARSE over; a plan
// made with aligned ones sends the calls that are not to the CSR kernel. Either way every element
// stays within C's own rounding of the float64 answer, however B and C are shifted.
TEST_F(GpuTest, AutoKeepsFp32SumsWhenBOrCIsNotSixteenByteAligned) {
  const int64_t m = 512, k = 4000, n = 128;
  Triplets t = random_triplets(m, k, 0.05, fresh_seed(), false);
  const auto a = to_csr<int32_t, int32_t>(t);
  const std::vector<uint8_t> a_half = pack(a.val, SPARSETC_VALUE_F16);
  const std::vector<double> a_round = unpack(a_half, SPARSETC_VALUE_F16);
  size_t p = 0;
  for (auto& [rc, v] : t.entries) v = a_round[p++];
  std::vector<double> b(size_t(k * n));
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& x : b) x = u(rng);
  const std::vector<uint8_t> b_half = pack(b, SPARSETC_VALUE_F16);
  b = unpack(b_half, SPARSETC_VALUE_F16);
  const std::vector<double> want = reference_spmm(t, b, n, 1.0, 0.0, {});
  Triplets magnitudes = t;
  for (auto& [rc, v] : magnitudes.entries) v = std::fabs(v);
  std::vector<double> b_magnitudes(b.size());
  for (size_t e = 0; e < b.size(); ++e) b_magnitudes[e] = std::fabs(b[e]);
  const std::vector<double> scale = reference_spmm(magnitudes, b_magnitudes, n, 1.0, 0.0, {});  // sum |a b|
  int64_t longest = 0;
  for (size_t r = 0; r + 1 < a.row_ptr.size(); ++r)
    longest = std::max<int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);

  DeviceArray<int32_t> rp(a.row_ptr), ci(a.col);
  DeviceArray<uint8_t> av(a_half);
  // B as it is and one element into a buffer; C with room for a shift of one element in front.
  std::vector<uint8_t> b_room(2);
  b_room.insert(b_room.end(), b_half.begin(), b_half.end());
  DeviceArray<uint8_t> bd(b_half), bd_shifted(b_room), cd(std::vector<uint8_t>(size_t(m * n + 1) * 2, 0));
  sparsetc_matrix_t A = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, m, k, int64_t(a.col.size()), rp.get(), ci.get(), av.get(),
                                             SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                             SPARSETC_VALUE_F16, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
  auto dense = [&](int64_t rows, const void* values) {
    sparsetc_dense_t d = nullptr;
    EXPECT_EQ(sparsetc_dense_create(gpu_, &d, rows, n, n, const_cast<void*>(values), SPARSETC_VALUE_F16,
                                    SPARSETC_ORDER_ROW, SPARSETC_MEMORY_DEVICE),
              SPARSETC_STATUS_SUCCESS)
        << last_error(gpu_);
    return d;
  };
  sparsetc_dense_t B_aligned = dense(k, bd.get()), C_aligned = dense(m, cd.get());
  for (const auto& [b_shift, c_shift] : {std::pair{1, 0}, std::pair{0, 1}, std::pair{1, 1}, std::pair{0, 0}}) {
    sparsetc_dense_t B = dense(k, b_shift ? bd_shifted.get() + 2 : bd.get()), C = dense(m, cd.get() + 2 * c_shift);
    for (const bool planned_aligned : {true, false}) {
      SCOPED_TRACE("B shifted by " + std::to_string(b_shift) + ", C by " + std::to_string(c_shift) +
                   " elements; planned with " + (planned_aligned ? "aligned B and C" : "these"));
      sparsetc_spmm_plan_t plan = nullptr;
      ASSERT_OK(gpu_, sparsetc_spmm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A,
                                                planned_aligned ? B_aligned : B, planned_aligned ? C_aligned : C,
                                                SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPMM_ALG_AUTO));
      sparsetc_spmm_alg_t ran = 0;
      char reason[1024] = {0};
      ASSERT_OK(gpu_, sparsetc_spmm_plan_get_alg(plan, &ran, reason, sizeof reason));
      if (planned_aligned || (b_shift == 0 && c_shift == 0)) {
        EXPECT_EQ(ran, SPARSETC_SPMM_ALG_CUSPARSE) << "the case this test is about is gone: " << reason;
      } else {
        EXPECT_NE(std::string(reason).find("passed over: that algorithm does not run where the rows of B or C are "
                                           "not 16-byte aligned"),
                  std::string::npos)
            << reason;
      }
      ASSERT_EQ(cudaMemset(cd.get(), 0xFF, size_t(m * n + 1) * 2), cudaSuccess);  // NaN: every element written
      ASSERT_OK(gpu_, sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, nullptr, 0));
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      sparsetc_spmm_plan_destroy(plan);
      const std::vector<uint8_t> c_all = cd.download();
      if (c_shift) {
        EXPECT_TRUE(c_all[0] == 0xFF && c_all[1] == 0xFF) << "written before C";
      }
      const std::vector<double> got =
          unpack(std::vector<uint8_t>(c_all.begin() + 2 * c_shift, c_all.begin() + 2 * (c_shift + m * n)),
                 SPARSETC_VALUE_F16);
      int wrong = 0;
      for (size_t e = 0; e < want.size() && wrong < 5; ++e) {
        // C's rounding to f16, and fp32 sums: (2L + 8) units of 2^-24 times sum |a b|.
        const double bound = output_bound(SPARSETC_VALUE_F16) * std::fabs(want[e]) +
                             output_floor(SPARSETC_VALUE_F16) +
                             double(2 * longest + 8) * std::ldexp(1.0, -24) * scale[e];
        if (!(std::fabs(got[e] - want[e]) <= bound)) {
          ADD_FAILURE() << "C[" << e << "] = " << got[e] << ", want " << want[e] << " within " << bound;
          ++wrong;
        }
      }
    }
    sparsetc_dense_destroy(B);
    sparsetc_dense_destroy(C);
  }
  sparsetc_dense_destroy(B_aligned);
  sparsetc_dense_destroy(C_aligned);
  sparsetc_matrix_destroy(A);
}

// Row-major B and C whose rows do not start on 16-byte boundaries (column slices of wider matrices)
// reach the CSR kernel as aligned copies in the workspace, so its vector loads and stores apply
// (the reason says so and the workspace counts them), where the measured rule takes them: B from
// N = 32 when A reads its rows at least 4 times on average, C from N = 128 for half-precision
// inputs into an f32 C. Without memory for them, B and C are read and written element by element:
// the same sums, the same bits.
TEST_F(GpuTest, UnalignedRowMajorBAndCAreCopiedToAlignedRows) {
  const int64_t m = 3000, k = 2000;  // 24,000 entries: 12 per row of B
  const size_t f32 = sizeof(float);
  copies_and_in_place_agree(gpu_, stream_, SPARSETC_VALUE_F32, m, k, 64, {SPARSETC_ORDER_ROW, 64 + 1, 1},
                            {SPARSETC_ORDER_ROW, 64, 1}, {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR},
                            "B copied to 16-byte aligned rows first (", size_t(k * 64) * f32);
  copies_and_in_place_agree(
      gpu_, stream_, SPARSETC_VALUE_F16, m, k, 128, {SPARSETC_ORDER_ROW, 128, 3}, {SPARSETC_ORDER_ROW, 128 + 1, 0},
      {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR},
      "B copied to 16-byte aligned rows first, C written row-major to 16-byte aligned rows, then added in",
      size_t(k * 128 * 2) + size_t(m * 128) * f32);
}

// Where the rule passes the copies over, the kernel reads and writes the unaligned rows element by
// element and the plan names no copy: B read under 4 times a row on average, an f32 C from f32
// inputs, and N below the rule's thresholds.
TEST_F(GpuTest, UnalignedRowMajorBAndCStayInPlaceWhereTheCopiesDoNotPay) {
  const int64_t m = 300, k = 20000, n = 64;  // 24,000 entries: 1.2 per row of B
  const Triplets t = random_triplets(m, k, 0.004, fresh_seed());
  const auto a = to_csr<int32_t, int32_t>(t);
  std::vector<double> b(size_t(k * n));
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& x : b) x = u(rng);
  const std::vector<double> want = reference_spmm(t, b, n, 1.0, 0.0, {});
  std::vector<float> stored(size_t(k * n + 1), std::numeric_limits<float>::quiet_NaN());
  for (size_t e = 0; e < b.size(); ++e) stored[e + 1] = float(b[e]);
  const std::vector<float> vals(a.val.begin(), a.val.end());
  DeviceArray<int32_t> rp(a.row_ptr), ci(a.col);
  DeviceArray<float> av(vals), bd(stored), cd(std::vector<float>(size_t(m * n + 1), 0.0f));
  sparsetc_matrix_t A = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, m, k, int64_t(a.col.size()), rp.get(), ci.get(), av.get(),
                                             SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                             SPARSETC_VALUE_F32, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
  for (const int64_t columns : {int64_t(16), n}) {  // N = 16: below both thresholds
    SCOPED_TRACE("N = " + std::to_string(columns));
    sparsetc_dense_t B = nullptr, C = nullptr;
    ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &B, k, columns, n, bd.get() + 1, SPARSETC_VALUE_F32,
                                          SPARSETC_ORDER_ROW, SPARSETC_MEMORY_DEVICE));
    ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &C, m, columns, n, cd.get() + 1, SPARSETC_VALUE_F32,
                                          SPARSETC_ORDER_ROW, SPARSETC_MEMORY_DEVICE));
    sparsetc_spmm_plan_t plan = nullptr;
    const std::string reason = plan_with_reason(gpu_, &plan, A, B, C, SPARSETC_SPMM_ALG_CSR);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(reason.find("copied"), std::string::npos) << reason;
    EXPECT_EQ(reason.find("written row-major"), std::string::npos) << reason;
    ASSERT_EQ(cudaMemset(cd.get(), 0xFF, size_t(m * n + 1) * sizeof(float)), cudaSuccess);
    ASSERT_OK(gpu_, sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, nullptr, 0));
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    const std::vector<float> got = cd.download();
    std::vector<double> c(size_t(m * columns)), w(size_t(m * columns));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const float x = got[size_t(1 + i * n + j)];
        if (j < columns) {
          c[size_t(i * columns + j)] = x;
          double sum = 0;  // want covers all n columns of B; this N reads the first `columns`
          for (int64_t e = a.row_ptr[size_t(i)]; e < a.row_ptr[size_t(i + 1)]; ++e)
            sum += a.val[size_t(e)] * double(stored[size_t(1 + a.col[size_t(e)] * n + j)]);
          w[size_t(i * columns + j)] = sum;
        } else {
          EXPECT_TRUE(std::isnan(x)) << "written outside C at (" << i << ", " << j << ")";
        }
      }
    EXPECT_TRUE(std::isnan(got[0])) << "written before C";
    EXPECT_LT(relative_error(c, w), 1e-6);
    if (columns == n) {
      EXPECT_LT(relative_error(c, want), 1e-6);
    }
    sparsetc_spmm_plan_destroy(plan);
    sparsetc_dense_destroy(B);
    sparsetc_dense_destroy(C);
  }
  sparsetc_matrix_destroy(A);
}

// Row-major B whose rows do not start on the CSR kernel's vector boundary, where the plan takes no
// copy (N below 32, or A reading B's rows under 4 times on average): the lanes whose columns lie
// inside C read their rows element by element at constant offsets, the others check each column.
// The products come out bit for bit those of an aligned B (the schedule depends on A and N only)
// and within fp32 (f64: fp64) sums of the float64 reference; B's buffers end at its last element,
// so a read past it shows under compute-sanitizer. Every precision; rows of one entry to a dense
// one (the chunked long-row path), a medium row, empty rows (DCSR), N not a multiple of a lane's
// columns; a shift of one element with ld = N (every row off by the same bytes) and of three with
// ld = N + 1 (each row off by different bytes).
TEST_F(GpuTest, UnalignedRowMajorBMatchesAlignedBitForBit) {
  const int64_t m = 1500, k = 3000;
  for (const sparsetc_value_type_t in :
       {SPARSETC_VALUE_F32, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16, SPARSETC_VALUE_F64}) {
    const bool f64 = in == SPARSETC_VALUE_F64;
    const sparsetc_value_type_t out = f64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
    const auto rounded = [in](std::vector<double> x) { return unpack(pack(x, in), in); };
    Triplets t = random_triplets(m, k, 0.0015, fresh_seed());  // 4.5 entries a row, ~1.9 a row of B
    std::mt19937_64 rng(fresh_seed());
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t j = 0; j < k; ++j) t.entries[{7, j}] = u(rng);            // a dense row: long-row chunks
    for (int64_t j = 0; j < k; j += 11) t.entries[{m - 2, j}] = u(rng);  // 273 entries: a medium row
    for (auto& entry : t.entries) entry.second = rounded({entry.second})[0];
    const auto a = to_csr<int32_t, int32_t>(t);
    ASSERT_LT(a.col.size(), size_t(4 * k)) << "A must read B's rows under 4 times: no copy of B";
    int64_t longest = 0;
    for (size_t r = 0; r + 1 < a.row_ptr.size(); ++r)
      longest = std::max<int64_t>(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
    DeviceArray<int32_t> rp(a.row_ptr), ci(a.col);
    DeviceArray<uint8_t> av(pack(a.val, in));
    for (const int64_t n : {int64_t(8), int64_t(12), int64_t(16), int64_t(24), int64_t(40)}) {
      std::vector<double> b(size_t(k * n));
      for (double& x : b) x = u(rng);
      b = rounded(b);
      const std::vector<double> want = reference_spmm(t, b, n, 1.0, 0.0, {});
      Triplets magnitudes = t;
      for (auto& entry : magnitudes.entries) entry.second = std::fabs(entry.second);
      std::vector<double> b_magnitudes(b.size());
      for (size_t e = 0; e < b.size(); ++e) b_magnitudes[e] = std::fabs(b[e]);
      const std::vector<double> scale = reference_spmm(magnitudes, b_magnitudes, n, 1.0, 0.0, {});
      sparsetc_matrix_t A = nullptr;
      ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, m, k, int64_t(a.col.size()), rp.get(), ci.get(), av.get(),
                                                 SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, in,
                                                 SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
      const int64_t aligned_ld = (n + 7) / 8 * 8;  // 16-byte rows for every input type but f64's 8 columns
      const int64_t f64_ld = (n + 1) / 2 * 2;
      struct Placement {
        int64_t offset, ld;
      };
      const std::vector<Placement> placements = {{0, f64 ? f64_ld : aligned_ld}, {1, n}, {3, n + 1}};
      const size_t out_bytes = type_size(out);
      DeviceArray<uint8_t> cd(std::vector<uint8_t>(size_t(m * n) * out_bytes, 0));
      sparsetc_dense_t C = nullptr;
      ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &C, m, n, n, cd.get(), out, SPARSETC_ORDER_ROW,
                                            SPARSETC_MEMORY_DEVICE));
      for (const sparsetc_spmm_alg_t alg : {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR}) {
        std::vector<uint8_t> aligned_result;
        for (const Placement& place : placements) {
          SCOPED_TRACE("input type " + std::to_string(in) + ", N = " + std::to_string(n) + ", algorithm " +
                       std::to_string(alg) + ", B at element " + std::to_string(place.offset) + " with ld " +
                       std::to_string(place.ld));
          // `offset` elements of filler, then B's elements from its first to its last: the
          // allocation ends at B's last byte, so a read past it shows under compute-sanitizer.
          std::vector<double> stored(size_t(place.offset + (k - 1) * place.ld + n),
                                     std::numeric_limits<double>::quiet_NaN());
          for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < n; ++j) stored[size_t(place.offset + i * place.ld + j)] = b[size_t(i * n + j)];
          DeviceArray<uint8_t> bd(pack(stored, in));
          const uint8_t* b_first = bd.get() + place.offset * int64_t(type_size(in));
          sparsetc_dense_t B = nullptr;
          ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &B, k, n, place.ld, const_cast<uint8_t*>(b_first), in,
                                                SPARSETC_ORDER_ROW, SPARSETC_MEMORY_DEVICE));
          sparsetc_spmm_plan_t plan = nullptr;
          sparsetc_spmm_alg_t ran = 0;
          const std::string reason = plan_with_reason(gpu_, &plan, A, B, C, alg, &ran);
          ASSERT_NE(plan, nullptr);
          EXPECT_EQ(ran, alg) << reason;
          EXPECT_EQ(reason.find("copied"), std::string::npos) << reason;
          ASSERT_EQ(cudaMemset(cd.get(), 0xFF, size_t(m * n) * out_bytes), cudaSuccess);  // NaN
          ASSERT_OK(gpu_, sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, nullptr, 0));
          ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
          sparsetc_spmm_plan_destroy(plan);
          sparsetc_dense_destroy(B);
          const std::vector<uint8_t> got_bytes = cd.download();
          if (place.offset == 0) {
            aligned_result = got_bytes;
            const std::vector<double> got = unpack(got_bytes, out);
            const double unit = f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
            int wrong = 0;
            for (size_t e = 0; e < want.size() && wrong < 5; ++e) {
              const double bound = double(2 * longest + 8) * unit * scale[e];
              if (!(std::fabs(got[e] - want[e]) <= bound)) {
                ADD_FAILURE() << "C[" << e << "] = " << got[e] << ", want " << want[e] << " within " << bound;
                ++wrong;
              }
            }
          } else {
            size_t differ = 0, first = 0;
            for (size_t e = 0; e < got_bytes.size(); ++e)
              if (got_bytes[e] != aligned_result[e] && differ++ == 0) first = e / out_bytes;
            EXPECT_EQ(differ, 0u) << "bytes differ from the aligned B's product, first at C[" << first << "]";
          }
        }
      }
      sparsetc_dense_destroy(C);
      sparsetc_matrix_destroy(A);
    }
  }
}

// The copy of an unaligned B by input type and N: A reading each row of B about 6 times takes it
// from N = 32 in f16 and in f32 below N = 128; f32 from N = 128 only from 8 times a row (the
// element loads were faster there, docs/performance.md).
TEST_F(GpuTest, UnalignedF32BIsCopiedFromNOf128OnlyWhereItsRowsAreReadEightTimes) {
  const int64_t m = 6000, k = 1000, n = 128;
  Triplets t;
  t.rows = m;
  t.cols = k;
  std::mt19937_64 rng(fresh_seed());
  for (int64_t i = 0; i < m; ++i) t.entries[{i, int64_t(rng() % uint64_t(k))}] = 1.0;  // 6 a row of B
  const auto a = to_csr<int32_t, int32_t>(t);
  ASSERT_GE(a.col.size(), size_t(4 * k));
  ASSERT_LT(a.col.size(), size_t(8 * k));
  DeviceArray<int32_t> rp(a.row_ptr), ci(a.col);
  DeviceArray<uint8_t> av(std::vector<uint8_t>(a.col.size() * 4, 0)), bd(std::vector<uint8_t>(size_t(k * n + 1) * 4, 0)),
      cd(std::vector<uint8_t>(size_t(m * n) * 4, 0));
  for (const auto& [in, columns, copied] :
       {std::tuple{SPARSETC_VALUE_F32, int64_t(64), true}, std::tuple{SPARSETC_VALUE_F32, n, false},
        std::tuple{SPARSETC_VALUE_F16, n, true}, std::tuple{SPARSETC_VALUE_BF16, n, true}}) {
    SCOPED_TRACE("input type " + std::to_string(in) + ", N = " + std::to_string(columns));
    sparsetc_matrix_t A = nullptr;
    sparsetc_dense_t B = nullptr, C = nullptr;
    ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, m, k, int64_t(a.col.size()), rp.get(), ci.get(), av.get(),
                                               SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, in,
                                               SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
    ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &B, k, columns, columns, bd.get() + type_size(in), in,
                                          SPARSETC_ORDER_ROW, SPARSETC_MEMORY_DEVICE));
    ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &C, m, columns, columns, cd.get(), SPARSETC_VALUE_F32,
                                          SPARSETC_ORDER_ROW, SPARSETC_MEMORY_DEVICE));
    sparsetc_spmm_plan_t plan = nullptr;
    const std::string reason = plan_with_reason(gpu_, &plan, A, B, C, SPARSETC_SPMM_ALG_CSR);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(reason.find("B copied to 16-byte aligned rows first") != std::string::npos, copied) << reason;
    sparsetc_spmm_plan_destroy(plan);
    sparsetc_dense_destroy(B);
    sparsetc_dense_destroy(C);
    sparsetc_matrix_destroy(A);
  }
}

class GpuSpgemm : public GpuTest {};

TEST_F(GpuSpgemm, MatchesReferenceStructureAndValues) {
  for (auto [m, k, n, d] : {std::tuple{300, 200, 250, 0.02}, std::tuple{64, 64, 64, 0.2}, std::tuple{1000, 1000, 1000, 0.003}}) {
    auto ta = random_triplets(m, k, d, fresh_seed());
    auto tb = random_triplets(k, n, d, fresh_seed());
    auto want = reference_spgemm(ta, tb);
    auto a = to_csr<int32_t, int32_t>(ta);
    auto b = to_csr<int32_t, int32_t>(tb);
    DeviceArray<int32_t> ap(a.row_ptr), ac(a.col), bp(b.row_ptr), bc(b.col);
    DeviceArray<double> av(a.val), bv(b.val);
    sparsetc_matrix_t A = nullptr, B = nullptr, C = nullptr, C_host = nullptr, C64 = nullptr;
    ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, m, k, int64_t(a.col.size()), ap.get(), ac.get(), av.get(),
                                               SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                               SPARSETC_VALUE_F64, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
    ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &B, k, n, int64_t(b.col.size()), bp.get(), bc.get(), bv.get(),
                                               SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                               SPARSETC_VALUE_F64, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
    sparsetc_spgemm_plan_t plan = nullptr;
    ASSERT_OK(gpu_, sparsetc_spgemm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE,
                                                B, SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, nullptr));
    int64_t nnz = -1;
    ASSERT_OK(gpu_, sparsetc_spgemm_symbolic(plan, &nnz));
    EXPECT_EQ(nnz, int64_t(want.entries.size()));
    // Twice: the second numeric call reuses C (the AMG pattern).
    for (int round = 0; round < 2; ++round) ASSERT_OK(gpu_, sparsetc_spgemm_numeric(plan, &C));
    ASSERT_OK(gpu_, sparsetc_matrix_copy_to(gpu_, C, SPARSETC_MEMORY_HOST, &C_host));
    ASSERT_OK(cpu_, sparsetc_matrix_convert(cpu_, C_host, SPARSETC_FORMAT_COO, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                            SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &C64));
    void *r = nullptr, *c = nullptr, *v = nullptr;
    ASSERT_OK(cpu_, sparsetc_matrix_get_arrays(C64, &r, &c, &v));
    size_t e = 0;
    for (const auto& [rc, value] : want.entries) {
      ASSERT_EQ(static_cast<int64_t*>(r)[e], rc.first);
      ASSERT_EQ(static_cast<int64_t*>(c)[e], rc.second);
      EXPECT_NEAR(static_cast<double*>(v)[e], value, 1e-12 * (1 + std::fabs(value)));
      ++e;
    }
    sparsetc_spgemm_plan_destroy(plan);
    for (auto mtx : {A, B, C, C_host, C64}) sparsetc_matrix_destroy(mtx);
  }
}

// cuSPARSE's SpGEMM takes 32-bit indices only: asked for it, 64-bit operands are refused with a
// message (AUTO serves them with the binned path, which takes both widths).
TEST_F(GpuSpgemm, UnsupportedIndexWidthIsReportedNotSilentlyWrong) {
  std::vector<int64_t> p{0, 1, 2};
  std::vector<int64_t> c{0, 1};
  std::vector<double> v{1, 2};
  DeviceArray<int64_t> dp(p), dc(c);
  DeviceArray<double> dv(v);
  sparsetc_matrix_t A = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &A, 2, 2, 2, dp.get(), dc.get(), dv.get(), SPARSETC_INDEX_64,
                                             SPARSETC_INDEX_64, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                             SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
  sparsetc_spgemm_plan_t plan = nullptr;
  EXPECT_EQ(sparsetc_spgemm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                        SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_CUSPARSE, nullptr),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_NE(last_error(gpu_).find("32-bit"), std::string::npos) << last_error(gpu_);
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                              SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, nullptr));
  sparsetc_spgemm_plan_destroy(plan);
  sparsetc_matrix_destroy(A);
}

}  // namespace

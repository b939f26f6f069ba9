// Every status code that bad input can reach through the C API, each with its message; and
// nothing is created (outputs stay NULL) when a call fails.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <vector>

#include "capi_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

// A valid 3x4 CSR matrix: [[1 0 2 0] [0 0 0 0] [0 3 0 4]].
std::vector<int32_t> P{0, 2, 2, 4};
std::vector<int32_t> J{0, 2, 1, 3};
std::vector<double> V{1, 2, 3, 4};

class Errors : public CapiTest {
 protected:
  sparsetc_status_t create(const std::vector<int32_t>& p, const std::vector<int32_t>& j, const std::vector<double>& v,
                           int64_t rows = 3, int64_t cols = 4, sparsetc_index_base_t base = SPARSETC_BASE_ZERO) {
    sparsetc_matrix_t m = reinterpret_cast<sparsetc_matrix_t>(this);  // must be reset to NULL on failure
    sparsetc_status_t s = sparsetc_matrix_create_csr(h_, &m, rows, cols, int64_t(j.size()), p.data(), j.data(),
                                                     v.data(), SPARSETC_INDEX_32, SPARSETC_INDEX_32, base,
                                                     SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST, SPARSETC_COPY);
    if (s == SPARSETC_STATUS_SUCCESS) sparsetc_matrix_destroy(m);
    else EXPECT_EQ(m, nullptr);
    return s;
  }
  sparsetc_matrix_t valid() {
    sparsetc_matrix_t m = nullptr;
    EXPECT_OK(h_, sparsetc_matrix_create_csr(h_, &m, 3, 4, 4, P.data(), J.data(), V.data(), SPARSETC_INDEX_32,
                                             SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                             SPARSETC_MEMORY_HOST, SPARSETC_COPY));
    return m;
  }
};

TEST_F(Errors, NullPointers) {
  EXPECT_EQ(sparsetc_create(nullptr), SPARSETC_STATUS_NULL_POINTER);
  sparsetc_matrix_t m = nullptr;
  expect_failure(sparsetc_matrix_create_csr(h_, &m, 3, 4, 4, nullptr, J.data(), V.data(), SPARSETC_INDEX_32,
                                            SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                            SPARSETC_MEMORY_HOST, SPARSETC_COPY),
                 SPARSETC_STATUS_NULL_POINTER, "NULL");
  expect_failure(sparsetc_matrix_create_csr(h_, &m, 3, 4, 4, P.data(), nullptr, V.data(), SPARSETC_INDEX_32,
                                            SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                            SPARSETC_MEMORY_HOST, SPARSETC_COPY),
                 SPARSETC_STATUS_NULL_POINTER, "NULL");
  expect_failure(sparsetc_matrix_create_csr(h_, nullptr, 3, 4, 4, P.data(), J.data(), V.data(), SPARSETC_INDEX_32,
                                            SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                            SPARSETC_MEMORY_HOST, SPARSETC_COPY),
                 SPARSETC_STATUS_NULL_POINTER, "matrix");
  EXPECT_EQ(sparsetc_matrix_create_csr(nullptr, &m, 3, 4, 4, P.data(), J.data(), V.data(), SPARSETC_INDEX_32,
                                       SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                       SPARSETC_MEMORY_HOST, SPARSETC_COPY),
            SPARSETC_STATUS_NULL_POINTER);
  EXPECT_NE(message_of(nullptr).find("handle is NULL"), std::string::npos) << message_of(nullptr);
  EXPECT_EQ(sparsetc_spgemm_symbolic(nullptr, nullptr), SPARSETC_STATUS_NULL_POINTER);
  EXPECT_EQ(sparsetc_get_last_error(h_, nullptr, 0), SPARSETC_STATUS_NULL_POINTER);
  // Destroying NULL is a no-op, as free() is.
  EXPECT_EQ(sparsetc_matrix_destroy(nullptr), SPARSETC_STATUS_SUCCESS);
  EXPECT_EQ(sparsetc_destroy(nullptr), SPARSETC_STATUS_SUCCESS);
}

TEST_F(Errors, InvalidEnumerationsAndSizes) {
  sparsetc_matrix_t m = nullptr;
  expect_failure(sparsetc_matrix_create_csr(h_, &m, 3, 4, 4, P.data(), J.data(), V.data(), SPARSETC_INDEX_32,
                                            SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, 99, SPARSETC_MEMORY_HOST,
                                            SPARSETC_COPY),
                 SPARSETC_STATUS_INVALID_VALUE, "value type");
  expect_failure(sparsetc_matrix_create_csr(h_, &m, -3, 4, 4, P.data(), J.data(), V.data(), SPARSETC_INDEX_32,
                                            SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                            SPARSETC_MEMORY_HOST, SPARSETC_COPY),
                 SPARSETC_STATUS_INVALID_VALUE, "-3");
  expect_failure(sparsetc_set_validation(h_, 17), SPARSETC_STATUS_INVALID_VALUE, "validation");
  sparsetc_dense_t d = nullptr;
  std::vector<double> x(12);
  expect_failure(sparsetc_dense_create(h_, &d, 3, 4, 2, x.data(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                       SPARSETC_MEMORY_HOST),
                 SPARSETC_STATUS_INVALID_VALUE, "ld = 2");
  EXPECT_EQ(d, nullptr);
}

TEST_F(Errors, IndexOutOfRangeNamesTheEntry) {
  expect_failure(create(P, {0, 2, 1, 4}, V), SPARSETC_STATUS_INVALID_INDEX, "row 2");
  expect_failure(create(P, {0, -1, 1, 3}, V), SPARSETC_STATUS_INVALID_INDEX, "-1");
  // One-based input: column 0 is out of range.
  expect_failure(create({1, 3, 3, 5}, {1, 0, 2, 4}, V, 3, 4, SPARSETC_BASE_ONE), SPARSETC_STATUS_INVALID_INDEX, "0");
}

TEST_F(Errors, UnsortedAndDuplicateColumns) {
  expect_failure(create(P, {2, 0, 1, 3}, V), SPARSETC_STATUS_UNSORTED_INDICES, "row 0");
  expect_failure(create(P, {0, 2, 3, 3}, V), SPARSETC_STATUS_DUPLICATE_ENTRY, "row 2");
}

TEST_F(Errors, BadRowOffsets) {
  expect_failure(create({1, 2, 2, 4}, J, V), SPARSETC_STATUS_INVALID_ROW_OFFSETS, "offsets[0]");
  expect_failure(create({0, 3, 2, 4}, J, V), SPARSETC_STATUS_INVALID_ROW_OFFSETS, "monotone");
  expect_failure(create({0, 2, 2, 3}, J, V), SPARSETC_STATUS_INVALID_ROW_OFFSETS, "nnz");
}

TEST_F(Errors, NanAndInfWhenValuesAreValidated) {
  std::vector<double> bad{1, std::numeric_limits<double>::quiet_NaN(), 3, 4};
  EXPECT_OK(h_, create(P, J, bad));  // the default level checks structure only
  ASSERT_OK(h_, sparsetc_set_validation(h_, SPARSETC_VALIDATE_VALUES));
  expect_failure(create(P, J, bad), SPARSETC_STATUS_NAN_OR_INF, "NaN");
  bad[1] = std::numeric_limits<double>::infinity();
  expect_failure(create(P, J, bad), SPARSETC_STATUS_NAN_OR_INF, "entry 1");
}

TEST_F(Errors, CooDuplicatesFollowThePolicy) {
  std::vector<int32_t> r{0, 2, 0}, c{1, 3, 1};
  std::vector<double> v{1, 2, 5};
  sparsetc_matrix_t m = nullptr;
  expect_failure(sparsetc_matrix_create_coo(h_, &m, 3, 4, 3, r.data(), c.data(), v.data(), SPARSETC_INDEX_32,
                                            SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                            SPARSETC_COPY),
                 SPARSETC_STATUS_DUPLICATE_ENTRY, "column 1");
  ASSERT_OK(h_, sparsetc_set_duplicates(h_, SPARSETC_DUPLICATES_SUM));
  ASSERT_OK(h_, sparsetc_matrix_create_coo(h_, &m, 3, 4, 3, r.data(), c.data(), v.data(), SPARSETC_INDEX_32,
                                           SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                           SPARSETC_COPY));
  sparsetc_matrix_t csr = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_convert(h_, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                        SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &csr));
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_OK(h_, sparsetc_matrix_get_info(csr, &info));
  EXPECT_EQ(info.nnz, 2);
  void* values = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_get_arrays(csr, nullptr, nullptr, &values));
  EXPECT_EQ(static_cast<double*>(values)[0], 6.0);  // 1 + 5 at (0, 1)
  sparsetc_matrix_destroy(csr);
  sparsetc_matrix_destroy(m);
}

TEST_F(Errors, ValuesOutOfHalfRange) {
  std::vector<double> big{1, 70000, 3, 4};
  sparsetc_matrix_t m = nullptr, half = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_create_csr(h_, &m, 3, 4, 4, P.data(), J.data(), big.data(), SPARSETC_INDEX_32,
                                           SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                           SPARSETC_MEMORY_HOST, SPARSETC_COPY));
  expect_failure(sparsetc_matrix_convert(h_, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                         SPARSETC_BASE_ZERO, SPARSETC_VALUE_F16, &half),
                 SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "70000");
  EXPECT_EQ(half, nullptr);
  // bf16 has the range of fp32: the same value fits.
  EXPECT_OK(h_, sparsetc_matrix_convert(h_, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                        SPARSETC_BASE_ZERO, SPARSETC_VALUE_BF16, &half));
  sparsetc_matrix_destroy(half);
  sparsetc_matrix_destroy(m);
}

TEST_F(Errors, IndicesThatDoNotFit32Bits) {
  const int64_t wide = int64_t(3) << 30;  // 3 * 2^30 columns
  std::vector<int64_t> p{0, 1}, c{wide - 1};
  std::vector<double> v{1};
  sparsetc_matrix_t m = nullptr, narrow = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_create_csr(h_, &m, 1, wide, 1, p.data(), c.data(), v.data(), SPARSETC_INDEX_64,
                                           SPARSETC_INDEX_64, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                           SPARSETC_MEMORY_HOST, SPARSETC_COPY));
  expect_failure(sparsetc_matrix_convert(h_, m, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                         SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &narrow),
                 SPARSETC_STATUS_SIZE_OVERFLOW, "");
  EXPECT_EQ(narrow, nullptr);
  sparsetc_matrix_destroy(m);
}

TEST_F(Errors, DimensionMismatch) {
  sparsetc_matrix_t A = valid();
  std::vector<double> b(5 * 2), c(3 * 2);
  sparsetc_dense_t B = nullptr, C = nullptr;
  ASSERT_OK(h_, sparsetc_dense_create(h_, &B, 5, 2, 2, b.data(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  ASSERT_OK(h_, sparsetc_dense_create(h_, &C, 3, 2, 2, c.data(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  sparsetc_spmm_plan_t plan = nullptr;
  expect_failure(sparsetc_spmm_plan_create(h_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, B, C, SPARSETC_COMPUTE_DEFAULT,
                                           SPARSETC_SPMM_ALG_AUTO),
                 SPARSETC_STATUS_DIMENSION_MISMATCH, "3x4");
  EXPECT_EQ(plan, nullptr);
  sparsetc_spgemm_plan_t gemm = nullptr;
  expect_failure(sparsetc_spgemm_plan_create(h_, &gemm, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                             SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, nullptr),
                 SPARSETC_STATUS_DIMENSION_MISMATCH, "3x4");
  EXPECT_EQ(gemm, nullptr);
  sparsetc_dense_destroy(B);
  sparsetc_dense_destroy(C);
  sparsetc_matrix_destroy(A);
}

TEST_F(Errors, CallsOutOfOrderAndUnavailableAlgorithms) {
  sparsetc_matrix_t A = valid();
  sparsetc_spgemm_plan_t plan = nullptr;
  ASSERT_OK(h_, sparsetc_spgemm_plan_create(h_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_TRANSPOSE, A,
                                            SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, nullptr));
  sparsetc_matrix_t C = nullptr;
  EXPECT_EQ(sparsetc_spgemm_numeric(plan, &C), SPARSETC_STATUS_INVALID_STATE);
  EXPECT_NE(message_of(nullptr).find("symbolic"), std::string::npos);
  EXPECT_EQ(C, nullptr);
  sparsetc_spgemm_plan_destroy(plan);
  expect_failure(sparsetc_spgemm_plan_create(h_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_TRANSPOSE, A,
                                             SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_TSPARSE_TC, nullptr),
                 SPARSETC_STATUS_NOT_SUPPORTED, "not available");
  expect_failure(sparsetc_spgemm_plan_create(h_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_TRANSPOSE, A,
                                             SPARSETC_COMPUTE_DEFAULT, 1234, nullptr),
                 SPARSETC_STATUS_INVALID_VALUE, "1234");
  sparsetc_matrix_destroy(A);
}

TEST_F(Errors, FilesThatCannotBeReadOrParsed) {
  sparsetc_matrix_t m = nullptr;
  expect_failure(sparsetc_matrix_read_mtx(h_, "/nonexistent/dir/a.mtx", SPARSETC_VALUE_F64, SPARSETC_INDEX_32, &m),
                 SPARSETC_STATUS_IO_ERROR, "/nonexistent/dir/a.mtx");
  const std::string path = ::testing::TempDir() + "capi_bad.mtx";
  std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 2.0\n";
  expect_failure(sparsetc_matrix_read_mtx(h_, path.c_str(), SPARSETC_VALUE_F64, SPARSETC_INDEX_32, &m),
                 SPARSETC_STATUS_FILE_FORMAT_ERROR, ":4:");
  std::ofstream(path) << "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1.0 2.0\n";
  expect_failure(sparsetc_matrix_read_mtx(h_, path.c_str(), SPARSETC_VALUE_F64, SPARSETC_INDEX_32, &m),
                 SPARSETC_STATUS_NOT_SUPPORTED, "complex");
  std::remove(path.c_str());
  sparsetc_matrix_t A = valid();
  expect_failure(sparsetc_matrix_write_mtx(h_, A, "/nonexistent/dir/out.mtx"), SPARSETC_STATUS_IO_ERROR, "out.mtx");
  sparsetc_matrix_destroy(A);
  EXPECT_EQ(m, nullptr);
}

TEST_F(Errors, BadGeneratorSpec) {
  sparsetc_matrix_t m = nullptr;
  expect_failure(sparsetc_matrix_generate(h_, "banana:3", 1, SPARSETC_VALUE_F64, &m), SPARSETC_STATUS_INVALID_VALUE,
                 "banana");
  EXPECT_EQ(m, nullptr);
}

TEST_F(Errors, OutOfHostMemoryIsItsOwnStatus) {
  // 2^45 rows: the CSR row offsets need 256 TiB, more than any address space holds, so the
  // allocation fails even where the kernel overcommits memory.
  const int64_t huge = int64_t(1) << 45;
  std::vector<int64_t> r{0}, c{0};
  std::vector<double> v{1};
  sparsetc_matrix_t m = nullptr;
  ASSERT_OK(h_, sparsetc_matrix_create_coo(h_, &m, huge, huge, 1, r.data(), c.data(), v.data(), SPARSETC_INDEX_64,
                                           SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST,
                                           SPARSETC_COPY));
  sparsetc_analysis_t a{};
  a.struct_size = sizeof a;
  expect_failure(sparsetc_analyze(h_, m, nullptr, &a), SPARSETC_STATUS_ALLOC_FAILED, "memory");
  sparsetc_matrix_destroy(m);
}

TEST_F(Errors, NoDeviceForTheGpuBackend) {
  int32_t devices = 0;
  ASSERT_OK(nullptr, sparsetc_get_device_count(&devices));
  if (devices > 0) GTEST_SKIP() << "a GPU is present";
  sparsetc_handle_t g = nullptr;
  EXPECT_EQ(sparsetc_create_with_backend(&g, SPARSETC_BACKEND_GPU, 0), SPARSETC_STATUS_NO_DEVICE);
  EXPECT_EQ(g, nullptr);
  sparsetc_matrix_t m = nullptr;
  expect_failure(sparsetc_matrix_create_csr(h_, &m, 3, 4, 4, P.data(), J.data(), V.data(), SPARSETC_INDEX_32,
                                            SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64,
                                            SPARSETC_MEMORY_DEVICE, SPARSETC_COPY),
                 SPARSETC_STATUS_NOT_SUPPORTED, "GPU backend");
}

TEST_F(Errors, MessageClearsAfterSuccess) {
  EXPECT_NE(create(P, {0, 2, 1, 4}, V), SPARSETC_STATUS_SUCCESS);
  EXPECT_FALSE(message_of(h_).empty());
  EXPECT_OK(h_, create(P, J, V));
  EXPECT_TRUE(message_of(h_).empty());
}

}  // namespace

namespace {

TEST_F(Errors, ExecutionWithOperandsOfAnotherLayout) {
  sparsetc_matrix_t A = valid();
  std::vector<double> b(4 * 2), c(3 * 2);
  std::vector<float> bf(4 * 2);
  sparsetc_dense_t B = nullptr, C = nullptr, Bf = nullptr, Bwide = nullptr;
  ASSERT_OK(h_, sparsetc_dense_create(h_, &B, 4, 2, 2, b.data(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  ASSERT_OK(h_, sparsetc_dense_create(h_, &C, 3, 2, 2, c.data(), SPARSETC_VALUE_F64, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  ASSERT_OK(h_, sparsetc_dense_create(h_, &Bf, 4, 2, 2, bf.data(), SPARSETC_VALUE_F32, SPARSETC_ORDER_ROW,
                                      SPARSETC_MEMORY_HOST));
  ASSERT_OK(h_, sparsetc_dense_create(h_, &Bwide, 4, 2, 4, b.data(), SPARSETC_VALUE_F64, SPARSETC_ORDER_COL,
                                      SPARSETC_MEMORY_HOST));
  sparsetc_spmm_plan_t plan = nullptr;
  ASSERT_OK(h_, sparsetc_spmm_plan_create(h_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, B, C, SPARSETC_COMPUTE_DEFAULT,
                                          SPARSETC_SPMM_ALG_AUTO));
  expect_failure(sparsetc_spmm_execute(plan, 1.0, Bf, 0.0, C, nullptr, 0), SPARSETC_STATUS_TYPE_MISMATCH, "B");
  expect_failure(sparsetc_spmm_execute(plan, 1.0, Bwide, 0.0, C, nullptr, 0), SPARSETC_STATUS_DIMENSION_MISMATCH,
                 "ld 4");
  EXPECT_OK(h_, sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, nullptr, 0));
  sparsetc_spmm_plan_destroy(plan);
  for (auto d : {B, C, Bf, Bwide}) sparsetc_dense_destroy(d);
  sparsetc_matrix_destroy(A);
}

TEST(Environment, ValidationLevelByNameOrNumber) {
  for (auto [text, want] : {std::pair{"values", SPARSETC_VALIDATE_VALUES}, std::pair{"1", SPARSETC_VALIDATE_ARGUMENTS},
                            std::pair{"bogus", SPARSETC_VALIDATE_STRUCTURE}}) {
    setenv("SPARSETC_VALIDATE", text, 1);
    sparsetc_handle_t h = nullptr;
    ASSERT_EQ(sparsetc_create_with_backend(&h, SPARSETC_BACKEND_CPU, 0), SPARSETC_STATUS_SUCCESS);
    sparsetc_validation_t level = -1;
    EXPECT_EQ(sparsetc_get_validation(h, &level), SPARSETC_STATUS_SUCCESS);
    EXPECT_EQ(level, want) << "SPARSETC_VALIDATE=" << text;
    sparsetc_destroy(h);
  }
  unsetenv("SPARSETC_VALIDATE");
}

}  // namespace

namespace {

TEST_F(Errors, DeviceMemoryCallsOnTheCpuBackend) {
  sparsetc_memory_stats_t stats{};
  stats.struct_size = sizeof stats;
  EXPECT_OK(h_, sparsetc_get_memory_stats(h_, &stats));
  EXPECT_EQ(stats.current_bytes, 0);
  sparsetc_allocator_t a{sizeof(sparsetc_allocator_t), nullptr, nullptr, nullptr};
  expect_failure(sparsetc_set_allocator(h_, &a), SPARSETC_STATUS_NOT_SUPPORTED, "CPU backend");
  stats.struct_size = 0;
  expect_failure(sparsetc_get_memory_stats(h_, &stats), SPARSETC_STATUS_INVALID_VALUE, "struct_size");
}

}  // namespace

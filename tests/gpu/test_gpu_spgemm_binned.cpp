// SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH through the C API, against the naive float64 reference:
// every offset/index width, both bases and precisions; AUTO's choice for device operands;
// transposed and unsorted operands; numeric reuse after sparsetc_matrix_set_values (bit-identical
// to a fresh product); the drop tolerance on the device; a small memory budget (same bits); every
// device allocation poisoned through the caller's allocator. Skips without a device.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "dense_values.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

// A device CSR matrix (owning copy) of the triplets in the given types; `shuffle` permutes each
// row's entries (unsorted CSR, accepted under SPARSETC_VALIDATE_ARGUMENTS).
sparsetc_matrix_t device_csr(sparsetc_handle_t h, const Triplets& t, sparsetc_index_type_t offset_type,
                             sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                             sparsetc_value_type_t value_type, uint64_t shuffle = 0) {
  auto a = to_csr<int64_t, int64_t>(t, int(base));
  if (shuffle) {
    std::mt19937_64 rng(shuffle);
    for (int64_t i = 0; i < t.rows; ++i) {
      const size_t lo = size_t(a.row_ptr[size_t(i)] - base), hi = size_t(a.row_ptr[size_t(i + 1)] - base);
      for (size_t q = hi; q > lo + 1; --q) {
        const size_t r = lo + size_t(rng() % (q - lo));
        std::swap(a.col[q - 1], a.col[r]);
        std::swap(a.val[q - 1], a.val[r]);
      }
    }
  }
  DeviceArray<unsigned char> rp(index_bytes(a.row_ptr, offset_type)), ci(index_bytes(a.col, index_type)),
      v(pack(a.val, value_type));
  sparsetc_matrix_t m = nullptr;
  EXPECT_EQ(sparsetc_matrix_create_csr(h, &m, t.rows, t.cols, int64_t(a.col.size()), rp.get(), ci.get(), v.get(),
                                       offset_type, index_type, base, value_type, SPARSETC_MEMORY_DEVICE,
                                       SPARSETC_COPY),
            SPARSETC_STATUS_SUCCESS)
      << last_error(h);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return m;
}

Triplets rounded_to(Triplets t, sparsetc_value_type_t type) {
  if (type == SPARSETC_VALUE_F32)
    for (auto& e : t.entries) e.second = double(float(e.second));
  return t;
}

Triplets absolute(Triplets t) {
  for (auto& e : t.entries) e.second = std::fabs(e.second);
  return t;
}

Triplets transposed(const Triplets& t) {
  Triplets out{t.cols, t.rows, {}};
  for (const auto& [rc, v] : t.entries) out.entries[{rc.second, rc.first}] = v;
  return out;
}

// Same structure as the reference, values within (k + 2) eps (|A||B|)_ij.
::testing::AssertionResult matches(const Entries& got, const Triplets& want, const Triplets& bound, int64_t k,
                                   sparsetc_value_type_t type) {
  if (got.rows.size() != want.entries.size())
    return ::testing::AssertionFailure() << got.rows.size() << " entries, want " << want.entries.size();
  const double eps = type == SPARSETC_VALUE_F64 ? std::numeric_limits<double>::epsilon()
                                                : double(std::numeric_limits<float>::epsilon());
  size_t e = 0;
  for (const auto& [rc, value] : want.entries) {
    if (got.rows[e] != rc.first || got.cols[e] != rc.second)
      return ::testing::AssertionFailure() << "entry " << e << " at (" << got.rows[e] << ", " << got.cols[e]
                                           << "), want (" << rc.first << ", " << rc.second << ")";
    const double tolerance = double(k + 2) * eps * bound.entries.at(rc) + 1e-300;
    if (!(std::fabs(got.vals[e] - value) <= tolerance))
      return ::testing::AssertionFailure() << "C(" << rc.first << ", " << rc.second << ") = " << got.vals[e]
                                           << ", want " << value;
    ++e;
  }
  return ::testing::AssertionSuccess();
}

std::vector<unsigned char> value_bytes(sparsetc_matrix_t C) {
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  sparsetc_matrix_get_info(C, &info);
  void* v = nullptr;
  sparsetc_matrix_get_arrays(C, nullptr, nullptr, &v);
  std::vector<unsigned char> out(size_t(info.nnz) * (info.value_type == SPARSETC_VALUE_F64 ? 8 : 4));
  if (!out.empty()) {
    EXPECT_EQ(cudaMemcpy(out.data(), v, out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return out;
}

class BinnedSpgemmApi : public GpuTest {
 protected:
  // Plan, symbolic, numeric into a new C.
  sparsetc_matrix_t multiply(sparsetc_matrix_t A, sparsetc_operation_t op_a, sparsetc_matrix_t B,
                             sparsetc_operation_t op_b, const sparsetc_spgemm_options_t* options = nullptr,
                             sparsetc_spgemm_alg_t alg = SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH,
                             int64_t* nnz_symbolic = nullptr) {
    sparsetc_spgemm_plan_t plan = nullptr;
    sparsetc_matrix_t C = nullptr;
    EXPECT_EQ(sparsetc_spgemm_plan_create(gpu_, &plan, op_a, A, op_b, B, SPARSETC_COMPUTE_DEFAULT, alg, options),
              SPARSETC_STATUS_SUCCESS)
        << last_error(gpu_);
    if (!plan) return nullptr;
    int64_t nnz = -1;
    EXPECT_EQ(sparsetc_spgemm_symbolic(plan, &nnz), SPARSETC_STATUS_SUCCESS) << last_error(gpu_);
    if (nnz_symbolic) *nnz_symbolic = nnz;
    EXPECT_EQ(sparsetc_spgemm_numeric(plan, &C), SPARSETC_STATUS_SUCCESS) << last_error(gpu_);
    sparsetc_spgemm_plan_destroy(plan);
    return C;
  }
};

TEST_F(BinnedSpgemmApi, MatchesReferenceForEveryIndexWidthBaseAndPrecision) {
  for (auto offsets : {SPARSETC_INDEX_32, SPARSETC_INDEX_64})
    for (auto indices : {SPARSETC_INDEX_32, SPARSETC_INDEX_64})
      for (auto base : {SPARSETC_BASE_ZERO, SPARSETC_BASE_ONE})
        for (auto type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64}) {
          const Triplets ta = rounded_to(random_triplets(211, 173, 0.04, fresh_seed()), type);
          const Triplets tb = rounded_to(random_triplets(173, 307, 0.06, fresh_seed()), type);
          sparsetc_matrix_t A = device_csr(gpu_, ta, offsets, indices, base, type);
          sparsetc_matrix_t B = device_csr(gpu_, tb, offsets, indices, base, type);
          int64_t nnz = -1;
          sparsetc_matrix_t C = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE, nullptr,
                                         SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH, &nnz);
          ASSERT_NE(C, nullptr);
          const Triplets want = reference_spgemm(ta, tb);
          EXPECT_EQ(nnz, int64_t(want.entries.size()));
          sparsetc_matrix_info_t info{};
          info.struct_size = sizeof info;
          ASSERT_OK(gpu_, sparsetc_matrix_get_info(C, &info));
          EXPECT_EQ(info.memory, SPARSETC_MEMORY_DEVICE);
          EXPECT_EQ(info.format, SPARSETC_FORMAT_CSR);
          EXPECT_EQ(info.base, base);
          EXPECT_EQ(info.value_type, type);
          EXPECT_TRUE(matches(read_entries(gpu_, cpu_, C), want, reference_spgemm(absolute(ta), absolute(tb)), 173, type))
              << "offsets " << offsets << " indices " << indices << " base " << base << " type " << type;
          for (auto m : {A, B, C}) sparsetc_matrix_destroy(m);
        }
}

TEST_F(BinnedSpgemmApi, AutoChoosesItForDeviceOperands) {
  const Triplets t = random_triplets(50, 50, 0.1, fresh_seed());
  sparsetc_matrix_t A = device_csr(gpu_, t, SPARSETC_INDEX_64, SPARSETC_INDEX_64, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64);
  sparsetc_spgemm_plan_t plan = nullptr;
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                              SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, nullptr));
  sparsetc_spgemm_alg_t alg = -1;
  char reason[256];
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_get_alg(plan, &alg, reason, sizeof reason));
  EXPECT_EQ(alg, SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH) << reason;
  int64_t products = -1;
  size_t bytes = 0;
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_get_estimate(plan, &products, &bytes));
  int64_t want = 0;
  for (const auto& [rc, v] : t.entries)
    for (const auto& [rc2, w] : t.entries) want += rc2.first == rc.second ? 1 : 0;
  EXPECT_EQ(products, want);
  EXPECT_GT(bytes, 0u);
  sparsetc_spgemm_plan_destroy(plan);
  // Host operands are not for this algorithm.
  sparsetc_matrix_t H = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_copy_to(gpu_, A, SPARSETC_MEMORY_HOST, &H));
  EXPECT_EQ(sparsetc_spgemm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, H, SPARSETC_OP_NON_TRANSPOSE, H,
                                        SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH, nullptr),
            SPARSETC_STATUS_NOT_SUPPORTED);
  sparsetc_matrix_destroy(H);
  sparsetc_matrix_destroy(A);
}

TEST_F(BinnedSpgemmApi, TransposedAndUnsortedOperands) {
  ASSERT_OK(gpu_, sparsetc_set_validation(gpu_, SPARSETC_VALIDATE_ARGUMENTS));
  const Triplets ta = random_triplets(97, 301, 0.05, fresh_seed());  // used as A^T: C is 301 x 120
  const Triplets tb = random_triplets(97, 120, 0.08, fresh_seed());
  sparsetc_matrix_t A = device_csr(gpu_, ta, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                   SPARSETC_VALUE_F64, fresh_seed());
  sparsetc_matrix_t B = device_csr(gpu_, tb, SPARSETC_INDEX_64, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                   SPARSETC_VALUE_F64, fresh_seed());
  sparsetc_matrix_t C = multiply(A, SPARSETC_OP_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE);
  ASSERT_NE(C, nullptr);
  const Triplets at = transposed(ta);
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, C), reference_spgemm(at, tb), reference_spgemm(absolute(at), absolute(tb)),
                      97, SPARSETC_VALUE_F64));
  for (auto m : {A, B, C}) sparsetc_matrix_destroy(m);
}

// C = A * A with one operand read in place: its order check comes back with stage 2, and rows found
// unsorted, or repeating a column, are settled before another stage 1. Rows of ~30 entries: ~900
// products a row, the bins of the accumulators, which need rows of B without repeats.
TEST_F(BinnedSpgemmApi, SquareProductsOfUnsortedRowsAndOfRepeatedColumns) {
  ASSERT_OK(gpu_, sparsetc_set_validation(gpu_, SPARSETC_VALIDATE_ARGUMENTS));
  const Triplets t = random_triplets(150, 150, 0.2, fresh_seed());
  const Triplets want = reference_spgemm(t, t), bound = reference_spgemm(absolute(t), absolute(t));
  sparsetc_matrix_t A = device_csr(gpu_, t, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                   SPARSETC_VALUE_F64, fresh_seed());
  sparsetc_matrix_t C = multiply(A, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE);
  ASSERT_NE(C, nullptr);
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, C), want, bound, 150, SPARSETC_VALUE_F64));
  sparsetc_matrix_destroy(C);
  sparsetc_matrix_destroy(A);

  // Sorted rows whose first entry is split into two halves (a repeated column): the same product.
  const auto arrays = to_csr<int32_t, int32_t>(t);
  std::vector<int32_t> row_ptr{0}, cols;
  std::vector<double> vals;
  int64_t split = 0;
  for (int64_t i = 0; i < t.rows; ++i) {
    for (int32_t q = arrays.row_ptr[size_t(i)]; q < arrays.row_ptr[size_t(i + 1)]; ++q) {
      const bool first = q == arrays.row_ptr[size_t(i)];
      cols.push_back(arrays.col[size_t(q)]);
      vals.push_back(first ? arrays.val[size_t(q)] / 2 : arrays.val[size_t(q)]);
      if (first) {
        cols.push_back(arrays.col[size_t(q)]);
        vals.push_back(arrays.val[size_t(q)] / 2);
        ++split;
      }
    }
    row_ptr.push_back(int32_t(cols.size()));
  }
  ASSERT_GT(split, 0);
  DeviceArray<int32_t> rp(row_ptr), ci(cols);
  DeviceArray<double> v(vals);
  sparsetc_matrix_t R = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_create_csr(gpu_, &R, t.rows, t.cols, int64_t(cols.size()), rp.get(), ci.get(), v.get(),
                                             SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                             SPARSETC_VALUE_F64, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
  C = multiply(R, SPARSETC_OP_NON_TRANSPOSE, R, SPARSETC_OP_NON_TRANSPOSE);
  ASSERT_NE(C, nullptr);
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, C), want, bound, 150, SPARSETC_VALUE_F64));
  sparsetc_matrix_destroy(C);
  sparsetc_matrix_destroy(R);
}

TEST_F(BinnedSpgemmApi, NumericReuseAfterNewValuesIsBitIdenticalToAFreshProduct) {
  Triplets ta = random_triplets(400, 300, 0.03, fresh_seed());
  const Triplets tb = random_triplets(300, 350, 0.03, fresh_seed());
  sparsetc_matrix_t A = device_csr(gpu_, ta, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64);
  sparsetc_matrix_t B = device_csr(gpu_, tb, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64);
  sparsetc_spgemm_plan_t plan = nullptr;
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, B,
                                              SPARSETC_COMPUTE_64F, SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH, nullptr));
  int64_t nnz = 0;
  ASSERT_OK(gpu_, sparsetc_spgemm_symbolic(plan, &nnz));
  sparsetc_matrix_t C = nullptr;
  ASSERT_OK(gpu_, sparsetc_spgemm_numeric(plan, &C));
  const std::vector<unsigned char> first = value_bytes(C);
  ASSERT_OK(gpu_, sparsetc_spgemm_numeric(plan, &C));  // again, same values: the numeric-only kernel
  EXPECT_EQ(value_bytes(C), first);

  // New values of A (same pattern), then numeric into the same C.
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-3, 3);
  for (auto& e : ta.entries) e.second = u(rng);
  auto arrays = to_csr<int32_t, int32_t>(ta);
  DeviceArray<double> values(arrays.val);
  ASSERT_OK(gpu_, sparsetc_matrix_set_values(gpu_, A, values.get()));
  ASSERT_OK(gpu_, sparsetc_spgemm_numeric(plan, &C));
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, C), reference_spgemm(ta, tb),
                      reference_spgemm(absolute(ta), absolute(tb)), 300, SPARSETC_VALUE_F64));
  sparsetc_matrix_t fresh = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE);
  EXPECT_EQ(value_bytes(C), value_bytes(fresh));
  sparsetc_spgemm_plan_destroy(plan);
  for (auto m : {A, B, C, fresh}) sparsetc_matrix_destroy(m);
}

TEST_F(BinnedSpgemmApi, DropToleranceOnTheDevice) {
  // Values in {-2, -1, 1, 2}: every sum exact, so |c| <= 2.5 is decided exactly (and many cancel to 0).
  Triplets ta = random_triplets(300, 200, 0.05, fresh_seed()), tb = random_triplets(200, 250, 0.05, fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  for (Triplets* t : {&ta, &tb})
    for (auto& e : t->entries) e.second = double(int(rng() % 2) + 1) * (rng() & 1 ? 1 : -1);
  sparsetc_matrix_t A = device_csr(gpu_, ta, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ONE, SPARSETC_VALUE_F32);
  sparsetc_matrix_t B = device_csr(gpu_, tb, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ONE, SPARSETC_VALUE_F32);
  sparsetc_spgemm_options_t options{};
  options.struct_size = sizeof options;
  options.drop_tolerance = -1;
  sparsetc_matrix_t kept = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE, &options);
  const Triplets want = reference_spgemm(ta, tb);
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, kept), want, reference_spgemm(absolute(ta), absolute(tb)), 200,
                      SPARSETC_VALUE_F32));  // zeros kept
  options.drop_tolerance = 2.5;
  sparsetc_matrix_t dropped = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE, &options);
  Triplets want_dropped{want.rows, want.cols, {}};
  for (const auto& [rc, v] : want.entries)
    if (std::fabs(v) > 2.5) want_dropped.entries[rc] = v;
  ASSERT_LT(want_dropped.entries.size(), want.entries.size());
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, dropped), want_dropped, reference_spgemm(absolute(ta), absolute(tb)), 200,
                      SPARSETC_VALUE_F32));
  for (auto m : {A, B, kept, dropped}) sparsetc_matrix_destroy(m);
}

TEST_F(BinnedSpgemmApi, SmallMemoryBudgetGivesTheSameBits) {
  const Triplets ta = random_triplets(700, 500, 0.05, fresh_seed()), tb = random_triplets(500, 600, 0.05, fresh_seed());
  sparsetc_matrix_t A = device_csr(gpu_, ta, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64);
  sparsetc_matrix_t B = device_csr(gpu_, tb, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64);
  sparsetc_matrix_t whole = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE);
  sparsetc_spgemm_options_t options{};
  options.struct_size = sizeof options;
  options.drop_tolerance = -1;
  options.memory_budget = 64 * 1024;
  sparsetc_matrix_t panels = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE, &options);
  ASSERT_NE(panels, nullptr);
  EXPECT_EQ(value_bytes(panels), value_bytes(whole));
  EXPECT_TRUE(matches(read_entries(gpu_, cpu_, panels), reference_spgemm(ta, tb),
                      reference_spgemm(absolute(ta), absolute(tb)), 500, SPARSETC_VALUE_F64));
  for (auto m : {A, B, whole, panels}) sparsetc_matrix_destroy(m);
}

TEST_F(BinnedSpgemmApi, EveryOutputWrittenUnderPoisonedAllocations) {
  const sparsetc_allocator_t poison = poisoning_allocator();
  ASSERT_OK(gpu_, sparsetc_set_allocator(gpu_, &poison));
  for (auto type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64}) {
    const Triplets ta = rounded_to(random_triplets(333, 222, 0.08, fresh_seed()), type);
    const Triplets tb = rounded_to(random_triplets(222, 111, 0.3, fresh_seed()), type);
    sparsetc_matrix_t A = device_csr(gpu_, ta, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, type);
    sparsetc_matrix_t B = device_csr(gpu_, tb, SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, type);
    sparsetc_matrix_t C = multiply(A, SPARSETC_OP_NON_TRANSPOSE, B, SPARSETC_OP_NON_TRANSPOSE);
    ASSERT_NE(C, nullptr);
    EXPECT_TRUE(matches(read_entries(gpu_, cpu_, C), reference_spgemm(ta, tb),
                        reference_spgemm(absolute(ta), absolute(tb)), 222, type));
    for (auto m : {A, B, C}) sparsetc_matrix_destroy(m);
  }
}

}  // namespace

// SPARSETC_SPGEMM_ALG_TSPARSE_TC through the C API, against the naive float64 reference: every
// tc_precision (DEFAULT from f32/f16/bf16/f64 operands, F16, BF16, F64, CUDA_CORES, F16_SPLIT,
// BF16_SPLIT), both bases and offset widths; values within the precision's bound (fp16: inputs
// rounded with u = 2^-11, so (2u + u^2) sum |a||b| plus the fp32 accumulation; split: 4u^2); cancelled entries removed; the fp16 range error
// (VALUE_OUT_OF_RANGE naming bf16) and bf16 taking the same values; plan checks; numeric after
// sparsetc_matrix_set_values; every device allocation poisoned through the caller's allocator.
// Skips without a device.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "gpu_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

Triplets rounded_to_float(Triplets t) {
  for (auto& e : t.entries) e.second = double(float(e.second));
  return t;
}

Triplets absolute(Triplets t) {
  for (auto& e : t.entries) e.second = std::fabs(e.second);
  return t;
}

Triplets without_zeros(Triplets t) {
  for (auto it = t.entries.begin(); it != t.entries.end();) it = it->second == 0.0 ? t.entries.erase(it) : std::next(it);
  return t;
}

class TsparseSpgemmApi : public GpuTest {
 protected:
  // A device CSR matrix with 32- or 64-bit offsets, 32-bit indices, f32 or f64 values; f16/bf16
  // operands are made from f32 by the host conversion.
  sparsetc_matrix_t device_csr(const Triplets& t, sparsetc_value_type_t type,
                               sparsetc_index_type_t offsets = SPARSETC_INDEX_32,
                               sparsetc_index_base_t base = SPARSETC_BASE_ZERO) {
    const bool wide = type == SPARSETC_VALUE_F64;
    auto a32 = to_csr<int32_t, int32_t>(t, int(base));
    auto a64 = to_csr<int64_t, int32_t>(t, int(base));
    std::vector<float> f(a32.val.begin(), a32.val.end());
    DeviceArray<int32_t> rp32(a32.row_ptr), ci(a32.col);
    DeviceArray<int64_t> rp64(a64.row_ptr);
    DeviceArray<float> vf(f);
    DeviceArray<double> vd(a32.val);
    const void* rp = offsets == SPARSETC_INDEX_64 ? static_cast<void*>(rp64.get()) : static_cast<void*>(rp32.get());
    sparsetc_matrix_t m = nullptr;
    if (type == SPARSETC_VALUE_F32 || type == SPARSETC_VALUE_F64) {
      EXPECT_EQ(sparsetc_matrix_create_csr(gpu_, &m, t.rows, t.cols, int64_t(a32.col.size()), rp, ci.get(),
                                           wide ? static_cast<void*>(vd.get()) : static_cast<void*>(vf.get()), offsets,
                                           SPARSETC_INDEX_32, base, type, SPARSETC_MEMORY_DEVICE, SPARSETC_COPY),
                SPARSETC_STATUS_SUCCESS)
          << last_error(gpu_);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      return m;
    }
    // f16 / bf16: f32 on the host, converted there, then copied to the device.
    sparsetc_matrix_t host = nullptr, narrow = nullptr;
    EXPECT_EQ(sparsetc_matrix_create_csr(cpu_, &host, t.rows, t.cols, int64_t(a32.col.size()), a32.row_ptr.data(),
                                         a32.col.data(), f.data(), SPARSETC_INDEX_32, SPARSETC_INDEX_32, base,
                                         SPARSETC_VALUE_F32, SPARSETC_MEMORY_HOST, SPARSETC_COPY),
              SPARSETC_STATUS_SUCCESS)
        << last_error(cpu_);
    EXPECT_EQ(sparsetc_matrix_convert(cpu_, host, SPARSETC_FORMAT_CSR, offsets, SPARSETC_INDEX_32, base, type, &narrow),
              SPARSETC_STATUS_SUCCESS)
        << last_error(cpu_);
    EXPECT_EQ(sparsetc_matrix_copy_to(gpu_, narrow, SPARSETC_MEMORY_DEVICE, &m), SPARSETC_STATUS_SUCCESS)
        << last_error(gpu_);
    sparsetc_matrix_destroy(host);
    sparsetc_matrix_destroy(narrow);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return m;
  }

  sparsetc_status_t plan(sparsetc_spgemm_plan_t* p, sparsetc_matrix_t A, sparsetc_matrix_t B,
                         sparsetc_tc_precision_t precision,
                         sparsetc_compute_type_t compute = SPARSETC_COMPUTE_DEFAULT) {
    sparsetc_spgemm_options_t options{};
    options.struct_size = sizeof options;
    options.drop_tolerance = -1;
    options.tc_precision = precision;
    return sparsetc_spgemm_plan_create(gpu_, p, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, B, compute,
                                       SPARSETC_SPGEMM_ALG_TSPARSE_TC, &options);
  }

  sparsetc_matrix_t multiply(sparsetc_matrix_t A, sparsetc_matrix_t B, sparsetc_tc_precision_t precision,
                             int64_t* nnz_symbolic = nullptr) {
    sparsetc_spgemm_plan_t p = nullptr;
    EXPECT_EQ(plan(&p, A, B, precision), SPARSETC_STATUS_SUCCESS) << last_error(gpu_);
    if (!p) return nullptr;
    sparsetc_spgemm_alg_t alg = -1;
    char reason[256];
    EXPECT_EQ(sparsetc_spgemm_plan_get_alg(p, &alg, reason, sizeof reason), SPARSETC_STATUS_SUCCESS);
    EXPECT_EQ(alg, SPARSETC_SPGEMM_ALG_TSPARSE_TC) << reason;
    int64_t nnz = -1;
    EXPECT_EQ(sparsetc_spgemm_symbolic(p, &nnz), SPARSETC_STATUS_SUCCESS) << last_error(gpu_);
    if (nnz_symbolic) *nnz_symbolic = nnz;
    sparsetc_matrix_t C = nullptr;
    EXPECT_EQ(sparsetc_spgemm_numeric(p, &C), SPARSETC_STATUS_SUCCESS) << last_error(gpu_);
    sparsetc_spgemm_plan_destroy(p);
    return C;
  }

  Entries entries_of(sparsetc_matrix_t C) { return read_entries(gpu_, cpu_, C); }
};

// Relative error of a product of rounded inputs, and the accumulation's unit roundoff.
struct Bound {
  double input = 0, acc = 0;
};
Bound bound_of(sparsetc_tc_precision_t precision) {
  const double u16 = std::ldexp(1.0, -11), ubf = std::ldexp(1.0, -8);
  switch (precision) {
    case SPARSETC_TC_PRECISION_F16: return {2 * u16 + u16 * u16, std::ldexp(1.0, -22)};
    case SPARSETC_TC_PRECISION_BF16: return {2 * ubf + ubf * ubf, std::ldexp(1.0, -22)};
    case SPARSETC_TC_PRECISION_F16_SPLIT: return {4 * u16 * u16, 3 * std::ldexp(1.0, -22)};
    case SPARSETC_TC_PRECISION_BF16_SPLIT: return {4 * ubf * ubf, 3 * std::ldexp(1.0, -22)};
    case SPARSETC_TC_PRECISION_F64: return {0, std::numeric_limits<double>::epsilon()};
    default: return {0, double(std::numeric_limits<float>::epsilon())};
  }
}

// Every reference entry present with a value within (input + (k + 2) acc) (|A||B|)_ij, or absent when
// that bound reaches zero (it may cancel to exactly zero in the rounded arithmetic); no other entry.
::testing::AssertionResult matches(const Entries& got, const Triplets& a, const Triplets& b,
                                   sparsetc_tc_precision_t precision) {
  const Triplets want = reference_spgemm(a, b);
  const Triplets magnitude = reference_spgemm(absolute(a), absolute(b));
  const Bound bound = bound_of(precision);
  size_t e = 0;
  for (const auto& [rc, value] : want.entries) {
    const double tolerance = (bound.input + double(a.cols + 2) * bound.acc) * magnitude.entries.at(rc) + 1e-30;
    if (e < got.rows.size() && got.rows[e] == rc.first && got.cols[e] == rc.second) {
      if (!(std::fabs(got.vals[e] - value) <= tolerance) || got.vals[e] == 0.0)
        return ::testing::AssertionFailure() << "C(" << rc.first << ", " << rc.second << ") = " << got.vals[e]
                                             << ", want " << value << " (bound " << tolerance << ")";
      ++e;
    } else if (!(std::fabs(value) <= tolerance)) {
      return ::testing::AssertionFailure() << "C(" << rc.first << ", " << rc.second << ") = " << value
                                           << " is missing";
    }
  }
  if (e != got.rows.size())
    return ::testing::AssertionFailure() << "entry (" << got.rows[e] << ", " << got.cols[e]
                                         << ") that the reference does not have (or out of order)";
  return ::testing::AssertionSuccess();
}

TEST_F(TsparseSpgemmApi, EveryPrecisionMatchesTheReference) {
  const sparsetc_tc_precision_t precisions[] = {SPARSETC_TC_PRECISION_F16,        SPARSETC_TC_PRECISION_BF16,
                                                SPARSETC_TC_PRECISION_F64,        SPARSETC_TC_PRECISION_CUDA_CORES,
                                                SPARSETC_TC_PRECISION_F16_SPLIT, SPARSETC_TC_PRECISION_BF16_SPLIT};
  for (sparsetc_tc_precision_t precision : precisions)
    for (auto offsets : {SPARSETC_INDEX_32, SPARSETC_INDEX_64})
      for (auto base : {SPARSETC_BASE_ZERO, SPARSETC_BASE_ONE}) {
        const Triplets ta = rounded_to_float(random_triplets(101, 83, 0.08, fresh_seed()));
        const Triplets tb = rounded_to_float(random_triplets(83, 117, 0.06, fresh_seed()));
        const sparsetc_value_type_t type =
            precision == SPARSETC_TC_PRECISION_F64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
        sparsetc_matrix_t A = device_csr(ta, type, offsets, base), B = device_csr(tb, type, offsets, base);
        int64_t nnz = -1;
        sparsetc_matrix_t C = multiply(A, B, precision, &nnz);
        ASSERT_NE(C, nullptr);
        sparsetc_matrix_info_t info{};
        info.struct_size = sizeof info;
        ASSERT_OK(gpu_, sparsetc_matrix_get_info(C, &info));
        EXPECT_EQ(info.nnz, nnz);
        EXPECT_EQ(info.base, base);
        EXPECT_EQ(info.format, SPARSETC_FORMAT_CSR);
        EXPECT_EQ(info.value_type, precision == SPARSETC_TC_PRECISION_F64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32);
        EXPECT_TRUE(matches(entries_of(C), ta, tb, precision)) << "precision " << precision << " base " << base;
        for (auto m : {A, B, C}) sparsetc_matrix_destroy(m);
      }
}

// DEFAULT follows the operand types: f32 and f16 -> fp16, bf16 -> bf16, f64 -> fp64 (C in f64).
TEST_F(TsparseSpgemmApi, DefaultPrecisionFollowsTheOperands) {
  struct Case {
    sparsetc_value_type_t type;
    sparsetc_tc_precision_t expected;
  };
  for (Case c : {Case{SPARSETC_VALUE_F32, SPARSETC_TC_PRECISION_F16}, Case{SPARSETC_VALUE_F16, SPARSETC_TC_PRECISION_F16},
                 Case{SPARSETC_VALUE_BF16, SPARSETC_TC_PRECISION_BF16},
                 Case{SPARSETC_VALUE_F64, SPARSETC_TC_PRECISION_F64}}) {
    Triplets ta = random_triplets(77, 64, 0.1, fresh_seed()), tb = random_triplets(64, 45, 0.1, fresh_seed());
    // Operand values as the operand type holds them (the reference multiplies those).
    for (Triplets* t : {&ta, &tb})
      for (auto& e : t->entries) {
        const float f = float(e.second);
        if (c.type == SPARSETC_VALUE_F16) e.second = std::ldexp(std::nearbyint(std::ldexp(double(f), 10)), -10);
        else if (c.type == SPARSETC_VALUE_BF16) e.second = std::ldexp(std::nearbyint(std::ldexp(double(f), 7)), -7);
        else if (c.type == SPARSETC_VALUE_F32) e.second = double(f);
      }
    sparsetc_matrix_t A = device_csr(ta, c.type), B = device_csr(tb, c.type);
    sparsetc_matrix_t C = multiply(A, B, SPARSETC_TC_PRECISION_DEFAULT);
    ASSERT_NE(C, nullptr) << "type " << c.type;
    const Entries got = entries_of(C);
    EXPECT_EQ(got.type, c.expected == SPARSETC_TC_PRECISION_F64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32);
    EXPECT_TRUE(matches(got, ta, tb, c.expected)) << "type " << c.type;
    for (auto m : {A, B, C}) sparsetc_matrix_destroy(m);
  }
}

TEST_F(TsparseSpgemmApi, Fp16RangeIsCheckedAndBf16TakesTheValues) {
  Triplets ta = rounded_to_float(random_triplets(60, 50, 0.1, fresh_seed()));
  ta.entries.begin()->second = 70000.0;  // beyond fp16's 65504
  const Triplets tb = rounded_to_float(random_triplets(50, 40, 0.1, fresh_seed()));
  sparsetc_matrix_t A = device_csr(ta, SPARSETC_VALUE_F32), B = device_csr(tb, SPARSETC_VALUE_F32);
  sparsetc_spgemm_plan_t p = nullptr;
  EXPECT_EQ(plan(&p, A, B, SPARSETC_TC_PRECISION_DEFAULT), SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(last_error(gpu_).find("BF16"), std::string::npos) << last_error(gpu_);
  EXPECT_EQ(plan(&p, A, B, SPARSETC_TC_PRECISION_F16), SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
  EXPECT_EQ(plan(&p, A, B, SPARSETC_TC_PRECISION_F16_SPLIT), SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
  EXPECT_EQ(p, nullptr);
  for (auto precision : {SPARSETC_TC_PRECISION_BF16, SPARSETC_TC_PRECISION_BF16_SPLIT}) {
    sparsetc_matrix_t C = multiply(A, B, precision);
    ASSERT_NE(C, nullptr);
    EXPECT_TRUE(matches(entries_of(C), ta, tb, precision)) << "precision " << precision;
    sparsetc_matrix_destroy(C);
  }
  for (auto m : {A, B}) sparsetc_matrix_destroy(m);
}

TEST_F(TsparseSpgemmApi, PlanChecks) {
  const Triplets t = random_triplets(30, 30, 0.1, fresh_seed());
  sparsetc_matrix_t A = device_csr(t, SPARSETC_VALUE_F32);
  sparsetc_spgemm_plan_t p = nullptr;
  EXPECT_EQ(plan(&p, A, A, 7), SPARSETC_STATUS_INVALID_VALUE);
  EXPECT_EQ(plan(&p, A, A, SPARSETC_TC_PRECISION_F16, SPARSETC_COMPUTE_64F), SPARSETC_STATUS_INVALID_VALUE);
  sparsetc_matrix_t H = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_copy_to(gpu_, A, SPARSETC_MEMORY_HOST, &H));
  EXPECT_EQ(plan(&p, H, H, SPARSETC_TC_PRECISION_DEFAULT), SPARSETC_STATUS_NOT_SUPPORTED);
  // An options struct of the previous size (without tc_precision) is read as DEFAULT.
  sparsetc_spgemm_options_t old{};
  old.struct_size = offsetof(sparsetc_spgemm_options_t, tc_precision);
  old.drop_tolerance = -1;
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_create(gpu_, &p, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                              SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_TSPARSE_TC, &old));
  int64_t products = -1;
  size_t bytes = 0;
  ASSERT_OK(gpu_, sparsetc_spgemm_plan_get_estimate(p, &products, &bytes));
  int64_t want = 0;
  for (const auto& [rc, v] : t.entries)
    for (const auto& [rc2, w] : t.entries) want += rc2.first == rc.second ? 1 : 0;
  EXPECT_EQ(products, want);
  sparsetc_spgemm_plan_destroy(p);
  sparsetc_matrix_destroy(H);
  sparsetc_matrix_destroy(A);
}

// Values in {-2, -1, 1, 2} and B's rows paired as opposites: many entries cancel to exactly 0 and
// are removed (the reference without its zeros); the symbolic count is the final one.
TEST_F(TsparseSpgemmApi, CancelledEntriesAreRemoved) {
  Triplets ta = random_triplets(90, 40, 0.15, fresh_seed()), tb = random_triplets(40, 70, 0.1, fresh_seed());
  std::mt19937_64 rng(fresh_seed());
  for (auto& e : ta.entries) e.second = double(int(rng() % 2) + 1) * (rng() & 1 ? 1 : -1);
  Triplets paired{tb.rows, tb.cols, {}};
  for (const auto& [rc, v] : tb.entries)
    if (rc.first % 2 == 0) {
      const double w = double(int(rng() % 2) + 1);
      paired.entries[rc] = w;
      if (rc.first + 1 < tb.rows) paired.entries[{rc.first + 1, rc.second}] = -w;
    }
  for (auto& [rc, v] : ta.entries)
    if (rc.second % 2 == 1 && ta.entries.count({rc.first, rc.second - 1})) v = ta.entries.at({rc.first, rc.second - 1});
  const Triplets full = reference_spgemm(ta, paired);
  ASSERT_LT(without_zeros(full).entries.size(), full.entries.size()) << "nothing cancels: the test does not test it";
  sparsetc_matrix_t A = device_csr(ta, SPARSETC_VALUE_F32), B = device_csr(paired, SPARSETC_VALUE_F32);
  for (auto precision : {SPARSETC_TC_PRECISION_F16, SPARSETC_TC_PRECISION_F64, SPARSETC_TC_PRECISION_CUDA_CORES}) {
    int64_t nnz = -1;
    sparsetc_matrix_t C = multiply(A, B, precision, &nnz);
    ASSERT_NE(C, nullptr);
    EXPECT_EQ(nnz, int64_t(without_zeros(full).entries.size()));
    EXPECT_TRUE(matches(entries_of(C), ta, paired, precision)) << "precision " << precision;
    sparsetc_matrix_destroy(C);
  }
  for (auto m : {A, B}) sparsetc_matrix_destroy(m);
}

TEST_F(TsparseSpgemmApi, NumericAfterNewValues) {
  Triplets ta = rounded_to_float(random_triplets(120, 90, 0.05, fresh_seed()));
  const Triplets tb = rounded_to_float(random_triplets(90, 100, 0.05, fresh_seed()));
  sparsetc_matrix_t A = device_csr(ta, SPARSETC_VALUE_F32), B = device_csr(tb, SPARSETC_VALUE_F32);
  sparsetc_spgemm_plan_t p = nullptr;
  ASSERT_OK(gpu_, plan(&p, A, B, SPARSETC_TC_PRECISION_BF16));
  int64_t nnz = 0;
  ASSERT_OK(gpu_, sparsetc_spgemm_symbolic(p, &nnz));
  sparsetc_matrix_t C = nullptr;
  ASSERT_OK(gpu_, sparsetc_spgemm_numeric(p, &C));
  EXPECT_TRUE(matches(entries_of(C), ta, tb, SPARSETC_TC_PRECISION_BF16));
  EXPECT_EQ(sparsetc_spgemm_numeric(p, &C), SPARSETC_STATUS_INVALID_VALUE);  // the pattern depends on the values
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(-3, 3);
  for (auto& e : ta.entries) e.second = double(float(u(rng)));
  auto arrays = to_csr<int32_t, int32_t>(ta);
  DeviceArray<float> values(std::vector<float>(arrays.val.begin(), arrays.val.end()));
  ASSERT_OK(gpu_, sparsetc_matrix_set_values(gpu_, A, values.get()));
  sparsetc_matrix_t again = nullptr;
  ASSERT_OK(gpu_, sparsetc_spgemm_numeric(p, &again));
  EXPECT_TRUE(matches(entries_of(again), ta, tb, SPARSETC_TC_PRECISION_BF16));
  sparsetc_spgemm_plan_destroy(p);
  for (auto m : {A, B, C, again}) sparsetc_matrix_destroy(m);
}

// AUTO takes the tensor cores only for half-precision operands (or an explicit tc_precision) and only
// where the rule of docs/spgemm.md holds: a band of half-width 24 (49 entries per row, full tiles,
// 400k entries) qualifies, a small or f32 problem does not.
TEST_F(TsparseSpgemmApi, AutoTakesItOnlyForHalfOperandsWithDenseTiles) {
  Triplets band{8192, 8192, {}};
  for (int64_t i = 0; i < band.rows; ++i)
    for (int64_t j = std::max<int64_t>(0, i - 24); j <= std::min<int64_t>(band.cols - 1, i + 24); ++j)
      band.entries[{i, j}] = double((i + j) % 3 + 1);
  auto chosen = [&](sparsetc_matrix_t A, sparsetc_tc_precision_t precision, int64_t* nnz) {
    sparsetc_spgemm_options_t options{};
    options.struct_size = sizeof options;
    options.drop_tolerance = -1;
    options.tc_precision = precision;
    sparsetc_spgemm_plan_t p = nullptr;
    EXPECT_EQ(sparsetc_spgemm_plan_create(gpu_, &p, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, A,
                                          SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, &options),
              SPARSETC_STATUS_SUCCESS)
        << last_error(gpu_);
    sparsetc_spgemm_alg_t alg = -1;
    char reason[512];
    EXPECT_EQ(sparsetc_spgemm_plan_get_alg(p, &alg, reason, sizeof reason), SPARSETC_STATUS_SUCCESS);
    EXPECT_EQ(sparsetc_spgemm_symbolic(p, nnz), SPARSETC_STATUS_SUCCESS) << last_error(gpu_);
    sparsetc_spgemm_plan_destroy(p);
    return alg;
  };
  int64_t nnz_half = -1, nnz_f32 = -1, nnz_asked = -1, nnz_small = -1;
  sparsetc_matrix_t H = device_csr(band, SPARSETC_VALUE_F16), F = device_csr(band, SPARSETC_VALUE_F32);
  EXPECT_EQ(chosen(H, SPARSETC_TC_PRECISION_DEFAULT, &nnz_half), SPARSETC_SPGEMM_ALG_TSPARSE_TC);
  EXPECT_EQ(chosen(F, SPARSETC_TC_PRECISION_DEFAULT, &nnz_f32), SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH);
  EXPECT_EQ(chosen(F, SPARSETC_TC_PRECISION_BF16, &nnz_asked), SPARSETC_SPGEMM_ALG_TSPARSE_TC);
  EXPECT_EQ(nnz_half, nnz_f32);  // integer values: nothing cancels, same pattern
  EXPECT_EQ(nnz_asked, nnz_f32);
  const Triplets small = random_triplets(200, 200, 0.3, fresh_seed());
  sparsetc_matrix_t S = device_csr(small, SPARSETC_VALUE_F16);
  EXPECT_EQ(chosen(S, SPARSETC_TC_PRECISION_DEFAULT, &nnz_small), SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH);
  for (auto m : {H, F, S}) sparsetc_matrix_destroy(m);
}

TEST_F(TsparseSpgemmApi, EveryOutputWrittenUnderPoisonedAllocations) {
  const sparsetc_allocator_t poison = poisoning_allocator();
  ASSERT_OK(gpu_, sparsetc_set_allocator(gpu_, &poison));
  for (auto precision : {SPARSETC_TC_PRECISION_F16, SPARSETC_TC_PRECISION_F64, SPARSETC_TC_PRECISION_CUDA_CORES}) {
    const Triplets ta = rounded_to_float(random_triplets(133, 122, 0.08, fresh_seed()));
    const Triplets tb = rounded_to_float(random_triplets(122, 111, 0.3, fresh_seed()));
    const sparsetc_value_type_t type = precision == SPARSETC_TC_PRECISION_F64 ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
    sparsetc_matrix_t A = device_csr(ta, type), B = device_csr(tb, type);
    sparsetc_matrix_t C = multiply(A, B, precision);
    ASSERT_NE(C, nullptr);
    EXPECT_TRUE(matches(entries_of(C), ta, tb, precision));
    for (auto m : {A, B, C}) sparsetc_matrix_destroy(m);
  }
}

}  // namespace

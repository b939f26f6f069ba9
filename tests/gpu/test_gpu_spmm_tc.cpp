// SpMM on tensor cores (SPARSETC_SPMM_ALG_BCSR_TC) through the C API: every precision (f16 and
// bf16 with fp32 accumulation and fp32 or half C, tf32, f64), both layouts, leading dimensions
// past N, odd M/K/N, alpha/beta with a NaN-poisoned C where beta = 0, op(A) = A^T, the plan's own
// 1-SA reordering and a caller-reordered matrix (answers in the original row order), new values
// through set_values, bitwise repeats, AUTO's choice, and the fp16 range check. The reference is
// float64 over the inputs as the kernel sees them (rounded to the storage type); the bound per
// element is the precision's unit roundoff times sum |a||b| (printed as the measured error).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <random>

#include "dense_values.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

enum class Precision { f16, bf16, tf32, f64 };

sparsetc_value_type_t input_type(Precision p) {
  return p == Precision::f16    ? SPARSETC_VALUE_F16
         : p == Precision::bf16 ? SPARSETC_VALUE_BF16
         : p == Precision::tf32 ? SPARSETC_VALUE_F32
                                : SPARSETC_VALUE_F64;
}
sparsetc_compute_type_t compute_type(Precision p) {
  return p == Precision::tf32 ? SPARSETC_COMPUTE_TF32 : p == Precision::f64 ? SPARSETC_COMPUTE_64F : SPARSETC_COMPUTE_32F;
}

// A matrix of dense-ish blocks (so the tensor cores have work), plus scattered entries and empty
// rows; rows optionally scrambled (the 1-SA paper's test matrices).
Triplets block_matrix(int64_t m, int64_t k, int block, double block_density, double entry_density,
                      bool scramble, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Triplets t{m, k, {}};
  std::vector<int64_t> row_of(static_cast<size_t>(m));
  std::iota(row_of.begin(), row_of.end(), int64_t(0));
  if (scramble) std::shuffle(row_of.begin(), row_of.end(), rng);
  for (int64_t bi = 0; bi * block < m; ++bi)
    for (int64_t bj = 0; bj * block < k; ++bj) {
      if (u(rng) >= block_density) continue;
      for (int64_t i = bi * block; i < std::min(m, (bi + 1) * block); ++i)
        for (int64_t j = bj * block; j < std::min(k, (bj + 1) * block); ++j)
          if (u(rng) < 0.7) t.entries[{row_of[size_t(i)], j}] = (u(rng) < 0.5 ? -1 : 1) * (0.25 + u(rng));
    }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j)
      if (u(rng) < entry_density) t.entries[{i, j}] = (u(rng) < 0.5 ? -1 : 1) * (0.25 + u(rng));
  for (int64_t i = 3; i < m; i += 17)  // empty rows
    for (int64_t j = 0; j < k; ++j) t.entries.erase({i, j});
  return t;
}

struct TcCase {
  Precision precision;
  sparsetc_value_type_t c_type;
  sparsetc_order_t order;
  int64_t m, k, n;
  double alpha, beta;
  sparsetc_operation_t op = SPARSETC_OP_NON_TRANSPOSE;
};

// Unit roundoff of what the kernel accumulates (inputs are exact in the reference already) plus
// the output rounding.
double accumulation_bound(Precision p) {
  return p == Precision::f64 ? 1e-14 : p == Precision::tf32 ? std::ldexp(1.0, -10) : 1e-5;
}

// Everything one multiply needs on the device, and the check of its result.
class TcRun {
 public:
  TcRun(sparsetc_handle_t h, const TcCase& c, const Triplets& a_in) : h_(h), c_(c) {
    const sparsetc_value_type_t in = input_type(c.precision);
    // op(A) is M x K: for the transpose the stored matrix is K x M.
    a_ = a_in;
    auto csr = to_csr<int32_t, int32_t>(a_);
    std::vector<uint8_t> a_bytes = pack(csr.val, in);
    // tf32 rounds inside the kernel: the reference keeps the fp32 values and widens the bound.
    const std::vector<double> a_vals = unpack(a_bytes, in);
    size_t e = 0;
    for (auto& [rc, v] : a_.entries) v = a_vals[e++];
    rp_ = std::make_unique<DeviceArray<int32_t>>(csr.row_ptr);
    ci_ = std::make_unique<DeviceArray<int32_t>>(csr.col);
    av_ = std::make_unique<DeviceArray<uint8_t>>(a_bytes);
    EXPECT_EQ(sparsetc_matrix_create_csr(h, &A_, a_.rows, a_.cols, int64_t(csr.col.size()), rp_->get(), ci_->get(),
                                         av_->get(), SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, in,
                                         SPARSETC_MEMORY_DEVICE, SPARSETC_COPY),
              SPARSETC_STATUS_SUCCESS)
        << last_error(h);
    std::mt19937_64 rng(fresh_seed());
    std::uniform_real_distribution<double> u(-1, 1);
    b_.resize(size_t(c.k * c.n));
    c0_.resize(size_t(c.m * c.n));
    for (auto& x : b_) x = u(rng);
    for (auto& x : c0_) x = u(rng);
    ldb_ = row() ? c.n + 5 : c.k + 3;
    ldc_ = row() ? c.n + 3 : c.m + 1;
    // Padding of B is NaN: a kernel reading past N or K poisons its result.
    std::vector<double> b_store(size_t(ldb_ * (row() ? c.k : c.n)), std::numeric_limits<double>::quiet_NaN());
    for (int64_t i = 0; i < c.k; ++i)
      for (int64_t j = 0; j < c.n; ++j) b_store[at(i, j, ldb_)] = b_[size_t(i * c.n + j)];
    std::vector<uint8_t> b_bytes = pack(b_store, in);
    const std::vector<double> b_round = unpack(b_bytes, in);
    for (int64_t i = 0; i < c.k; ++i)
      for (int64_t j = 0; j < c.n; ++j) b_[size_t(i * c.n + j)] = b_round[at(i, j, ldb_)];
    c_store_.assign(size_t(ldc_ * (row() ? c.m : c.n)), -7.0);  // padding sentinel
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        c_store_[at(i, j, ldc_)] = c.beta == 0 ? std::numeric_limits<double>::quiet_NaN() : c0_[size_t(i * c.n + j)];
    std::vector<uint8_t> c_bytes = pack(c_store_, c.c_type);
    c_store_ = unpack(c_bytes, c.c_type);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) c0_[size_t(i * c.n + j)] = c_store_[at(i, j, ldc_)];
    bd_ = std::make_unique<DeviceArray<uint8_t>>(b_bytes);
    cd_ = std::make_unique<DeviceArray<uint8_t>>(c_bytes);
    c_initial_ = c_bytes;
    EXPECT_EQ(sparsetc_dense_create(h, &B_, c.k, c.n, ldb_, bd_->get(), in, c.order, SPARSETC_MEMORY_DEVICE),
              SPARSETC_STATUS_SUCCESS);
    EXPECT_EQ(sparsetc_dense_create(h, &C_, c.m, c.n, ldc_, cd_->get(), c.c_type, c.order, SPARSETC_MEMORY_DEVICE),
              SPARSETC_STATUS_SUCCESS);
  }
  ~TcRun() {
    sparsetc_spmm_plan_destroy(plan_);
    sparsetc_dense_destroy(B_);
    sparsetc_dense_destroy(C_);
    sparsetc_matrix_destroy(A_);
  }

  sparsetc_status_t plan(sparsetc_spmm_alg_t alg, sparsetc_matrix_t A = nullptr) {
    sparsetc_spmm_plan_destroy(plan_);
    plan_ = nullptr;
    return sparsetc_spmm_plan_create(h_, &plan_, c_.op, A ? A : A_, B_, C_, compute_type(c_.precision), alg);
  }
  sparsetc_status_t execute() { return sparsetc_spmm_execute(plan_, c_.alpha, B_, c_.beta, C_, nullptr, 0); }
  std::vector<uint8_t> c_bytes() const { return cd_->download(); }
  // Puts C back to its initial contents (beta != 0 reads them again).
  void reset_c() const {
    ASSERT_EQ(cudaMemcpy(cd_->get(), c_initial_.data(), c_initial_.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::string plan_reason(sparsetc_spmm_alg_t* alg) const {
    char reason[512] = {0};
    EXPECT_EQ(sparsetc_spmm_plan_get_alg(plan_, alg, reason, sizeof reason), SPARSETC_STATUS_SUCCESS);
    return reason;
  }
  sparsetc_matrix_t matrix() const { return A_; }
  const Triplets& a() const { return a_; }
  void replace_a(const Triplets& a) { a_ = a; }

  // Checks every element of C against the float64 reference, the padding against the sentinel;
  // returns the largest error relative to sum |a||b| (the bound's unit).
  double check() const {
    std::vector<double> got = unpack(cd_->download(), c_.c_type);
    const int64_t m = c_.m, n = c_.n;
    std::vector<double> want(size_t(m * n), 0.0), scale(size_t(m * n), 0.0);
    for (const auto& [rc, v] : a_.entries) {
      const int64_t i = c_.op == SPARSETC_OP_NON_TRANSPOSE ? rc.first : rc.second;
      const int64_t l = c_.op == SPARSETC_OP_NON_TRANSPOSE ? rc.second : rc.first;
      for (int64_t j = 0; j < n; ++j) {
        want[size_t(i * n + j)] += v * b_[size_t(l * n + j)];
        scale[size_t(i * n + j)] += std::fabs(v * b_[size_t(l * n + j)]);
      }
    }
    double worst = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t k = size_t(i * n + j);
        const double w = c_.alpha * want[k] + (c_.beta != 0 ? c_.beta * c0_[k] : 0.0);
        const double s = std::fabs(c_.alpha) * scale[k] + std::fabs(c_.beta * (c_.beta != 0 ? c0_[k] : 0.0));
        const double g = got[at(i, j, ldc_)];
        EXPECT_TRUE(std::isfinite(g)) << "C(" << i << "," << j << ") not written";
        if (!std::isfinite(g)) return INFINITY;
        const double err = std::fabs(g - w);
        const double bound = accumulation_bound(c_.precision) * (s + 1e-30) + output_bound(c_.c_type) * std::fabs(w) +
                             output_floor(c_.c_type);
        EXPECT_LE(err, bound * 1.0001 + 1e-300) << "C(" << i << "," << j << ") = " << g << ", want " << w;
        if (err > bound * 1.0001 + 1e-300) return err;
        worst = std::max(worst, s > 0 ? err / s : err);
      }
    for (int64_t o = 0; o < (row() ? m : n); ++o)
      for (int64_t p = row() ? n : m; p < ldc_; ++p) EXPECT_EQ(got[size_t(o * ldc_ + p)], -7.0) << "padding written";
    return worst;
  }

 private:
  bool row() const { return c_.order == SPARSETC_ORDER_ROW; }
  size_t at(int64_t i, int64_t j, int64_t ld) const { return size_t(row() ? i * ld + j : i + j * ld); }

  sparsetc_handle_t h_;
  TcCase c_;
  Triplets a_;
  std::vector<double> b_, c0_, c_store_;
  std::vector<uint8_t> c_initial_;
  int64_t ldb_ = 0, ldc_ = 0;
  std::unique_ptr<DeviceArray<int32_t>> rp_, ci_;
  std::unique_ptr<DeviceArray<uint8_t>> av_, bd_, cd_;
  sparsetc_matrix_t A_ = nullptr;
  sparsetc_dense_t B_ = nullptr, C_ = nullptr;
  sparsetc_spmm_plan_t plan_ = nullptr;
};

const char* precision_name(Precision p) {
  return p == Precision::f16 ? "f16" : p == Precision::bf16 ? "bf16" : p == Precision::tf32 ? "tf32" : "f64";
}

class GpuSpmmTc : public GpuTest, public ::testing::WithParamInterface<TcCase> {};

TEST_P(GpuSpmmTc, MatchesFloat64ReferenceWithinThePrecisionsBound) {
  const TcCase c = GetParam();
  const int64_t stored_rows = c.op == SPARSETC_OP_NON_TRANSPOSE ? c.m : c.k;
  const int64_t stored_cols = c.op == SPARSETC_OP_NON_TRANSPOSE ? c.k : c.m;
  TcRun run(gpu_, c, block_matrix(stored_rows, stored_cols, 16, 0.3, 0.01, false, fresh_seed()));
  ASSERT_OK(gpu_, run.plan(SPARSETC_SPMM_ALG_BCSR_TC));
  sparsetc_spmm_alg_t alg = 0;
  const std::string reason = run.plan_reason(&alg);
  EXPECT_EQ(alg, SPARSETC_SPMM_ALG_BCSR_TC) << reason;
  ASSERT_OK(gpu_, run.execute());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const double error = run.check();
  std::cout << "[ error ] " << precision_name(c.precision) << ": max |C - C_ref| / sum|a||b| = " << error << " ("
            << reason << ")\n";
  // The same bits on a second run.
  const std::vector<uint8_t> first = run.c_bytes();
  ASSERT_OK(gpu_, run.execute());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  if (c.beta == 0) {
    EXPECT_EQ(run.c_bytes(), first) << "not deterministic";
  }
}

std::string tc_name(const ::testing::TestParamInfo<TcCase>& info) {
  const TcCase& c = info.param;
  const char* ct = c.c_type == SPARSETC_VALUE_F32 ? "c32" : c.c_type == SPARSETC_VALUE_F64 ? "c64" : "chalf";
  return std::string(precision_name(c.precision)) + "_" + ct + (c.order == SPARSETC_ORDER_ROW ? "_row" : "_col") +
         "_" + std::to_string(c.m) + "x" + std::to_string(c.k) + "_n" + std::to_string(c.n) +
         (c.op == SPARSETC_OP_TRANSPOSE ? "_T" : "") + "_" + std::to_string(info.index);
}

constexpr auto ROW = SPARSETC_ORDER_ROW;
constexpr auto COL = SPARSETC_ORDER_COL;
constexpr auto F16 = SPARSETC_VALUE_F16;
constexpr auto BF16 = SPARSETC_VALUE_BF16;
constexpr auto F32 = SPARSETC_VALUE_F32;
constexpr auto F64 = SPARSETC_VALUE_F64;

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuSpmmTc,
    ::testing::Values(TcCase{Precision::f16, F32, ROW, 203, 150, 33, 1.0, 0.0},
                      TcCase{Precision::f16, F32, COL, 203, 150, 9, -1.5, 0.5},
                      TcCase{Precision::f16, F16, ROW, 64, 48, 128, 1.0, 0.0},
                      TcCase{Precision::f16, F32, ROW, 37, 53, 1, 2.0, -1.0},
                      TcCase{Precision::f16, F32, ROW, 300, 211, 130, 1.0, 1.0},
                      TcCase{Precision::f16, F32, ROW, 97, 160, 40, 1.0, 0.0, SPARSETC_OP_TRANSPOSE},
                      TcCase{Precision::bf16, F32, ROW, 203, 150, 64, 1.0, 0.0},
                      TcCase{Precision::bf16, BF16, COL, 129, 77, 17, 0.5, 2.0},
                      TcCase{Precision::tf32, F32, ROW, 203, 150, 33, 1.0, 0.0},
                      TcCase{Precision::tf32, F32, COL, 61, 99, 8, 1.0, -0.5},
                      TcCase{Precision::f64, F64, ROW, 203, 150, 33, 1.0, 0.0},
                      TcCase{Precision::f64, F64, COL, 45, 31, 7, -2.0, 0.25}),
    tc_name);

// The plan's own 1-SA: a scrambled block matrix gets fewer blocks, and C comes back in the
// original row order.
TEST_F(GpuTest, TensorCorePlanReordersScrambledBlocksAndAnswersInOriginalOrder) {
  const TcCase c{Precision::f16, F32, ROW, 512, 384, 32, 1.0, 0.0};
  TcRun run(gpu_, c, block_matrix(c.m, c.k, 16, 0.15, 0.0, true, fresh_seed()));
  ASSERT_OK(gpu_, run.plan(SPARSETC_SPMM_ALG_BCSR_TC));
  sparsetc_spmm_alg_t alg = 0;
  const std::string reason = run.plan_reason(&alg);
  EXPECT_NE(reason.find("1-SA reordering"), std::string::npos) << reason;
  ASSERT_OK(gpu_, run.execute());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  run.check();
}

// A matrix the caller reordered (sparsetc_matrix_reorder) multiplies in the original row order.
TEST_F(GpuTest, TensorCorePlanOnACallerReorderedMatrixAnswersInOriginalOrder) {
  const TcCase c{Precision::bf16, F32, COL, 256, 200, 24, 1.0, 0.5};
  TcRun run(gpu_, c, block_matrix(c.m, c.k, 16, 0.2, 0.002, true, fresh_seed()));
  sparsetc_matrix_t reordered = nullptr;
  ASSERT_OK(gpu_, sparsetc_matrix_reorder(gpu_, run.matrix(), SPARSETC_REORDER_ONE_SA, nullptr, &reordered));
  for (sparsetc_spmm_alg_t alg : {SPARSETC_SPMM_ALG_BCSR_TC, SPARSETC_SPMM_ALG_AUTO}) {
    run.reset_c();
    ASSERT_OK(gpu_, run.plan(alg, reordered));
    ASSERT_OK(gpu_, run.execute());
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    run.check();
  }
  sparsetc_matrix_destroy(reordered);
}

// New values through set_values reach the next execution of the same plan.
TEST_F(GpuTest, TensorCorePlanSeesNewValues) {
  const TcCase c{Precision::f16, F32, ROW, 100, 90, 16, 1.0, 0.0};
  TcRun run(gpu_, c, block_matrix(c.m, c.k, 16, 0.4, 0.0, false, fresh_seed()));
  ASSERT_OK(gpu_, run.plan(SPARSETC_SPMM_ALG_BCSR_TC));
  ASSERT_OK(gpu_, run.execute());
  Triplets doubled = run.a();
  std::vector<double> values;
  for (auto& [rc, v] : doubled.entries) values.push_back(v *= -2.0);
  const std::vector<uint8_t> bytes = pack(values, F16);
  DeviceArray<uint8_t> device(bytes);
  ASSERT_OK(gpu_, sparsetc_matrix_set_values(gpu_, run.matrix(), device.get()));
  run.replace_a(doubled);
  ASSERT_OK(gpu_, run.execute());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  run.check();
}

// A band of 16 panels splits every panel into chunks at narrow B, so each multiply counts the chunks
// of a panel as they arrive; the plan keeps those counters and every multiply leaves them zero for
// the next: repeated multiplies, and those after new values (a new operand), stay right.
TEST_F(GpuTest, TensorCorePlanRunsSplitPanelsRepeatedly) {
  const TcCase c{Precision::f16, F32, ROW, 2040, 2040, 8, 1.0, 0.5};
  Triplets band{c.m, c.k, {}};
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = std::max<int64_t>(0, i - 300); j <= std::min<int64_t>(c.k - 1, i + 300); ++j)
      band.entries[{i, j}] = 0.25 + double((i * 5 + j * 3) % 7) / 8;
  TcRun run(gpu_, c, band);
  ASSERT_OK(gpu_, run.plan(SPARSETC_SPMM_ALG_BCSR_TC));
  sparsetc_spmm_alg_t alg = 0;
  const std::string reason = run.plan_reason(&alg);
  EXPECT_NE(reason.find(" work items"), std::string::npos) << "no panel was split: " << reason;
  for (int repeat = 0; repeat < 3; ++repeat) {
    SCOPED_TRACE("multiply " + std::to_string(repeat));
    run.reset_c();
    ASSERT_OK(gpu_, run.execute());
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    run.check();
  }
  Triplets negated = run.a();
  std::vector<double> values;
  for (auto& [rc, v] : negated.entries) values.push_back(v = -v);
  const std::vector<uint8_t> bytes = pack(values, F16);
  DeviceArray<uint8_t> device(bytes);
  ASSERT_OK(gpu_, sparsetc_matrix_set_values(gpu_, run.matrix(), device.get()));
  run.replace_a(negated);
  for (int repeat = 0; repeat < 2; ++repeat) {
    SCOPED_TRACE("multiply " + std::to_string(repeat) + " after new values");
    run.reset_c();
    ASSERT_OK(gpu_, run.execute());
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    run.check();
  }
}

// AUTO takes the tensor cores where blocks fill (a band) at narrow B and leaves scattered matrices
// (and, in this version, wide B) to others.
TEST_F(GpuTest, AutoTakesTensorCoresWhereBlocksFill) {
  const TcCase c{Precision::f16, F32, ROW, 512, 512, 32, 1.0, 0.0};
  Triplets band{512, 512, {}};
  for (int64_t i = 0; i < 512; ++i)
    for (int64_t j = std::max<int64_t>(0, i - 24); j <= std::min<int64_t>(511, i + 24); ++j)
      band.entries[{i, j}] = 1.0 + double((i * 7 + j) % 5) / 8;
  TcRun dense_blocks(gpu_, c, band);
  ASSERT_OK(gpu_, dense_blocks.plan(SPARSETC_SPMM_ALG_AUTO));
  sparsetc_spmm_alg_t alg = 0;
  std::string reason = dense_blocks.plan_reason(&alg);
  EXPECT_EQ(alg, SPARSETC_SPMM_ALG_BCSR_TC) << reason;
  EXPECT_NE(reason.find("rule 1"), std::string::npos) << reason;
  ASSERT_OK(gpu_, dense_blocks.execute());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  dense_blocks.check();

  TcRun scattered(gpu_, c, random_triplets(512, 512, 0.002, fresh_seed()));
  ASSERT_OK(gpu_, scattered.plan(SPARSETC_SPMM_ALG_AUTO));
  reason = scattered.plan_reason(&alg);
  EXPECT_NE(alg, SPARSETC_SPMM_ALG_BCSR_TC) << reason;
  EXPECT_NE(reason.find("rule "), std::string::npos) << reason;  // the selector names the rule that fired
  ASSERT_OK(gpu_, scattered.execute());
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  scattered.check();
}

// Mixed input types and out-of-range values are refused with their own status, not rounded away.
TEST_F(GpuTest, TensorCorePlanRefusesWhatItCannotComputeExactly) {
  const TcCase c{Precision::f16, F32, ROW, 40, 40, 8, 1.0, 0.0};
  TcRun run(gpu_, c, block_matrix(40, 40, 16, 0.5, 0.0, false, fresh_seed()));
  // f16 inputs with fp64 compute: not a tensor-core precision.
  sparsetc_spmm_plan_t plan = nullptr;
  sparsetc_dense_t B = nullptr, C = nullptr;
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &B, 40, 8, 8, nullptr, F32, ROW, SPARSETC_MEMORY_DEVICE));
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &C, 40, 8, 8, nullptr, F32, ROW, SPARSETC_MEMORY_DEVICE));
  EXPECT_EQ(sparsetc_spmm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, run.matrix(), B, C,
                                      SPARSETC_COMPUTE_32F, SPARSETC_SPMM_ALG_BCSR_TC),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_NE(last_error(gpu_).find("one value type"), std::string::npos) << last_error(gpu_);
  sparsetc_dense_destroy(B);
  sparsetc_dense_destroy(C);

  // An f32 matrix with a value beyond fp16's range, converted to f16 for the tensor cores.
  Triplets big = block_matrix(40, 40, 16, 0.5, 0.0, false, fresh_seed());
  big.entries.begin()->second = 1e6;
  const TcCase f32_case{Precision::tf32, F32, ROW, 40, 40, 8, 1.0, 0.0};
  TcRun f32_run(gpu_, f32_case, big);
  sparsetc_matrix_t half = nullptr;
  EXPECT_EQ(sparsetc_matrix_convert(gpu_, f32_run.matrix(), SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                    SPARSETC_BASE_ZERO, F16, &half),
            SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
  EXPECT_EQ(half, nullptr);
}

}  // namespace

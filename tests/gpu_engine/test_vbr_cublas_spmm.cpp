// The VBR-cuBLAS SpMM (1-SA blocks through grouped cuBLAS) against a float64 CPU reference: every
// precision (f16/bf16 with fp32 accumulation, exact fp32, tf32, f64), row- and column-major B and C
// with padded leading dimensions, alpha/beta, odd sizes, empty rows and empty row groups, op = T,
// both schedules (gathered panel, waves), chunked panels, the batched fallback, scrambled block
// matrices, determinism. C is poisoned with NaN (beta = 0) to prove every element is written.
// The largest error observed per precision, relative to sum |alpha a b| + |beta c|, is printed.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/spmm_vbr_cublas.hpp"
#include "gen/generators.hpp"
#include "test_cuda_core_spmm_support.hpp"
#include "test_support.hpp"

namespace {

using namespace cuda_core_test;

struct Precision {
  const char* name;
  sparsetc_compute_type_t compute;
  sparsetc_value_type_t in, c;
  double tolerance;  // relative to sum |alpha a b| + |beta c|, before C's own rounding
};
// f16/bf16: products exact in fp32, the error is the fp32 accumulation over K = blocks * width
// (up to ~400 here: gamma_K = K 2^-24 ~ 2.4e-5). tf32: A and B rounded to 10-bit mantissas inside
// the tensor cores (up to 2 * 2^-10 per product when truncated).
const Precision kF16{"f16", SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F16, SPARSETC_VALUE_F32, 4e-5};
const Precision kF16C16{"f16 C f16", SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F16, SPARSETC_VALUE_F16, 4e-5};
const Precision kBf16{"bf16", SPARSETC_COMPUTE_32F, SPARSETC_VALUE_BF16, SPARSETC_VALUE_F32, 4e-5};
const Precision kBf16C16{"bf16 C bf16", SPARSETC_COMPUTE_32F, SPARSETC_VALUE_BF16, SPARSETC_VALUE_BF16, 4e-5};
const Precision kF32{"f32", SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F32, SPARSETC_VALUE_F32, 4e-5};
const Precision kTf32{"tf32", SPARSETC_COMPUTE_TF32, SPARSETC_VALUE_F32, SPARSETC_VALUE_F32, 2.5e-3};
const Precision kF64{"f64", SPARSETC_COMPUTE_64F, SPARSETC_VALUE_F64, SPARSETC_VALUE_F64, 1e-13};
const Precision kAll[] = {kF16, kF16C16, kBf16, kBf16C16, kF32, kTf32, kF64};

std::map<std::string, double>& worst() {
  static std::map<std::string, double> w;
  return w;
}

struct PrintWorst : ::testing::Environment {
  void TearDown() override {
    for (const auto& [name, e] : worst())
      std::printf("VBR-cuBLAS largest relative error, %s: %.3e\n", name.c_str(), e);
  }
};
const auto* const kPrintWorst = ::testing::AddGlobalTestEnvironment(new PrintWorst);

struct Case {
  Precision precision = kF32;
  sparsetc_operation_t op = SPARSETC_OP_NON_TRANSPOSE;
  sparsetc_order_t b_order = SPARSETC_ORDER_ROW, c_order = SPARSETC_ORDER_ROW;
  int64_t n = 37, pad = 0, offset = 0;
  double alpha = 1.25, beta = 0;
  sd::VbrCublasOptions options;
  std::string name() const {
    std::ostringstream s;
    s << precision.name << (op == SPARSETC_OP_TRANSPOSE ? " op=T" : "") << " B "
      << (b_order == SPARSETC_ORDER_ROW ? "row" : "col") << " C " << (c_order == SPARSETC_ORDER_ROW ? "row" : "col")
      << " N " << n << " pad " << pad << " alpha " << alpha << " beta " << beta << " "
      << sd::vbr_schedule_name(options.multiply.schedule) << " width " << options.block_width << " tau "
      << options.tau << (options.multiply.grouped_api ? "" : " batched") << " chunk " << options.multiply.chunk_bytes;
    return s.str();
  }
};

// A device CSR matrix with values stored in `type` (rounded on the host); `rounded` gets the values
// as stored.
DeviceMatrix upload_as(GpuHandle& g, const sd::CsrMatrix<double>& a, sparsetc_value_type_t type,
                       sd::CsrMatrix<double>& rounded) {
  rounded = a;
  const size_t nnz = a.col_idx.size(), e = element_bytes(type);
  std::vector<unsigned char> values(std::max<size_t>(nnz, 1) * e);
  for (size_t i = 0; i < nnz; ++i) rounded.values[i] = store_value(type, a.values[i], values.data() + i * e);
  return upload_values(g, a, values.data(), e, type);
}

double output_roundoff(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F64 ? std::ldexp(1.0, -53)
         : t == SPARSETC_VALUE_F32 ? std::ldexp(1.0, -24)
         : t == SPARSETC_VALUE_F16 ? std::ldexp(1.0, -11)
                                   : std::ldexp(1.0, -8);
}

// Runs the case on `a` (values as given; rounded to the input type here) and checks C element by
// element; repeats: runs again from the same C and requires the same bits.
::testing::AssertionResult run_case(GpuHandle& g, const sd::CsrMatrix<double>& a, const Case& c, int repeats = 2,
                                    sd::VbrCublasInfo* info_out = nullptr) {
  sd::CsrMatrix<double> stored;
  DeviceMatrix da = upload_as(g, a, c.precision.in, stored);
  const sd::CsrMatrix<double> opa = c.op == SPARSETC_OP_TRANSPOSE ? transpose(stored) : stored;
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  Dense B(opa.cols, c.n, c.b_order, c.precision.in, c.pad, c.offset);
  Dense C(opa.rows, c.n, c.c_order, c.precision.c, c.pad, c.offset);
  std::vector<double> c0(size_t(opa.rows * c.n));
  for (int64_t r = 0; r < B.rows; ++r)
    for (int64_t col = 0; col < B.cols; ++col) B.set(r, col, random_entry(rng));
  for (int64_t r = 0; r < C.rows; ++r)
    for (int64_t col = 0; col < C.cols; ++col)
      c0[size_t(r * c.n + col)] = C.set(r, col, c.beta != 0 ? random_entry(rng) : std::nan(""));
  B.to_device(g);
  C.to_device(g);
  const std::vector<unsigned char> original = C.host;
  sd::SpmmProblem problem;
  problem.op = c.op;
  problem.A = da.matrix.get();
  problem.B = B.shape();
  problem.C = C.shape();
  problem.compute = c.precision.compute;
  try {
    std::string reason;
    sd::VbrCublasInfo info;
    auto e = sd::make_vbr_cublas_spmm(g.handle, problem, reason, c.options, &info);
    if (info_out) *info_out = info;
    if (e->workspace_size() != 0) return ::testing::AssertionFailure() << "unexpected workspace";
    e->execute(c.alpha, B.desc(), c.beta, C.desc(), nullptr, 0);
    C.to_host(g);
    // reference
    const double out_u = output_roundoff(c.precision.c);
    double worst_rel = 0;
    int64_t bad = 0;
    std::ostringstream first;
    std::vector<double> sum(size_t(c.n)), scale(size_t(c.n));
    for (int64_t r = 0; r < opa.rows; ++r) {
      std::fill(sum.begin(), sum.end(), 0.0);
      std::fill(scale.begin(), scale.end(), 0.0);
      for (int64_t j = opa.row_ptr[size_t(r)]; j < opa.row_ptr[size_t(r + 1)]; ++j)
        for (int64_t col = 0; col < c.n; ++col) {
          const double p = opa.values[size_t(j)] * B.get(opa.col_idx[size_t(j)], col);
          sum[size_t(col)] += p;
          scale[size_t(col)] += std::fabs(p);
        }
      for (int64_t col = 0; col < c.n; ++col) {
        const double old = c0[size_t(r * c.n + col)];
        const double want = c.alpha * sum[size_t(col)] + (c.beta != 0 ? c.beta * old : 0.0);
        const double s = std::fabs(c.alpha) * scale[size_t(col)] + (c.beta != 0 ? std::fabs(c.beta * old) : 0.0);
        const double got = C.get(r, col);
        const double err = std::fabs(got - want);
        const double rounding = 2 * out_u * std::fabs(want);
        if (s > 0) worst_rel = std::max(worst_rel, std::max(0.0, err - rounding) / s);
        if (!(err <= c.precision.tolerance * s + rounding + 1e-300) && bad++ == 0)
          first << "C(" << r << ", " << col << ") = " << got << ", want " << want << " (scale " << s << ")";
      }
    }
    double& w = worst()[c.precision.name];
    w = std::max(w, worst_rel);
    // padding untouched (still NaN)
    std::vector<char> logical(C.host.size() / element_bytes(C.type), 0);
    for (int64_t r = 0; r < C.rows; ++r)
      for (int64_t col = 0; col < C.cols; ++col) logical[C.at(r, col) / element_bytes(C.type)] = 1;
    int64_t touched = 0;
    for (size_t i = 0; i < logical.size(); ++i)
      if (!logical[i] && !std::isnan(load_value(C.type, C.host.data() + i * element_bytes(C.type)))) ++touched;
    if (bad || touched)
      return ::testing::AssertionFailure() << c.name() << ": " << bad << " wrong of " << opa.rows * c.n << " ("
                                           << first.str() << "), " << touched << " padding elements written; plan: "
                                           << reason;
    const std::vector<unsigned char> result = C.host;
    for (int r = 1; r < repeats; ++r) {
      sd::copy_host_to_device(C.device.data(), original.data(), original.size(), g.stream);
      e->execute(c.alpha, B.desc(), c.beta, C.desc(), nullptr, 0);
      C.to_host(g);
      if (C.host != result) return ::testing::AssertionFailure() << c.name() << ": run " << r << " differs in its bits";
    }
  } catch (const sd::Error& error) {
    return ::testing::AssertionFailure() << c.name() << ": status " << error.status() << ": " << error.what();
  }
  return ::testing::AssertionSuccess();
}

// Odd sizes, rows of every length (empty, short, longer than a block, dense), clustered so that
// 1-SA finds groups, and a run of empty rows (an empty row group).
sd::CsrMatrix<double> mixed_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> lengths(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t kind = rng() % 8;
    lengths[size_t(r)] = kind == 0 ? 0 : kind == 1 ? int64_t(rng() % 3) : kind == 7 ? cols / 2 + int64_t(rng() % 100)
                                                                                     : int64_t(rng() % 40);
  }
  for (int64_t r = rows / 3; r < rows / 3 + 20 && r < rows; ++r) lengths[size_t(r)] = 0;
  return matrix_with_rows(cols, lengths, seed + 1);
}

// The paper's scrambled block matrix, from the generator.
sd::CsrMatrix<double> blocks(const std::string& spec, uint64_t seed) { return sd::generate(spec, seed); }

class VbrCublasSpmm : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_DEVICE(); }
};

TEST_F(VbrCublasSpmm, EveryPrecisionLayoutAndSchedule) {
  GpuHandle g;
  const sd::CsrMatrix<double> a = mixed_matrix(203, 331, 11);
  for (const Precision& p : kAll)
    for (sd::VbrSchedule schedule : {sd::VbrSchedule::gathered, sd::VbrSchedule::waves})
      for (sparsetc_order_t bo : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
        for (sparsetc_order_t co : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL}) {
          Case c;
          c.precision = p;
          c.b_order = bo;
          c.c_order = co;
          c.n = 45;
          c.pad = 3;
          c.offset = 1;
          c.beta = bo == co ? 0.0 : -0.75;
          c.options.multiply.schedule = schedule;
          EXPECT_TRUE(run_case(g, a, c));
        }
}

TEST_F(VbrCublasSpmm, AlphaBetaAndTinyN) {
  GpuHandle g;
  const sd::CsrMatrix<double> a = mixed_matrix(150, 97, 12);
  for (double alpha : {0.0, 1.0, -2.5})
    for (double beta : {0.0, 1.0, 0.5})
      for (int64_t n : {1, 8, 33}) {
        Case c;
        c.precision = kF16;
        c.alpha = alpha;
        c.beta = beta;
        c.n = n;
        EXPECT_TRUE(run_case(g, a, c, 1));
      }
}

TEST_F(VbrCublasSpmm, TransposedOperand) {
  GpuHandle g;
  const sd::CsrMatrix<double> a = mixed_matrix(129, 211, 13);
  for (const Precision& p : {kF16, kF32, kF64}) {
    Case c;
    c.precision = p;
    c.op = SPARSETC_OP_TRANSPOSE;
    c.beta = 0.5;
    EXPECT_TRUE(run_case(g, a, c));
  }
}

TEST_F(VbrCublasSpmm, EmptyMatrixAndEmptyRowGroups) {
  GpuHandle g;
  sd::CsrMatrix<double> empty;
  empty.rows = 70;
  empty.cols = 50;
  empty.row_ptr.assign(71, 0);
  for (double beta : {0.0, 2.0}) {
    Case c;
    c.precision = kF16;
    c.beta = beta;
    EXPECT_TRUE(run_case(g, empty, c));
  }
  // Half the rows empty: 1-SA keeps them in groups without blocks.
  std::vector<int64_t> lengths(300);
  for (size_t r = 0; r < lengths.size(); ++r) lengths[r] = r % 2 ? 0 : 5 + int64_t(r % 13);
  const sd::CsrMatrix<double> half = matrix_with_rows(120, lengths, 14);
  for (const Precision& p : {kBf16, kF64}) {
    Case c;
    c.precision = p;
    c.beta = 1.5;
    c.c_order = SPARSETC_ORDER_COL;
    sd::VbrCublasInfo info;
    EXPECT_TRUE(run_case(g, half, c, 2, &info));
    EXPECT_GT(info.groups, 0);
  }
}

TEST_F(VbrCublasSpmm, ForcedWidthTauChunksAndBatchedFallback) {
  GpuHandle g;
  const sd::CsrMatrix<double> a = mixed_matrix(257, 300, 15);
  for (int64_t width : {64, 128, 192})
    for (bool grouped : {true, false})
      for (size_t chunk : {size_t(0), size_t(1)}) {  // 1 byte: one row group per call
        Case c;
        c.precision = kF16;
        c.n = 40;
        c.options.block_width = width;
        c.options.tau = 0.4;
        c.options.try_identity = false;
        c.options.multiply.grouped_api = grouped;
        c.options.multiply.chunk_bytes = chunk;
        sd::VbrCublasInfo info;
        EXPECT_TRUE(run_case(g, a, c, 1, &info));
        EXPECT_EQ(info.block_width, width);
        // One row group with blocks per panel chunk (empty groups join the next chunk): at least
        // one call per such group.
        if (chunk == 1) {
          EXPECT_GE(info.cublas_calls, info.nonempty_groups) << "width " << width << ", " << info.groups << " groups";
          EXPECT_GE(info.nonempty_groups, 1);
        }
      }
}

TEST_F(VbrCublasSpmm, ScrambledBlockMatrices) {
  GpuHandle g;
  for (const char* spec : {"blocks:1024:64:0.1:0.3", "blocks:1000:32:0.2:0.5", "blocks:777:64:0.05:0.1"})
    for (const Precision& p : {kF16, kTf32, kF64}) {
      Case c;
      c.precision = p;
      c.n = 70;
      c.beta = 0.25;
      sd::VbrCublasInfo info;
      EXPECT_TRUE(run_case(g, blocks(spec, 21), c, 2, &info)) << spec;
      std::printf("%s %s: width %lld tau %.2f, %lld groups (mean height %.1f), %lld blocks, fill %.3f, %lld GEMMs in "
                  "%lld calls, plan %.1f ms\n",
                  spec, p.name, (long long)info.block_width, info.tau, (long long)info.groups, info.mean_group_height,
                  (long long)info.blocks, info.stored_area ? double(info.nnz) / double(info.stored_area) : 0.0,
                  (long long)info.gemms, (long long)info.cublas_calls, info.preprocess_seconds * 1e3);
    }
}

TEST_F(VbrCublasSpmm, RejectsWhatItCannotRun) {
  GpuHandle g;
  const sd::CsrMatrix<double> a = mixed_matrix(40, 30, 16);
  sd::CsrMatrix<double> stored;
  DeviceMatrix da = upload_as(g, a, SPARSETC_VALUE_F16, stored);
  Dense B(30, 8, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0), C(40, 8, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
  sd::SpmmProblem problem;
  problem.A = da.matrix.get();
  problem.B = B.shape();
  problem.C = C.shape();
  problem.compute = SPARSETC_COMPUTE_32F;
  std::string reason;
  EXPECT_FALSE(sd::vbr_cublas_applies(problem));  // A f16, B f32
  try {
    sd::make_vbr_cublas_spmm(g.handle, problem, reason);
    ADD_FAILURE() << "mixed A and B types accepted";
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_NOT_SUPPORTED);
  }
  problem.B.value_type = SPARSETC_VALUE_F16;
  EXPECT_TRUE(sd::vbr_cublas_applies(problem));
  sd::VbrCublasOptions bad;
  bad.block_width = 96;
  try {
    sd::make_vbr_cublas_spmm(g.handle, problem, reason, bad);
    ADD_FAILURE() << "width 96 accepted";
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE);
  }
}

}  // namespace

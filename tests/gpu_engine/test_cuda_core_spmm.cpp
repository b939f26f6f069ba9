// The CUDA-core SpMM executor (SPARSETC_SPMM_ALG_CSR, _DCSR, _TILED_DCSR, tiles from CSC) against a float64 host
// product of the rounded inputs: every kernel x precision (f32, f64, f16/bf16 with fp32
// accumulation and f32 or half C) x order of B and C x N in {1, 7, 32, 33, 130}, with packed,
// padded (ld > N) and unaligned (odd ld, B and C one element off 16 bytes) operands; rows longer
// than a warp and than 10k entries (multi-CTA rows, the workspace, bitwise repeatability), empty
// rows, empty strips, an empty matrix, op(A) = A^T, alpha/beta with NaN-poisoned C and beta = 0,
// padding never written, a rebuild after A's values change, and what the executor rejects.
// Skips without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/half.hpp"
#include "engine/spmm_plan.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "test_cuda_core_spmm_support.hpp"
#include "test_support.hpp"

namespace {

using namespace cuda_core_test;

struct Precision {
  sparsetc_compute_type_t compute;
  sparsetc_value_type_t b, c;
};
const Precision kF32{SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F32, SPARSETC_VALUE_F32};
const Precision kF64{SPARSETC_COMPUTE_64F, SPARSETC_VALUE_F64, SPARSETC_VALUE_F64};
const Precision kF16F32{SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F16, SPARSETC_VALUE_F32};
const Precision kF16{SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F16, SPARSETC_VALUE_F16};
const Precision kBf16F32{SPARSETC_COMPUTE_32F, SPARSETC_VALUE_BF16, SPARSETC_VALUE_F32};
const Precision kBf16{SPARSETC_COMPUTE_32F, SPARSETC_VALUE_BF16, SPARSETC_VALUE_BF16};
const Precision kAllPrecisions[] = {kF32, kF64, kF16F32, kF16, kBf16F32, kBf16};
const sparsetc_spmm_alg_t kAlgs[] = {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR, SPARSETC_SPMM_ALG_TILED_DCSR,
                                     sd::kSpmmAlgTiledFromCsc};

const char* alg_name(sparsetc_spmm_alg_t alg) {
  return alg == SPARSETC_SPMM_ALG_CSR    ? "CSR"
         : alg == SPARSETC_SPMM_ALG_DCSR ? "DCSR"
         : alg == sd::kSpmmAlgTiledFromCsc ? "TILED_FROM_CSC"
                                          : "TILED_DCSR";
}
// The B-stationary kernels: atomics into C (no half C, not bitwise repeatable).
bool b_stationary(sparsetc_spmm_alg_t alg) {
  return alg == SPARSETC_SPMM_ALG_TILED_DCSR || alg == sd::kSpmmAlgTiledFromCsc;
}
const char* type_name(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F32 ? "f32" : t == SPARSETC_VALUE_F64 ? "f64" : t == SPARSETC_VALUE_F16 ? "f16" : "bf16";
}

struct Case {
  sparsetc_spmm_alg_t alg = SPARSETC_SPMM_ALG_CSR;
  sparsetc_operation_t op = SPARSETC_OP_NON_TRANSPOSE;
  Precision precision = kF32;
  sparsetc_order_t b_order = SPARSETC_ORDER_ROW, c_order = SPARSETC_ORDER_ROW;
  int64_t n = 1;
  int64_t pad = 0;     // ld beyond the minimum
  int64_t offset = 0;  // elements between the allocation and B, C
  double alpha = 1.25, beta = 0.0;
  bool explicit_workspace = false;
  std::string name() const {
    std::ostringstream s;
    s << alg_name(alg) << (op == SPARSETC_OP_TRANSPOSE ? " op=T" : "") << " B " << type_name(precision.b) << " C "
      << type_name(precision.c) << " B " << (b_order == SPARSETC_ORDER_ROW ? "row" : "col") << " C "
      << (c_order == SPARSETC_ORDER_ROW ? "row" : "col") << " N " << n << " pad " << pad << " offset " << offset
      << " alpha " << alpha << " beta " << beta;
    return s.str();
  }
};

// A's value as the kernels use it: float64, float, or float then f16/bf16 (the executor
// normalises to float, then rounds to the half type).
double rounded_a(const Precision& p, double v) {
  if (p.compute == SPARSETC_COMPUTE_64F) return v;
  const float f = float(v);
  if (p.b == SPARSETC_VALUE_F16) return sd::half_to_float(sd::double_to_half(double(f)));
  if (p.b == SPARSETC_VALUE_BF16) return sd::bfloat16_to_float(sd::float_to_bfloat16(f));
  return f;
}

double unit_roundoff(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F64 ? std::ldexp(1.0, -53)
         : t == SPARSETC_VALUE_F32 ? std::ldexp(1.0, -24)
         : t == SPARSETC_VALUE_F16 ? std::ldexp(1.0, -11)
                                   : std::ldexp(1.0, -8);
}

// A fresh executor for the case (its plan-time work included).
std::unique_ptr<sd::SpmmExecutor> make_executor(GpuHandle& g, DeviceMatrix& a, const Case& c, const Dense& B,
                                                const Dense& C) {
  sd::SpmmProblem problem;
  problem.op = c.op;
  problem.A = a.matrix.get();
  problem.B = B.shape();
  problem.C = C.shape();
  problem.compute = c.precision.compute;
  return sd::make_cuda_core_spmm(g.handle, problem, c.alg);
}

// Compares C with alpha * op(A) * B + beta * C0 in float64 (inputs as rounded); padding must hold
// its NaNs, every element must be finite.
::testing::AssertionResult check(const sd::CsrMatrix<double>& opa, const Case& c, const Dense& B, const Dense& C,
                                 const std::vector<double>& c0) {
  const double acc_u = unit_roundoff(c.precision.compute == SPARSETC_COMPUTE_64F ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32);
  const double out_u = unit_roundoff(c.precision.c);
  std::vector<double> sum(size_t(c.n)), bound(size_t(c.n));
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t r = 0; r < opa.rows; ++r) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(bound.begin(), bound.end(), 0.0);
    for (int64_t j = opa.row_ptr[size_t(r)]; j < opa.row_ptr[size_t(r + 1)]; ++j) {
      const double a = rounded_a(c.precision, opa.values[size_t(j)]);
      const int64_t k = opa.col_idx[size_t(j)];
      for (int64_t col = 0; col < c.n; ++col) {
        const double b = B.get(k, col);
        sum[size_t(col)] += a * b;
        bound[size_t(col)] += std::fabs(a * b);
      }
    }
    for (int64_t col = 0; col < c.n; ++col) {
      const double old = c0[size_t(r * c.n + col)];
      const double want = c.alpha * sum[size_t(col)] + (c.beta != 0 ? c.beta * old : 0.0);
      const double scale = std::fabs(c.alpha) * bound[size_t(col)] + (c.beta != 0 ? std::fabs(c.beta * old) : 0.0);
      // Both sums (kernel and reference) carry up to (length) roundings of the accumulation type:
      // the classical gamma_n bound, not a constant, or long rows fail by chance.
      const double length = double(opa.row_ptr[size_t(r + 1)] - opa.row_ptr[size_t(r)]);
      const double tol = 2 * (length + 2) * acc_u * scale + 2 * out_u * std::fabs(want) + 1e-300;
      const double got = C.get(r, col);
      if (!(std::fabs(got - want) <= tol)) {
        if (bad++ == 0) first << "C(" << r << ", " << col << ") = " << got << ", want " << want << " (tolerance " << tol << ")";
      }
    }
  }
  // Padding and the elements before C: untouched (still NaN bit patterns).
  std::vector<char> logical(C.host.size() / element_bytes(C.type), 0);
  for (int64_t r = 0; r < C.rows; ++r)
    for (int64_t col = 0; col < C.cols; ++col) logical[C.at(r, col) / element_bytes(C.type)] = 1;
  int64_t touched = 0;
  for (size_t i = 0; i < logical.size(); ++i)
    if (!logical[i] && !std::isnan(load_value(C.type, C.host.data() + i * element_bytes(C.type)))) ++touched;
  if (bad || touched)
    return ::testing::AssertionFailure() << c.name() << ": " << bad << " wrong of " << opa.rows * c.n << " ("
                                         << first.str() << "), " << touched << " padding elements written";
  return ::testing::AssertionSuccess();
}

// Builds B and C (C NaN when beta == 0), runs the multiply, checks it. repeats > 1: runs again and
// requires the same bits (the C-stationary kernels are deterministic).
::testing::AssertionResult run_case(GpuHandle& g, const sd::CsrMatrix<double>& a, DeviceMatrix& da, const Case& c,
                                    int repeats = 1) {
  const sd::CsrMatrix<double> opa = c.op == SPARSETC_OP_TRANSPOSE ? transpose(a) : a;
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  Dense B(opa.cols, c.n, c.b_order, c.precision.b, c.pad, c.offset);
  Dense C(opa.rows, c.n, c.c_order, c.precision.c, c.pad, c.offset);
  std::vector<double> c0(size_t(opa.rows * c.n), 0.0);
  for (int64_t r = 0; r < B.rows; ++r)
    for (int64_t col = 0; col < B.cols; ++col) B.set(r, col, random_entry(rng));
  for (int64_t r = 0; r < C.rows; ++r)
    for (int64_t col = 0; col < C.cols; ++col)
      c0[size_t(r * c.n + col)] = C.set(r, col, c.beta != 0 ? random_entry(rng) : std::nan(""));
  B.to_device(g);
  C.to_device(g);
  const std::vector<unsigned char> original = C.host;
  std::unique_ptr<sd::SpmmExecutor> e;
  try {
    e = make_executor(g, da, c, B, C);
    sd::DeviceBuffer workspace;
    if (c.explicit_workspace && e->workspace_size()) workspace = sd::DeviceBuffer(e->workspace_size(), g.gpu());
    e->execute(c.alpha, B.desc(), c.beta, C.desc(), workspace.data(), workspace.size());
    C.to_host(g);
    auto result = check(opa, c, B, C, c0);
    if (!result) return result;
    const std::vector<unsigned char> first = C.host;
    for (int r = 1; r < repeats; ++r) {
      sd::copy_host_to_device(C.device.data(), original.data(), original.size(), g.stream);
      e->execute(c.alpha, B.desc(), c.beta, C.desc(), workspace.data(), workspace.size());
      std::vector<unsigned char> again(first.size());
      sd::copy_device_to_host(again.data(), C.device.data(), again.size(), g.stream);
      if (again != first)
        return ::testing::AssertionFailure() << c.name() << ": run " << r << " differs from run 0 in its bits";
    }
  } catch (const sd::Error& error) {
    return ::testing::AssertionFailure() << c.name() << ": status " << error.status() << ": " << error.what();
  }
  return ::testing::AssertionSuccess();
}

bool supported(sparsetc_spmm_alg_t alg, const Precision& p) {
  const bool half_c = p.c == SPARSETC_VALUE_F16 || p.c == SPARSETC_VALUE_BF16;
  return !(b_stationary(alg) && half_c);
}

// Lengths: a quarter empty, most short, some beyond a warp's share and beyond one CTA chunk.
std::vector<int64_t> mixed_lengths(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> lengths;
  for (int64_t r = 0; r < rows; ++r) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    auto in = [&](int64_t lo, int64_t hi) {  // within [0, cols]
      hi = std::min(hi, cols);
      return std::uniform_int_distribution<int64_t>(std::min(lo, hi), hi)(rng);
    };
    lengths.push_back(u < 0.25 ? 0 : u < 0.6 ? in(1, 6) : u < 0.8 ? in(7, 40) : u < 0.92 ? in(41, 300)
                                    : u < 0.98 ? in(301, 1200) : in(1201, 2000));
  }
  return lengths;
}

TEST(CudaCoreSpmm, KernelsLayoutsPrecisions) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::CsrMatrix<double> a = matrix_with_rows(2053, mixed_lengths(517, 2053, seed), seed + 1);
  DeviceMatrix da = upload(g, a);
  struct Layout {
    int64_t pad, offset;
    std::vector<int64_t> ns;
  };
  const Layout layouts[] = {{0, 0, {1, 7, 32, 33, 130}}, {8, 0, {7, 32, 130}}, {3, 1, {1, 33, 130}}};
  int cases = 0;
  for (sparsetc_spmm_alg_t alg : kAlgs)
    for (const Precision& p : kAllPrecisions) {
      if (!supported(alg, p)) continue;
      for (sparsetc_order_t bo : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
        for (sparsetc_order_t co : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
          for (const Layout& l : layouts)
            for (int64_t n : l.ns) {
              Case c;
              c.alg = alg;
              c.precision = p;
              c.b_order = bo;
              c.c_order = co;
              c.n = n;
              c.pad = l.pad;
              c.offset = l.offset;
              c.alpha = cases % 2 ? 1.25 : -0.5;
              c.beta = cases % 3 == 0 ? 0.0 : 0.75;
              ++cases;
              EXPECT_TRUE(run_case(g, a, da, c)) << "seed " << seed;
            }
    }
}

// Both ways of running short rows (streams of 1, 3, 16 rows or of about 12 entries; groups of 1 to
// 32 lanes per row or of lanes taking about 16 entries), fp32 and fp64, through row_spmm directly.
TEST(CudaCoreSpmm, ShortRowModes) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::CsrMatrix<double> a = matrix_with_rows(1500, mixed_lengths(700, 1500, seed), seed + 1);
  DeviceMatrix da = upload(g, a);
  const sd::DeviceCsr<float> csr32 = sd::gpu_normalize<float>(da.matrix->layout, SPARSETC_DUPLICATES_ERROR, g.gpu());
  const sd::DeviceCsr<double> csr64 = sd::gpu_normalize<double>(da.matrix->layout, SPARSETC_DUPLICATES_ERROR, g.gpu());
  std::vector<sd::RowScheduleOptions> modes;
  for (int64_t rows : {1, 3, 16}) modes.push_back({1, -1, rows});
  for (int lanes : {0, 1, 3, 5}) modes.push_back({0, lanes, 0});
  // The rule's knobs: streams of about 12 entries, groups whose lanes take about 16 of a mean row.
  modes.push_back({1, -1, 0, 0, 12, 0});
  modes.push_back({0, -1, 0, 0, 0, 16});
  std::mt19937_64 rng(seed + 2);
  for (const Precision& p : {kF32, kF64})
    for (const sd::RowScheduleOptions& mode : modes)
      for (int64_t n : {7, 33, 130}) {
        Case c;
        c.precision = p;
        c.n = n;
        c.beta = n == 33 ? 0.5 : 0.0;
        Dense B(a.cols, n, SPARSETC_ORDER_ROW, p.b, 0, 0), C(a.rows, n, SPARSETC_ORDER_ROW, p.c, 0, 0);
        std::vector<double> c0(size_t(a.rows * n), 0.0);
        for (int64_t r = 0; r < B.rows; ++r)
          for (int64_t col = 0; col < n; ++col) B.set(r, col, random_entry(rng));
        for (int64_t r = 0; r < C.rows; ++r)
          for (int64_t col = 0; col < n; ++col)
            c0[size_t(r * n + col)] = C.set(r, col, c.beta != 0 ? random_entry(rng) : std::nan(""));
        B.to_device(g);
        C.to_device(g);
        const bool f64 = p.compute == SPARSETC_COMPUTE_64F;
        const sd::CorePrecision precision = f64 ? sd::CorePrecision::f64 : sd::CorePrecision::f32;
        const sd::CoreRows rows = f64 ? sd::CoreRows{csr64.rows, csr64.cols, csr64.rows, csr64.nnz, nullptr,
                                                     csr64.row_ptr.as<const int64_t>(), csr64.col_idx.as<const int32_t>(),
                                                     csr64.values.data()}
                                      : sd::CoreRows{csr32.rows, csr32.cols, csr32.rows, csr32.nnz, nullptr,
                                                     csr32.row_ptr.as<const int64_t>(), csr32.col_idx.as<const int32_t>(),
                                                     csr32.values.data()};
        sd::RowSchedule schedule = sd::make_row_schedule(rows, precision, n, nullptr, g.gpu(), mode);
        if (mode.short_rows == 1 && mode.rows_per_stream == 0)
          EXPECT_EQ(schedule.rows_per_stream,
                    std::clamp<int64_t>(std::llround(12.0 / std::max(1.0, double(a.nnz()) / double(a.rows))), 1, 32));
        else
          EXPECT_EQ(schedule.rows_per_stream, mode.short_rows == 1 ? mode.rows_per_stream : 0);
        sd::DeviceBuffer workspace(std::max<size_t>(schedule.workspace_bytes, 16), g.gpu());
        sd::CoreDenseArgs args;
        args.n = n;
        args.B = B.desc().values;
        args.ldb = B.ld;
        args.C = C.desc().values;
        args.c_type = p.c;
        args.ldc = C.ld;
        args.alpha = c.alpha;
        args.beta = c.beta;
        sd::row_spmm(rows, precision, schedule, args, workspace.data(), g.stream);
        C.to_host(g);
        EXPECT_TRUE(check(a, c, B, C, c0)) << "mode " << mode.short_rows << " lanes_k_log " << mode.lanes_k_log
                                           << " rows_per_stream " << mode.rows_per_stream << ", seed " << seed;
      }
}

// f32, f16 and bf16 through row_spmm with each instantiation of the C-stationary kernel (4 and 8
// columns per lane): streams and groups, row- and column-major B, odd leading dimensions and
// offsets (the vector paths off), half and f32 C, rows from empty to 2000 entries (streams, warps,
// CTA chunks), N not a multiple of 4 or 8 and over one tile, column tiles capped at 4 and 2 lanes.
TEST(CudaCoreSpmm, LaneColumnSchedules) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::CsrMatrix<double> a = matrix_with_rows(2003, mixed_lengths(600, 2003, seed), seed + 1);
  const std::vector<int32_t> cols(a.col_idx.begin(), a.col_idx.end());
  sd::DeviceBuffer row_ptr(a.row_ptr.size() * 8, g.gpu()), col_idx(std::max<size_t>(cols.size(), 1) * 4, g.gpu());
  sd::copy_host_to_device(row_ptr.data(), a.row_ptr.data(), a.row_ptr.size() * 8, g.stream);
  sd::copy_host_to_device(col_idx.data(), cols.data(), cols.size() * 4, g.stream);
  std::vector<sd::RowScheduleOptions> modes(5);  // modes[2]: the defaults
  modes[0].short_rows = 1;  // streams of 3 rows
  modes[0].rows_per_stream = 3;
  modes[1].short_rows = 0;  // groups of 8 k-slices (as many as fit)
  modes[1].lanes_k_log = 3;
  modes[3].tile_lanes = 4;  // column tiles of 4 lanes: up to 17 tiles at N = 260
  modes[4].short_rows = 1;  // streams over tiles of 2 lanes
  modes[4].tile_lanes = 2;
  struct Layout {
    sparsetc_order_t b_order;
    int64_t pad, offset;
  };
  const Layout layouts[] = {{SPARSETC_ORDER_ROW, 0, 0}, {SPARSETC_ORDER_ROW, 3, 1}, {SPARSETC_ORDER_COL, 1, 0}};
  std::mt19937_64 rng(seed + 2);
  int cases = 0;
  for (const Precision& p : {kF32, kF16F32, kF16, kBf16F32, kBf16}) {
    const size_t bytes = element_bytes(p.b);
    std::vector<unsigned char> vals(std::max<size_t>(a.values.size(), 1) * bytes);
    for (size_t e = 0; e < a.values.size(); ++e) store_value(p.b, rounded_a(p, a.values[e]), vals.data() + e * bytes);
    sd::DeviceBuffer values(vals.size(), g.gpu());
    sd::copy_host_to_device(values.data(), vals.data(), vals.size(), g.stream);
    const sd::CorePrecision precision = p.b == SPARSETC_VALUE_F32   ? sd::CorePrecision::f32
                                        : p.b == SPARSETC_VALUE_F16 ? sd::CorePrecision::f16
                                                                    : sd::CorePrecision::bf16;
    const sd::CoreRows rows{a.rows, a.cols, a.rows, a.nnz(), nullptr, row_ptr.as<const int64_t>(),
                            col_idx.as<const int32_t>(), values.data()};
    for (int columns : {4, 8})
      for (sd::RowScheduleOptions mode : modes)
        for (int64_t n : {5, 33, 130, 260}) {
          const Layout& l = layouts[cases % 3];
          Case c;
          c.precision = p;
          c.n = n;
          c.b_order = l.b_order;
          c.pad = l.pad;
          c.offset = l.offset;
          c.alpha = cases % 2 ? 1.25 : -0.5;
          c.beta = cases % 3 == 1 ? 0.5 : 0.0;
          ++cases;
          Dense B(a.cols, n, c.b_order, p.b, c.pad, c.offset), C(a.rows, n, SPARSETC_ORDER_ROW, p.c, c.pad, c.offset);
          std::vector<double> c0(size_t(a.rows * n), 0.0);
          for (int64_t r = 0; r < B.rows; ++r)
            for (int64_t col = 0; col < n; ++col) B.set(r, col, random_entry(rng));
          for (int64_t r = 0; r < C.rows; ++r)
            for (int64_t col = 0; col < n; ++col)
              c0[size_t(r * n + col)] = C.set(r, col, c.beta != 0 ? random_entry(rng) : std::nan(""));
          B.to_device(g);
          C.to_device(g);
          mode.lane_columns = columns;
          sd::RowSchedule schedule = sd::make_row_schedule(rows, precision, n, nullptr, g.gpu(), mode);
          EXPECT_EQ(schedule.tiling.vec, columns);
          if (mode.tile_lanes > 0) {
            EXPECT_LE(1 << schedule.tiling.lanes_n_log, mode.tile_lanes);
          }
          sd::DeviceBuffer workspace(std::max<size_t>(schedule.workspace_bytes, 16), g.gpu());
          sd::CoreDenseArgs args;
          args.n = n;
          args.B = B.desc().values;
          args.b_order = c.b_order;
          args.ldb = B.ld;
          args.C = C.desc().values;
          args.c_type = p.c;
          args.ldc = C.ld;
          args.alpha = c.alpha;
          args.beta = c.beta;
          sd::row_spmm(rows, precision, schedule, args, workspace.data(), g.stream);
          C.to_host(g);
          EXPECT_TRUE(check(a, c, B, C, c0)) << columns << " columns per lane, short rows " << mode.short_rows
                                             << ", seed " << seed;
        }
  }
  // The default choice, and requests no kernel has.
  EXPECT_EQ(sd::row_lane_columns(sd::CorePrecision::f32, 16), 4);
  EXPECT_EQ(sd::row_lane_columns(sd::CorePrecision::f32, 64), 8);
  EXPECT_EQ(sd::row_lane_columns(sd::CorePrecision::f16, 8), 4);
  EXPECT_EQ(sd::row_lane_columns(sd::CorePrecision::bf16, 32), 8);
  EXPECT_EQ(sd::row_lane_columns(sd::CorePrecision::f64, 32), 2);
  EXPECT_THROW(sd::row_lane_columns(sd::CorePrecision::bf16, 64, 2), sd::Error);
  EXPECT_THROW(sd::row_lane_columns(sd::CorePrecision::f64, 64, 4), sd::Error);
}

TEST(CudaCoreSpmm, RowsLongerThan10k) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  // Beside short and empty rows: 15000, 12001 (adjacent), 20011 (every column), 700, 33, 64, 65.
  std::vector<int64_t> lengths = {3, 0, 15000, 12001, 0, 700, 1, 33, 64, 65, 20011, 0, 2, 129, 4000, 5};
  for (int i = 0; i < 40; ++i) lengths.push_back(i % 7);
  const sd::CsrMatrix<double> a = matrix_with_rows(20011, lengths, seed);
  DeviceMatrix da = upload(g, a);
  for (sparsetc_spmm_alg_t alg : kAlgs)
    for (const Precision& p : {kF32, kF64, kBf16F32, kF16})
      for (int64_t n : {1, 7, 32, 33, 130, 400}) {
        // N = 400: B (over 24 MB in f32 and f64) makes the C-stationary kernel walk tiles outermost.
        if (!supported(alg, p) || (n == 400 && (p.b == SPARSETC_VALUE_F16 || p.b == SPARSETC_VALUE_BF16))) continue;
        Case c;
        c.alg = alg;
        c.precision = p;
        c.n = n;
        c.beta = n % 2 ? 0.0 : -2.0;
        c.explicit_workspace = n == 130 || n == 7;
        // C-stationary results are bitwise repeatable (beta = 0 runs compare their bits).
        EXPECT_TRUE(run_case(g, a, da, c, b_stationary(alg) ? 1 : 3)) << "seed " << seed;
      }
}

TEST(CudaCoreSpmm, MultiChunkRowsNeedWorkspace) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const sd::CsrMatrix<double> a = matrix_with_rows(20011, {15000, 2, 0}, sparsetc_test::fresh_seed());
  DeviceMatrix da = upload(g, a);
  Case c;
  c.n = 130;
  Dense B(a.cols, c.n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0), C(a.rows, c.n, SPARSETC_ORDER_ROW,
                                                                      SPARSETC_VALUE_F32, 0, 0);
  for (sparsetc_spmm_alg_t alg : {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR}) {
    c.alg = alg;
    EXPECT_GT(make_executor(g, da, c, B, C)->workspace_size(), size_t(0)) << alg_name(alg);
  }
  for (sparsetc_spmm_alg_t alg : {sparsetc_spmm_alg_t(SPARSETC_SPMM_ALG_TILED_DCSR), sd::kSpmmAlgTiledFromCsc}) {
    c.alg = alg;
    EXPECT_EQ(make_executor(g, da, c, B, C)->workspace_size(), size_t(0)) << alg_name(alg);
  }
}

// The tiles-from-CSC schedule cuts a strip into windows by entries (a dense band fills a strip
// beyond one window's buffer) and by rows (a long thin column spans more rows than a window
// counts); every window within both limits, the windows of a strip disjoint and in row order,
// and the product right through all of them.
TEST(CudaCoreSpmm, CscWindowsCutByEntriesAndRows) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  std::mt19937_64 rng(seed);
  // Rows 0..2999: a band of half-width 40 over columns 0..2999; column 3000 holds every third row.
  sd::CsrMatrix<double> a;
  a.rows = 3000;
  a.cols = 3001;
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t c = std::max<int64_t>(0, r - 40); c <= std::min<int64_t>(a.cols - 2, r + 40); ++c) {
      a.col_idx.push_back(c);
      a.values.push_back(random_entry(rng));
    }
    if (r % 3 == 0) {
      a.col_idx.push_back(3000);
      a.values.push_back(random_entry(rng));
    }
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  DeviceMatrix da = upload(g, a);
  for (const Precision& p : {kF32, kF64, kBf16F32})
    for (int64_t n : {8, 33, 130}) {
      const bool f64 = p.compute == SPARSETC_COMPUTE_64F;
      const sd::CorePrecision precision = f64 ? sd::CorePrecision::f64 : sd::CorePrecision::f32;
      const sd::DeviceCsr<double> csr = sd::gpu_normalize<double>(da.matrix->layout, SPARSETC_DUPLICATES_ERROR, g.gpu());
      const sd::DeviceCsc<double> csc = sd::gpu_csr_to_csc(csr.view(), g.gpu());
      const sd::CoreCsc core{csc.rows, csc.cols, csc.nnz, csc.col_ptr.as<const int64_t>(),
                             csc.row_idx.as<const int32_t>(), csc.values.data()};
      const sd::CscTiledSchedule s = sd::make_csc_tiled_schedule(core, precision, n, g.gpu());
      std::vector<sd::CscWindow> windows(size_t(s.windows));
      sd::copy_device_to_host(windows.data(), s.window.data(), s.window.size(), g.stream);
      const int64_t capacity = sd::csc_window_capacity(precision);
      int64_t entries = 0, last_strip_windows = 0;
      for (size_t i = 0; i < windows.size(); ++i) {
        const sd::CscWindow& w = windows[i];
        EXPECT_GT(w.entries, 0);
        EXPECT_LE(w.entries, capacity);
        EXPECT_LE(w.row_end - w.row_begin, sd::kCscWindowRows);
        if (i > 0 && windows[i - 1].strip == w.strip) {
          EXPECT_LE(windows[i - 1].row_end, w.row_begin);
        }
        if (i > 0) {
          EXPECT_LE(windows[i - 1].strip, w.strip);
        }
        last_strip_windows += w.strip == windows.back().strip;
        entries += w.entries;
      }
      EXPECT_EQ(entries, csc.nnz);
      EXPECT_GT(s.windows, (csc.nnz + capacity - 1) / capacity);  // the band needs several per strip
      EXPECT_GE(last_strip_windows, 3);  // column 3000's strip spans 3000 rows: 1024 per window at most
      Case c;
      c.alg = sd::kSpmmAlgTiledFromCsc;
      c.precision = p;
      c.n = n;
      c.beta = n == 33 ? 0.5 : 0.0;
      EXPECT_TRUE(run_case(g, a, da, c)) << "seed " << seed;
    }
}

TEST(CudaCoreSpmm, EmptyStripsAndEmptyMatrix) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  // Columns only in [0, 100) and [3000, 3100) of 5000: most strips are empty.
  sd::CsrMatrix<double> a = matrix_with_rows(200, mixed_lengths(301, 200, seed), seed + 1);
  a.cols = 5000;
  for (int64_t& col : a.col_idx)
    if (col >= 100) col += 2900;
  DeviceMatrix da = upload(g, a);
  sd::CsrMatrix<double> empty;
  empty.rows = 77;
  empty.cols = 3001;
  empty.row_ptr.assign(78, 0);
  DeviceMatrix de = upload(g, empty);
  for (sparsetc_spmm_alg_t alg : kAlgs)
    for (int64_t n : {7, 33}) {
      Case c;
      c.alg = alg;
      c.n = n;
      c.beta = n == 7 ? 0.0 : 2.0;
      EXPECT_TRUE(run_case(g, a, da, c)) << "clustered columns, seed " << seed;
      EXPECT_TRUE(run_case(g, empty, de, c)) << "empty matrix";
      c.precision = kF64;
      c.c_order = SPARSETC_ORDER_COL;
      EXPECT_TRUE(run_case(g, empty, de, c)) << "empty matrix";
    }
}

TEST(CudaCoreSpmm, TransposedA) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::CsrMatrix<double> a = matrix_with_rows(613, mixed_lengths(1201, 613, seed), seed + 1);
  DeviceMatrix da = upload(g, a);
  for (sparsetc_spmm_alg_t alg : kAlgs)
    for (const Precision& p : {kF32, kBf16F32, kF64})
      for (int64_t n : {33, 130})
        for (sparsetc_order_t order : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL}) {
          Case c;
          c.alg = alg;
          c.op = SPARSETC_OP_TRANSPOSE;
          c.precision = p;
          c.n = n;
          c.b_order = c.c_order = order;
          c.beta = order == SPARSETC_ORDER_ROW ? 0.0 : 0.5;
          EXPECT_TRUE(run_case(g, a, da, c)) << "seed " << seed;
        }
}

TEST(CudaCoreSpmm, RebuildsWhenValuesChange) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  sd::CsrMatrix<double> a = matrix_with_rows(900, mixed_lengths(400, 900, seed), seed + 1);
  DeviceMatrix da = upload(g, a);
  for (sparsetc_spmm_alg_t alg : kAlgs) {
    Case c;
    c.alg = alg;
    c.n = 32;
    Dense B(a.cols, c.n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0), C(a.rows, c.n, SPARSETC_ORDER_ROW,
                                                                        SPARSETC_VALUE_F32, 0, 0);
    std::mt19937_64 rng(seed + 2);
    for (int64_t r = 0; r < B.rows; ++r)
      for (int64_t col = 0; col < B.cols; ++col) B.set(r, col, random_entry(rng));
    B.to_device(g);
    C.to_device(g);
    auto e = make_executor(g, da, c, B, C);
    e->execute(1.0, B.desc(), 0.0, C.desc(), nullptr, 0);
    // New values in the same borrowed arrays, then the version bump set_values makes.
    for (double& v : a.values) v = random_entry(rng);
    sd::copy_host_to_device(da.values.data(), a.values.data(), a.values.size() * 8, g.stream);
    sd::mark_values_changed(*da.matrix);
    c.alpha = 1.0;
    e->execute(c.alpha, B.desc(), 0.0, C.desc(), nullptr, 0);
    C.to_host(g);
    EXPECT_TRUE(check(a, c, B, C, std::vector<double>(size_t(a.rows * c.n), 0.0))) << alg_name(alg);
  }
}

// A graph whose rows are numbered at random (a 2D Poisson stencil relabelled, some rows emptied):
// from N = 64 on, the CSR path visits its rows in reverse Cuthill-McKee order (the executor says so),
// every row, empty ones included, is written in place, repeated runs give the same bits, and so
// does A's own order (the DCSR path, without empty rows). The stencil in its own order keeps it.
TEST(CudaCoreSpmm, RowsVisitedInALocalityOrder) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::CsrMatrix<double> grid = sd::generate_poisson2d5(40, seed);
  std::vector<int64_t> label(size_t(grid.rows));
  std::iota(label.begin(), label.end(), int64_t(0));
  std::mt19937_64 rng(seed + 1);
  std::shuffle(label.begin(), label.end(), rng);
  // Row label[r] of the relabelled matrix is row r of the grid, column label[c] its column c.
  auto relabelled = [&](bool some_rows_empty) {
    std::vector<std::vector<std::pair<int64_t, double>>> rows(size_t(grid.rows));
    for (int64_t r = 0; r < grid.rows; ++r) {
      if (some_rows_empty && r % 97 == 5) continue;
      for (int64_t e = grid.row_ptr[size_t(r)]; e < grid.row_ptr[size_t(r + 1)]; ++e)
        rows[size_t(label[size_t(r)])].push_back({label[size_t(grid.col_idx[size_t(e)])], random_entry(rng)});
    }
    sd::CsrMatrix<double> m;
    m.rows = m.cols = grid.rows;
    for (auto& row : rows) {
      std::sort(row.begin(), row.end());
      for (const auto& [col, value] : row) {
        m.col_idx.push_back(col);
        m.values.push_back(value);
      }
      m.row_ptr.push_back(int64_t(m.col_idx.size()));
    }
    return m;
  };
  const sd::CsrMatrix<double> a = relabelled(true);
  DeviceMatrix da = upload(g, a), dgrid = upload(g, grid);
  for (const Precision& precision : {kF32, kF64, kF16F32, kBf16})
    for (int64_t n : {7, 64, 130})
      for (sparsetc_operation_t op : {SPARSETC_OP_NON_TRANSPOSE, SPARSETC_OP_TRANSPOSE}) {
        Case c;
        c.precision = precision;
        c.n = n;
        c.op = op;
        c.beta = n == 64 ? 0.5 : 0.0;
        Dense B(a.cols, n, c.b_order, precision.b, 0, 0), C(a.rows, n, c.c_order, precision.c, 0, 0);
        // From N = 64 on (sd::kRowOrderMinColumns); below, A's own order.
        const std::string note = make_executor(g, da, c, B, C)->note();
        EXPECT_NE(note.find(n >= 64 ? "reverse Cuthill-McKee" : "rows in A's order (N 7"), std::string::npos)
            << c.name() << ": " << note;
        EXPECT_TRUE(run_case(g, a, da, c, 2)) << "seed " << seed;
      }
  Case c;
  c.n = 128;
  Dense B(grid.cols, c.n, c.b_order, c.precision.b, 0, 0), C(grid.rows, c.n, c.c_order, c.precision.c, 0, 0);
  const std::string note = make_executor(g, dgrid, c, B, C)->note();
  EXPECT_NE(note.find("rows in A's order"), std::string::npos) << note;
  EXPECT_TRUE(run_case(g, grid, dgrid, c)) << "seed " << seed;

  // Without empty rows the DCSR path runs the same schedule over the rows in A's own order: the
  // CSR path in its visiting order gives the same bits.
  const sd::CsrMatrix<double> full = relabelled(false);
  DeviceMatrix dfull = upload(g, full);
  Case in_order;
  in_order.n = 64;
  Case own_order = in_order;
  own_order.alg = SPARSETC_SPMM_ALG_DCSR;
  Dense B64(full.cols, 64, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0),
      C64(full.rows, 64, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
  for (int64_t r = 0; r < B64.rows; ++r)
    for (int64_t col = 0; col < B64.cols; ++col) B64.set(r, col, random_entry(rng));
  B64.to_device(g);
  C64.to_device(g);
  std::vector<std::vector<unsigned char>> bits;
  for (const Case& run : {in_order, own_order}) {
    auto e = make_executor(g, dfull, run, B64, C64);
    if (run.alg == SPARSETC_SPMM_ALG_CSR) {
      EXPECT_NE(e->note().find("reverse Cuthill-McKee"), std::string::npos) << e->note();
    }
    e->execute(1.0, B64.desc(), 0.0, C64.desc(), nullptr, 0);
    C64.to_host(g);
    bits.push_back(C64.host);
  }
  EXPECT_TRUE(bits[0] == bits[1]) << "the visiting order changed C's bits (seed " << seed << ")";
}

// A rectangular A (an LP-like staircase: row i reads columns 4i .. 4i + 10) is visited by first
// column when its rows come shuffled (from N = 64 on), and in its own order when they come sorted;
// both give the right C, the same bits on every run.
TEST(CudaCoreSpmm, RectangularRowsVisitedByFirstColumn) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  std::mt19937_64 rng(seed);
  const int64_t rows = 1024;
  auto staircase = [&](bool shuffled) {
    std::vector<int64_t> step(static_cast<size_t>(rows));
    std::iota(step.begin(), step.end(), int64_t(0));
    if (shuffled) std::shuffle(step.begin(), step.end(), rng);
    sd::CsrMatrix<double> m;
    m.rows = rows;
    m.cols = 4 * rows + 16;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < 6; ++k) {
        m.col_idx.push_back(4 * step[size_t(r)] + 2 * k);
        m.values.push_back(random_entry(rng));
      }
      m.row_ptr.push_back(int64_t(m.col_idx.size()));
    }
    return m;
  };
  for (const bool shuffled : {true, false}) {
    const sd::CsrMatrix<double> a = staircase(shuffled);
    DeviceMatrix da = upload(g, a);
    for (const Precision& precision : {kF32, kF16F32})
      for (int64_t n : {7, 64, 130}) {
        Case c;
        c.precision = precision;
        c.n = n;
        c.beta = n == 64 ? 0.5 : 0.0;
        Dense B(a.cols, n, c.b_order, precision.b, 0, 0), C(a.rows, n, c.c_order, precision.c, 0, 0);
        const std::string note = make_executor(g, da, c, B, C)->note();
        const char* expected = n < 64 ? "rows in A's order (N 7" : shuffled ? "first-column order" : "rows in A's order";
        EXPECT_NE(note.find(expected), std::string::npos) << c.name() << ": " << note;
        EXPECT_TRUE(run_case(g, a, da, c, 2)) << "shuffled " << shuffled << ", seed " << seed;
      }
  }
}

TEST(CudaCoreSpmm, RejectsWhatItCannotDo) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  sd::CsrMatrix<double> a = matrix_with_rows(50, {3, 0, 7, 1}, sparsetc_test::fresh_seed());
  DeviceMatrix da = upload(g, a);
  auto status_of = [&](sparsetc_spmm_alg_t alg, Precision p) -> sparsetc_status_t {
    Case c;
    c.alg = alg;
    c.precision = p;
    c.n = 8;
    Dense B(a.cols, c.n, SPARSETC_ORDER_ROW, p.b, 0, 0), C(a.rows, c.n, SPARSETC_ORDER_ROW, p.c, 0, 0);
    try {
      make_executor(g, da, c, B, C);
    } catch (const sd::Error& e) {
      EXPECT_FALSE(std::string(e.what()).empty());
      return e.status();
    }
    return SPARSETC_STATUS_SUCCESS;
  };
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_TILED_DCSR, kF16), SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_TILED_DCSR, kBf16), SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(sd::kSpmmAlgTiledFromCsc, kF16), SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_CSR, {SPARSETC_COMPUTE_64F, SPARSETC_VALUE_F32, SPARSETC_VALUE_F32}),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_CSR, {SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F64, SPARSETC_VALUE_F64}),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_DCSR, {SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16}),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_CSR, {SPARSETC_COMPUTE_32F, SPARSETC_VALUE_F32, SPARSETC_VALUE_F64}),
            SPARSETC_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_BCSR_TC, kF32), SPARSETC_STATUS_INVALID_VALUE);
  EXPECT_EQ(status_of(SPARSETC_SPMM_ALG_CSR, kF32), SPARSETC_STATUS_SUCCESS);
  // A value beyond fp16's range cannot be rounded for the f16 path (the host's check and message).
  a.values[2] = 1.0e6;
  DeviceMatrix big = upload(g, a);
  for (sparsetc_spmm_alg_t alg : kAlgs) {
    Case c;
    c.alg = alg;
    c.precision = kF16F32;
    c.n = 8;
    Dense B(a.cols, c.n, SPARSETC_ORDER_ROW, c.precision.b, 0, 0), C(a.rows, c.n, SPARSETC_ORDER_ROW, c.precision.c, 0, 0);
    try {
      make_executor(g, big, c, B, C);
      ADD_FAILURE() << alg_name(alg) << ": 1e6 accepted for fp16";
    } catch (const sd::Error& e) {
      EXPECT_EQ(e.status(), SPARSETC_STATUS_VALUE_OUT_OF_RANGE) << e.what();
      EXPECT_NE(std::string(e.what()).find("entry 2"), std::string::npos) << e.what();
    }
  }
}

}  // namespace

// The BCSR tensor-core SpMM (gpu/spmm/bcsr_tc) against a float64 host reference computed from the
// inputs exactly as the kernels see them (A and B rounded to f16 / bf16 / tf32, or kept in f64), with
// an error bound per output scaled by sum |alpha a b| + |beta c|: every precision, both orders of B
// and C, tight, padded-aligned and odd leading dimensions (the cp.async and the element-wise load
// paths), odd M / K / N, empty rows and block rows, alpha / beta (beta = 0 over NaN-poisoned C),
// a row map, block rows of thousands of blocks (split panels, combined in a fixed order: repeated
// runs give the same bits), an empty matrix, and the errors (unsupported types, f16 out of range,
// bad leading dimensions, small workspace). B's padding is NaN (never read), C's padding is checked
// untouched; wide tiles with row-major B on every kernel that can run them (TcSpmmArgs::kernel_variant).
// The largest error relative to its bound is printed per precision. Skips without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "formats/sparse.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/spmm/bcsr_tc/bcsr_tc_spmm.hpp"
#include "gpu/spmm/bcsr_tc/tc_loop_rule.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;
using sd::DeviceBuffer;
using sd::GpuContext;
using sd::TcPrecision;


using sparsetc_test::Stream;

const char* name_of(TcPrecision p) {
  switch (p) {
    case TcPrecision::f16: return "f16";
    case TcPrecision::bf16: return "bf16";
    case TcPrecision::tf32: return "tf32";
    default: return "f64";
  }
}
const char* name_of(sparsetc_value_type_t t) {
  switch (t) {
    case SPARSETC_VALUE_F32: return "f32";
    case SPARSETC_VALUE_F64: return "f64";
    case SPARSETC_VALUE_F16: return "f16";
    default: return "bf16";
  }
}

// ---- values as the kernels see them

float tf32_of(float f) {  // cvt.rna.tf32.f32: 10 mantissa bits, ties away from zero
  uint32_t u = sd::float_bits(f);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  return sd::bits_float(u);
}

// A value after the operand's conversion (from float or double CSR values).
double seen_a(double v, TcPrecision p, bool from_float) {
  const float f = float(v);
  switch (p) {
    case TcPrecision::f16: return sd::half_to_float(sd::double_to_half(from_float ? double(f) : v));
    case TcPrecision::bf16:
      return sd::bfloat16_to_float(from_float ? sd::float_to_bfloat16(f) : sd::double_to_bfloat16(v));
    case TcPrecision::tf32: return tf32_of(f);
    default: return v;
  }
}

sparsetc_value_type_t b_type_of(TcPrecision p) {
  switch (p) {
    case TcPrecision::f16: return SPARSETC_VALUE_F16;
    case TcPrecision::bf16: return SPARSETC_VALUE_BF16;
    case TcPrecision::tf32: return SPARSETC_VALUE_F32;
    default: return SPARSETC_VALUE_F64;
  }
}
std::vector<sparsetc_value_type_t> c_types_of(TcPrecision p) {
  switch (p) {
    case TcPrecision::f16: return {SPARSETC_VALUE_F32, SPARSETC_VALUE_F16};
    case TcPrecision::bf16: return {SPARSETC_VALUE_F32, SPARSETC_VALUE_BF16};
    case TcPrecision::tf32: return {SPARSETC_VALUE_F32};
    default: return {SPARSETC_VALUE_F64};
  }
}

size_t bytes_of(sparsetc_value_type_t t) { return t == SPARSETC_VALUE_F64 ? 8 : t == SPARSETC_VALUE_F32 ? 4 : 2; }

// A dense array of one value type on the host.
struct HostArray {
  sparsetc_value_type_t type;
  std::vector<unsigned char> bytes;
  HostArray(sparsetc_value_type_t t, size_t n) : type(t), bytes(n * bytes_of(t)) {}
  size_t size() const { return bytes.size() / bytes_of(type); }
  void set(size_t i, double v) {
    unsigned char* p = bytes.data() + i * bytes_of(type);
    switch (type) {
      case SPARSETC_VALUE_F32: { const float f = float(v); std::memcpy(p, &f, 4); break; }
      case SPARSETC_VALUE_F64: std::memcpy(p, &v, 8); break;
      case SPARSETC_VALUE_F16: { const uint16_t h = sd::double_to_half(v); std::memcpy(p, &h, 2); break; }
      default: { const uint16_t b = sd::double_to_bfloat16(v); std::memcpy(p, &b, 2); break; }
    }
  }
  double get(size_t i) const {
    const unsigned char* p = bytes.data() + i * bytes_of(type);
    switch (type) {
      case SPARSETC_VALUE_F32: { float f; std::memcpy(&f, p, 4); return f; }
      case SPARSETC_VALUE_F64: { double d; std::memcpy(&d, p, 8); return d; }
      case SPARSETC_VALUE_F16: { uint16_t h; std::memcpy(&h, p, 2); return sd::half_to_float(h); }
      default: { uint16_t b; std::memcpy(&b, p, 2); return sd::bfloat16_to_float(b); }
    }
  }
  void poison(size_t i) { set(i, std::numeric_limits<double>::quiet_NaN()); }
  bool same_bits(size_t i, const HostArray& o) const {
    const size_t w = bytes_of(type);
    return std::memcmp(bytes.data() + i * w, o.bytes.data() + i * w, w) == 0;
  }
};

// ---- matrices

// rows x cols with the given entries per row (distinct random columns), values in +-[0.25, 2].
CsrMatrix<double> rows_of(int64_t cols, const std::vector<int64_t>& lengths, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.25, 2.0);
  std::uniform_int_distribution<int64_t> c(0, cols - 1);
  CsrMatrix<double> m;
  m.rows = int64_t(lengths.size());
  m.cols = cols;
  for (int64_t n : lengths) {
    std::vector<int64_t> pick;
    if (n * 2 > cols) {
      pick.resize(size_t(cols));
      std::iota(pick.begin(), pick.end(), int64_t(0));
      std::shuffle(pick.begin(), pick.end(), rng);
      pick.resize(size_t(n));
    } else {
      std::map<int64_t, bool> seen;
      while (int64_t(pick.size()) < n) {
        const int64_t x = c(rng);
        if (!seen[x]) {
          seen[x] = true;
          pick.push_back(x);
        }
      }
    }
    std::sort(pick.begin(), pick.end());
    for (int64_t x : pick) {
      m.col_idx.push_back(x);
      m.values.push_back((rng() & 1 ? -1.0 : 1.0) * u(rng));
    }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  return m;
}

CsrMatrix<double> random_csr(int64_t rows, int64_t cols, double density, uint64_t seed) {
  return sparsetc_test::csr_of(sparsetc_test::random_triplets(rows, cols, density, seed, true));
}

template <typename V>
CsrMatrix<V> cast(const CsrMatrix<double>& a) {
  CsrMatrix<V> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.row_ptr = a.row_ptr;
  m.col_idx = a.col_idx;
  m.values.assign(a.values.begin(), a.values.end());
  return m;
}

sd::TcBcsrOperand make_operand(const CsrMatrix<double>& A, TcPrecision p, bool from_float, const GpuContext& ctx) {
  if (from_float) {
    const sd::DeviceCsr<float> d = sd::csr_to_device(cast<float>(A), ctx);
    return sd::make_tc_bcsr(d.view(), p, ctx);
  }
  const sd::DeviceCsr<double> d = sd::csr_to_device(A, ctx);
  return sd::make_tc_bcsr(d.view(), p, ctx);
}

// ---- one multiply checked against the reference

struct Case {
  TcPrecision precision = TcPrecision::f16;
  int64_t n = 8;
  sparsetc_order_t b_order = SPARSETC_ORDER_ROW, c_order = SPARSETC_ORDER_ROW;
  sparsetc_value_type_t c_type = SPARSETC_VALUE_F32;
  int ld_kind = 0;  // 0: tight, 1: padded to a multiple of 8 plus 8 (aligned), 2: tight + 3 (odd: element-wise loads)
  double alpha = 1.0, beta = 0.0;
  bool row_map = false;
  bool from_float = true;
  int repeats = 1;  // > 1: the results of every run must be bitwise equal
  // The caller's arrival counters (TcSpmmArgs::counters), zeroed once before the first run: every
  // run must leave them zero.
  bool own_counters = false;
};

std::string describe(const Case& c) {
  return std::string(name_of(c.precision)) + " n=" + std::to_string(c.n) +
         (c.b_order == SPARSETC_ORDER_ROW ? " B row" : " B col") + (c.c_order == SPARSETC_ORDER_ROW ? " C row " : " C col ") +
         name_of(c.c_type) + " ld_kind=" + std::to_string(c.ld_kind) + " alpha=" + std::to_string(c.alpha) +
         " beta=" + std::to_string(c.beta) + (c.row_map ? " row_map" : "") + (c.from_float ? "" : " from double") +
         (c.own_counters ? " own counters" : "");
}

int64_t leading(int64_t extent, int kind) {
  const int64_t tight = std::max<int64_t>(1, extent);
  return kind == 0 ? tight : kind == 1 ? (tight + 7) / 8 * 8 + 8 : tight + 3;
}

// Largest error / bound and error per precision (printed at the end of the program).
std::map<std::string, std::pair<double, double>>& worst() {
  static std::map<std::string, std::pair<double, double>> w;
  return w;
}
struct PrintWorst : ::testing::Environment {
  void TearDown() override {
    for (const auto& [k, v] : worst())
      std::printf("[bcsr_tc] %-5s largest error %.3e, largest error / bound %.3f\n", k.c_str(), v.second, v.first);
  }
};
const auto* const print_worst = ::testing::AddGlobalTestEnvironment(new PrintWorst);

// Per-output bound: accumulation in the accumulator's precision over the row's terms, plus the
// rounding of alpha, beta and of the output type (relative, or absolute for subnormal results).
double bound_of(TcPrecision p, sparsetc_value_type_t c_type, int64_t terms, double scale, double magnitude) {
  const double u_acc = p == TcPrecision::f64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
  const double u_out = c_type == SPARSETC_VALUE_F16    ? std::ldexp(1.0, -11)
                       : c_type == SPARSETC_VALUE_BF16 ? std::ldexp(1.0, -8)
                       : c_type == SPARSETC_VALUE_F32  ? std::ldexp(1.0, -24)
                                                       : std::ldexp(1.0, -53);
  // half the spacing of the output type's subnormals (results below its smallest normal)
  const double sub = c_type == SPARSETC_VALUE_F16    ? std::ldexp(1.0, -25)
                     : c_type == SPARSETC_VALUE_BF16 ? std::ldexp(1.0, -134)
                     : c_type == SPARSETC_VALUE_F32  ? std::ldexp(1.0, -150)
                                                     : 1e-300;
  return double(terms + 20) * u_acc * scale + u_out * magnitude + sub;
}

// The kernels a case can run on (TcSpmmArgs::kernel_variant): fp16 / bf16 with n > 8 and row-major B
// have, besides the default (warp-specialized mma.sync), the CTA-synchronous kernel (1); with n > 32
// also the wgmma kernel (3, on compute capability 9.0), and fp16 the coarse-stage variant (2).
std::vector<int> kernel_variants_of(const Case& c) {
  const bool half = c.precision == TcPrecision::f16 || c.precision == TcPrecision::bf16;
  if (!half || c.n <= 8 || c.b_order != SPARSETC_ORDER_ROW) return {0};
  if (c.n <= 32) return {0, 1};
  if (c.precision == TcPrecision::f16) return {0, 1, 2, 3};
  return {0, 1, 3};
}

void check_case(const CsrMatrix<double>& A, const sd::TcBcsrOperand& op, const Case& c, Stream& s, uint64_t seed) {
  SCOPED_TRACE(describe(c));
  ASSERT_TRUE(sd::tc_supports(c.precision, b_type_of(c.precision), c.c_type)) << "test case of unsupported types";
  const GpuContext ctx = s.context();
  const int64_t m = A.rows, k = A.cols, n = c.n;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  const sparsetc_value_type_t b_type = b_type_of(c.precision);
  const bool b_row = c.b_order == SPARSETC_ORDER_ROW, c_row = c.c_order == SPARSETC_ORDER_ROW;
  const int64_t ldb = leading(b_row ? n : k, c.ld_kind), ldc = leading(c_row ? n : m, c.ld_kind);
  const int64_t b_lines = b_row ? k : n, c_lines = c_row ? m : n;

  // B, NaN beyond its logical extent (a read of the padding would poison the result)
  HostArray B(b_type, size_t(std::max<int64_t>(1, ldb * b_lines)));
  for (size_t i = 0; i < B.size(); ++i) B.poison(i);
  auto b_at = [&](int64_t r, int64_t j) { return size_t(b_row ? r * ldb + j : r + j * ldb); };
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < n; ++j) B.set(b_at(r, j), u(rng));
  // C: NaN when beta == 0 (must not propagate), else random; the padding keeps its bits
  HostArray C0(c.c_type, size_t(std::max<int64_t>(1, ldc * c_lines)));
  for (size_t i = 0; i < C0.size(); ++i) C0.poison(i);
  auto c_at = [&](int64_t r, int64_t j) { return size_t(c_row ? r * ldc + j : r + j * ldc); };
  if (c.beta != 0)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) C0.set(c_at(r, j), u(rng));
  std::vector<int64_t> row_map(static_cast<size_t>(m));
  std::iota(row_map.begin(), row_map.end(), int64_t(0));
  if (c.row_map) std::shuffle(row_map.begin(), row_map.end(), rng);

  DeviceBuffer dB(B.bytes.size(), ctx), dC(C0.bytes.size(), ctx), dmap(size_t(std::max<int64_t>(1, m)) * 8, ctx);
  sd::copy_host_to_device(dB.data(), B.bytes.data(), B.bytes.size(), s.stream);
  if (m > 0) sd::copy_host_to_device(dmap.data(), row_map.data(), size_t(m) * 8, s.stream);
  sd::TcSpmmArgs args;
  args.n = n;
  args.B = dB.data();
  args.b_type = b_type;
  args.b_order = c.b_order;
  args.ldb = ldb;
  args.C = dC.data();
  args.c_type = c.c_type;
  args.c_order = c.c_order;
  args.ldc = ldc;
  args.alpha = c.alpha;
  args.beta = c.beta;
  args.row_map = c.row_map ? dmap.as<const int64_t>() : nullptr;
  const size_t ws_bytes = sd::tc_spmm_workspace_bytes(op, n, c.own_counters);
  DeviceBuffer ws(ws_bytes, ctx);
  const int64_t counter_count = c.own_counters ? sd::tc_spmm_counter_count(op, n) : 0;
  DeviceBuffer counters(size_t(std::max<int64_t>(1, counter_count)) * sizeof(unsigned), ctx);
  if (c.own_counters) {
    ASSERT_EQ(cudaMemsetAsync(counters.data(), 0, counters.size(), s.stream), cudaSuccess);
    args.counters = counters.as<unsigned>();
    args.counter_count = counter_count;
  }

  // reference from the values as the kernel sees them
  std::vector<double> ref(size_t(m * n), 0.0), scale(size_t(m * n), 0.0);
  std::vector<double> bseen(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const double b = B.get(b_at(r, j));
      bseen[size_t(r * n + j)] = c.precision == TcPrecision::tf32 ? double(tf32_of(float(b))) : b;
    }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t e = A.row_ptr[size_t(i)]; e < A.row_ptr[size_t(i + 1)]; ++e) {
      const double a = seen_a(A.values[size_t(e)], c.precision, c.from_float);
      const int64_t col = A.col_idx[size_t(e)];
      for (int64_t j = 0; j < n; ++j) {
        ref[size_t(i * n + j)] += a * bseen[size_t(col * n + j)];
        scale[size_t(i * n + j)] += std::fabs(a * bseen[size_t(col * n + j)]);
      }
    }
  // every kernel of the case (TcSpmmArgs::kernel_variant) computes the same function, and so do the panels'
  // own work items where n runs a spread list (TcSpmmArgs::spread), and the kernels for the other
  // kind of entries than the operand's (TcSpmmArgs::dense_stages), and the warp-specialized kernel
  // with 3 CTAs looping over the panels' own work items where they have no split items
  // (TcSpmmArgs::loop_ctas: with more work items x N tiles than that, as FewPanelsSpreadOverTheDevice's
  // 16 panels, every CTA passes over the stage ring several times, with items of every length between)
  struct Run {
    int variant;
    bool spread;
    int dense_stages;
    int loop_ctas;
  };
  std::vector<Run> runs;
  for (int variant : kernel_variants_of(c)) runs.push_back({variant, true, -1, -1});
  if (&sd::tc_work_list(op, n) != &op.panel_items) runs.push_back({0, false, -1, -1});
  runs.push_back({0, true, op.dense_stages() ? 0 : 1, -1});
  if (kernel_variants_of(c).size() > 1 && op.panel_items.split_items == 0) {
    runs.push_back({0, false, 0, 3});
    if (n > 32) runs.push_back({0, false, 1, 3});
  }
  for (const Run& run : runs) {
    SCOPED_TRACE("kernel_variant " + std::to_string(run.variant) + (run.spread ? "" : ", panels' own work items") +
                 (run.dense_stages < 0 ? "" : run.dense_stages ? ", dense-entry kernels" : ", sparse-entry kernels") +
                 (run.loop_ctas > 0 ? ", " + std::to_string(run.loop_ctas) + " looping CTAs" : ""));
    args.kernel_variant = run.variant;
    args.spread = run.spread;
    args.dense_stages = run.dense_stages;
    args.loop_ctas = run.loop_ctas;
    std::vector<HostArray> results;
    for (int r = 0; r < c.repeats; ++r) {
      sd::copy_host_to_device(dC.data(), C0.bytes.data(), C0.bytes.size(), s.stream);
      sd::tc_spmm(op, args, ws.data(), ws_bytes, s.stream);
      HostArray got(c.c_type, C0.size());
      sd::copy_device_to_host(got.bytes.data(), dC.data(), got.bytes.size(), s.stream);
      std::vector<unsigned> left(size_t(counter_count), 1u);
      if (counter_count > 0)
        sd::copy_device_to_host(left.data(), counters.data(), left.size() * sizeof(unsigned), s.stream);
      ASSERT_EQ(cudaStreamSynchronize(s.stream), cudaSuccess);
      EXPECT_EQ(std::count(left.begin(), left.end(), 0u), counter_count) << "counters not left zero by run " << r;
      results.push_back(std::move(got));
    }
    for (int r = 1; r < c.repeats; ++r)
      ASSERT_EQ(std::memcmp(results[0].bytes.data(), results[size_t(r)].bytes.data(), results[0].bytes.size()), 0)
          << "run " << r << " differs from run 0";
    const HostArray& got = results[0];

    auto& w = worst()[name_of(c.precision)];
    int64_t bad = 0;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t terms = A.row_ptr[size_t(i + 1)] - A.row_ptr[size_t(i)];
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = c_at(row_map[size_t(i)], j);
        const double c0 = c.beta != 0 ? C0.get(at) : 0.0;
        const double want = c.alpha * ref[size_t(i * n + j)] + c.beta * c0;
        const double sc = std::fabs(c.alpha) * scale[size_t(i * n + j)] + std::fabs(c.beta * c0);
        const double bound = bound_of(c.precision, c.c_type, terms, sc, std::fabs(want));
        const double v = got.get(at);
        const double err = std::fabs(v - want);
        if (!(err <= bound)) {
          if (++bad <= 5)
            ADD_FAILURE() << "C(" << i << ", " << j << ") = " << v << ", want " << want << " (error " << err
                          << ", bound " << bound << ")";
        } else {
          w.first = std::max(w.first, err / bound);
          w.second = std::max(w.second, err);
        }
      }
    }
    EXPECT_EQ(bad, 0) << "outputs out of bound";
    // the padding of C is untouched
    std::vector<bool> logical(C0.size(), false);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) logical[c_at(i, j)] = true;
    int64_t touched = 0;
    for (size_t i = 0; i < C0.size(); ++i)
      if (!logical[i] && !got.same_bits(i, C0)) ++touched;
    EXPECT_EQ(touched, 0) << "elements of C's padding written";
  }
}

const TcPrecision kAll[] = {TcPrecision::f16, TcPrecision::bf16, TcPrecision::tf32, TcPrecision::f64};

// ---- tests

TEST(BcsrTcSpmm, BlockShapesAndTypes) {
  EXPECT_EQ(sd::tc_block_shape(TcPrecision::f16).height, 16);
  EXPECT_EQ(sd::tc_block_shape(TcPrecision::f16).width, 16);
  EXPECT_EQ(sd::tc_block_shape(TcPrecision::tf32).width, 8);
  EXPECT_EQ(sd::tc_block_shape(TcPrecision::f64).height, 8);
  EXPECT_TRUE(sd::tc_supports(TcPrecision::f16, SPARSETC_VALUE_F16, SPARSETC_VALUE_F16));
  EXPECT_TRUE(sd::tc_supports(TcPrecision::bf16, SPARSETC_VALUE_BF16, SPARSETC_VALUE_F32));
  EXPECT_FALSE(sd::tc_supports(TcPrecision::f16, SPARSETC_VALUE_F32, SPARSETC_VALUE_F32));
  EXPECT_FALSE(sd::tc_supports(TcPrecision::bf16, SPARSETC_VALUE_F16, SPARSETC_VALUE_F32));
  EXPECT_FALSE(sd::tc_supports(TcPrecision::tf32, SPARSETC_VALUE_F32, SPARSETC_VALUE_F16));
  EXPECT_FALSE(sd::tc_supports(TcPrecision::f64, SPARSETC_VALUE_F64, SPARSETC_VALUE_F32));
}

// Every precision, order, output type, leading-dimension kind and odd N on a 37 x 53 matrix with
// empty rows (M, K not multiples of any block size).
TEST(BcsrTcSpmm, OddShapesEveryLayout) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix<double> A = random_csr(37, 53, 0.15, seed);
  for (TcPrecision p : kAll) {
    const bool from_float = p != TcPrecision::f64;
    const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
    EXPECT_EQ(op.nnz, A.nnz());
    for (int64_t n : {1, 7, 9, 33, 130})
      for (sparsetc_order_t bo : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
        for (sparsetc_order_t co : {SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL})
          for (sparsetc_value_type_t ct : c_types_of(p))
            for (int ld : {0, 1, 2}) {
              Case c;
              c.precision = p;
              c.n = n;
              c.b_order = bo;
              c.c_order = co;
              c.c_type = ct;
              c.ld_kind = ld;
              c.from_float = from_float;
              check_case(A, op, c, s, seed + uint64_t(n * 7 + ld));
            }
  }
}

// alpha / beta (beta == 0 over NaN, beta != 0 reading C) and a row map, every precision.
TEST(BcsrTcSpmm, AlphaBetaRowMap) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix<double> A = random_csr(150, 141, 0.05, seed);
  for (TcPrecision p : kAll) {
    const bool from_float = p != TcPrecision::f64;
    const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
    for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-1.5, 0.0}, std::pair{0.5, 1.0}, std::pair{-2.0, 0.75}})
      for (bool map : {false, true})
        for (int64_t n : {8, 32, 128}) {
          Case c;
          c.precision = p;
          c.n = n;
          c.c_type = c_types_of(p).back();
          c.c_order = n == 32 ? SPARSETC_ORDER_COL : SPARSETC_ORDER_ROW;
          c.alpha = alpha;
          c.beta = beta;
          c.row_map = map;
          c.from_float = from_float;
          check_case(A, op, c, s, seed + uint64_t(n));
        }
  }
}

// Rows 16..99 are empty: whole block rows and a whole panel without blocks are still written
// (alpha * 0 + beta * C); the last panel is partial.
TEST(BcsrTcSpmm, EmptyRowsAndBlockRows) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<int64_t> lengths(181, 0);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < lengths.size(); ++i)
    if ((i < 16 || i >= 100) && rng() % 4 != 0) lengths[i] = int64_t(rng() % 9);
  const CsrMatrix<double> A = rows_of(77, lengths, seed);
  for (TcPrecision p : kAll) {
    const bool from_float = p != TcPrecision::f64;
    const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
    for (double beta : {0.0, -0.5})
      for (int64_t n : {5, 20, 70}) {
        Case c;
        c.precision = p;
        c.n = n;
        c.beta = beta;
        c.from_float = from_float;
        c.row_map = n == 20;
        c.c_type = c_types_of(p).back();
        check_case(A, op, c, s, seed + uint64_t(n));
      }
  }
}

// Block rows of thousands of blocks among short ones: their panels are split into chunks whose
// partial tiles are summed in a fixed order; three runs give the same bits.
TEST(BcsrTcSpmm, LongBlockRowsSplitDeterministic) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<int64_t> lengths(2050, 3);
  lengths[3] = 12000;     // panel 0
  lengths[1000] = 20000;  // a middle panel
  lengths[2049] = 9000;   // the last, partial panel
  const CsrMatrix<double> A = rows_of(60000, lengths, seed);
  for (TcPrecision p : kAll) {
    const bool from_float = p != TcPrecision::f64;
    const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
    EXPECT_GT(op.panel_items.split_panels, 0) << name_of(p);
    EXPECT_GT(op.panel_items.split_items, op.panel_items.split_panels) << name_of(p);
    EXPECT_GT(op.max_blocks_per_row, 1000) << name_of(p);
    EXPECT_EQ(op.loop_tiles, 0u) << name_of(p);  // split chunks meet at CTA barriers: one CTA each
    for (int64_t n : {8, 32, 40, 136}) {
      Case c;
      c.precision = p;
      c.n = n;
      c.beta = n == 32 || n == 136 ? 0.5 : 0.0;
      c.c_type = c_types_of(p).front();
      c.from_float = from_float;
      c.repeats = 3;
      c.own_counters = n == 32 || n == 136;
      if (c.own_counters) {
        EXPECT_GT(sd::tc_spmm_counter_count(op, n), 0) << name_of(p);
      }
      check_case(A, op, c, s, seed + uint64_t(n));
    }
  }
}

// Few panels for the device (16 of 128 rows; f64: 32 of 64): the spread work lists split every
// panel, so the narrow tiles (N <= 32) get a grid of at most two CTAs per SM and the wide tiles with
// one N tile at most one; the chunks are summed in a fixed order (repeated runs give the same bits),
// and the panels' own items give the same function. More N tiles keep the panels' own items.
TEST(BcsrTcSpmm, FewPanelsSpreadOverTheDevice) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix<double> A = sd::generate("band:2040:300", seed);
  for (TcPrecision p : kAll) {
    const bool from_float = p != TcPrecision::f64;
    const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
    ASSERT_EQ(op.panels, p == TcPrecision::f64 ? 32 : 16) << name_of(p);
    EXPECT_EQ(op.panel_items.work_items, op.panels) << name_of(p);  // 40-90 entries each: none split
    EXPECT_TRUE(op.dense_stages()) << name_of(p) << ": entry fill " << op.entry_fill();  // the band's kernels
    ASSERT_GT(op.sm_count, 0);
    for (const sd::TcWorkList* list : {&op.narrow_items, &op.wide_items}) {
      EXPECT_GT(list->work_items, op.panels) << name_of(p);
      EXPECT_EQ(list->split_panels, op.panels) << name_of(p);
    }
    EXPECT_LE(op.narrow_items.work_items, 2 * op.sm_count) << name_of(p);
    EXPECT_LE(op.wide_items.work_items, op.sm_count) << name_of(p);
    const int64_t wide_tile = p == TcPrecision::f64 ? 64 : 128;
    EXPECT_EQ(&sd::tc_work_list(op, 8), &op.narrow_items) << name_of(p);
    EXPECT_EQ(&sd::tc_work_list(op, 32), &op.narrow_items) << name_of(p);
    EXPECT_EQ(&sd::tc_work_list(op, 8, false), &op.panel_items) << name_of(p);
    EXPECT_EQ(&sd::tc_work_list(op, wide_tile), &op.wide_items) << name_of(p);
    EXPECT_EQ(&sd::tc_work_list(op, wide_tile + 1), &op.panel_items) << name_of(p);
    for (int64_t n : {int64_t(8), int64_t(32), wide_tile - 7, wide_tile + 8}) {
      Case c;
      c.precision = p;
      c.n = n;
      c.beta = n == 32 ? 0.5 : 0.0;
      c.c_type = c_types_of(p).front();
      c.from_float = from_float;
      c.repeats = 3;
      c.own_counters = n == 8 || n == wide_tile + 8;
      check_case(A, op, c, s, seed + uint64_t(n));
    }
  }
}

// Many even panels (313 of 128 rows, f16): the operand loops the warp-specialized kernel's CTAs
// wherever the grid runs 1.5 waves or more (tc_loop_rule.hpp: an even list spreads as well fixed as
// greedy), and the multiplies that loop (the default) match the reference like those that do not.
TEST(BcsrTcSpmm, EvenPanelsLoopTheirCtas) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix<double> A = sd::generate("band:40000:8", seed);
  const sd::TcBcsrOperand op = make_operand(A, TcPrecision::f16, true, s.context());
  ASSERT_EQ(op.panels, 313);
  ASSERT_EQ(op.panel_items.split_items, 0);
  ASSERT_GT(op.sm_count, 0);
  auto waves_enough = [&](int64_t works, int64_t ctas_per_sm) {
    return double(works) >= sd::tc::kLoopMinWaves * double(op.sm_count * ctas_per_sm);
  };
  EXPECT_EQ(op.loops(true, 1), waves_enough(313, 2));
  for (int64_t tiles = 1; tiles <= 12; ++tiles)
    EXPECT_EQ(op.loops(false, tiles), waves_enough(313 * std::min<int64_t>(tiles, 8), 1)) << tiles << " N tiles";
  for (int64_t n : {24, 128, 500}) {  // one N tile (narrow, wide), four
    Case c;
    c.precision = TcPrecision::f16;
    c.n = n;
    c.beta = n == 128 ? 0.5 : 0.0;
    c.c_type = SPARSETC_VALUE_F32;
    c.repeats = 2;
    c.own_counters = n == 128;
    check_case(A, op, c, s, seed + uint64_t(n));
  }
}

// Generated structured matrices (full blocks, long K): band and a 27-point stencil, f16 from double
// values as well.
TEST(BcsrTcSpmm, GeneratedMatrices) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* spec : {"band:1001:40", "poisson3d27:11"}) {
    SCOPED_TRACE(spec);
    const CsrMatrix<double> A = sd::generate(spec, seed);
    for (TcPrecision p : kAll)
      for (bool from_float : {true, false}) {
        if (p == TcPrecision::f64 && from_float) continue;
        const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
        for (int64_t n : {8, 32, 128}) {
          Case c;
          c.precision = p;
          c.n = n;
          c.from_float = from_float;
          c.b_order = n == 32 ? SPARSETC_ORDER_COL : SPARSETC_ORDER_ROW;
          c.ld_kind = n == 128 ? 1 : 0;
          c.c_type = c_types_of(p).front();
          check_case(A, op, c, s, seed + uint64_t(n));
        }
      }
  }
}

// Wide tiles over panels of more than 32 entries (the producers' descriptor batches turn over),
// K not a multiple of the block width (the last slab is partial: no bulk copy), whole and partial
// N tiles; every wide kernel, fp16 and bf16, for dense entries (the band's own) and for sparse ones.
TEST(BcsrTcSpmm, WideTilesLongPanels) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix<double> A = sd::generate("band:3000:300", seed);
  for (TcPrecision p : {TcPrecision::f16, TcPrecision::bf16}) {
    const sd::TcBcsrOperand op = make_operand(A, p, true, s.context());
    EXPECT_GT(op.entries, 32 * op.panels) << name_of(p);
    EXPECT_TRUE(op.dense_stages()) << name_of(p) << ": entry fill " << op.entry_fill();  // the band's kernels
    for (int64_t n : {256, 200})
      for (int ld : {0, 1}) {
        Case c;
        c.precision = p;
        c.n = n;
        c.ld_kind = ld;
        c.beta = ld == 1 ? 0.5 : 0.0;
        check_case(A, op, c, s, seed + uint64_t(n + ld));
      }
  }
}

// No blocks at all: C = beta * C (zeros over NaN when beta == 0); no rows: nothing to do.
TEST(BcsrTcSpmm, EmptyMatrix) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> A = rows_of(53, std::vector<int64_t>(37, 0), seed);
  for (TcPrecision p : kAll) {
    const bool from_float = p != TcPrecision::f64;
    const sd::TcBcsrOperand op = make_operand(A, p, from_float, s.context());
    EXPECT_EQ(op.blocks, 0);
    EXPECT_EQ(op.entries, 0);
    for (double beta : {0.0, 2.0}) {
      Case c;
      c.precision = p;
      c.n = 9;
      c.beta = beta;
      c.c_type = c_types_of(p).back();
      c.from_float = from_float;
      check_case(A, op, c, s, seed);
    }
  }
  const CsrMatrix<double> none = rows_of(10, {}, seed);
  const sd::TcBcsrOperand op = make_operand(none, TcPrecision::f16, true, s.context());
  EXPECT_EQ(op.panel_items.work_items, 0);
  EXPECT_EQ(op.narrow_items.work_items, 0);
  EXPECT_EQ(op.wide_items.work_items, 0);
  sd::TcSpmmArgs args;
  args.n = 4;
  args.ldb = 4;
  args.ldc = 4;
  EXPECT_NO_THROW(sd::tc_spmm(op, args, nullptr, 0, s.stream));
}

sparsetc_status_t status_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const sd::Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return SPARSETC_STATUS_SUCCESS;
}

TEST(BcsrTcSpmm, Errors) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const uint64_t seed = sparsetc_test::fresh_seed();
  CsrMatrix<double> A = random_csr(40, 30, 0.2, seed);
  const sd::TcBcsrOperand op = make_operand(A, TcPrecision::f16, true, s.context());
  DeviceBuffer B(30 * 8 * 4, s.context()), C(40 * 8 * 4, s.context());
  sd::TcSpmmArgs args;
  args.n = 8;
  args.B = B.data();
  args.ldb = 8;
  args.C = C.data();
  args.ldc = 8;
  // unsupported type pairs
  args.b_type = SPARSETC_VALUE_F32;
  EXPECT_EQ(status_of([&] { sd::tc_spmm(op, args, nullptr, 0, s.stream); }), SPARSETC_STATUS_NOT_SUPPORTED);
  args.b_type = SPARSETC_VALUE_F16;
  args.c_type = SPARSETC_VALUE_BF16;
  EXPECT_EQ(status_of([&] { sd::tc_spmm(op, args, nullptr, 0, s.stream); }), SPARSETC_STATUS_NOT_SUPPORTED);
  args.c_type = SPARSETC_VALUE_F32;
  {
    const sd::DeviceCsr<float> d = sd::csr_to_device(cast<float>(A), s.context());
    EXPECT_EQ(status_of([&] { sd::make_tc_bcsr(d.view(), TcPrecision::f64, s.context()); }),
              SPARSETC_STATUS_NOT_SUPPORTED);
  }
  // bad leading dimensions
  args.ldb = 7;
  EXPECT_EQ(status_of([&] { sd::tc_spmm(op, args, nullptr, 0, s.stream); }), SPARSETC_STATUS_INVALID_VALUE);
  args.ldb = 8;
  args.c_order = SPARSETC_ORDER_COL;
  EXPECT_EQ(status_of([&] { sd::tc_spmm(op, args, nullptr, 0, s.stream); }), SPARSETC_STATUS_INVALID_VALUE);
  args.c_order = SPARSETC_ORDER_ROW;
  EXPECT_EQ(status_of([&] { sd::tc_spmm(op, args, nullptr, 0, s.stream); }), SPARSETC_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(s.stream), cudaSuccess);
  // a value beyond the f16 range (reported with its entry and value), also from double input
  A.values[5] = 70000.0;
  std::string message;
  EXPECT_EQ(status_of([&] { make_operand(A, TcPrecision::f16, true, s.context()); }, &message),
            SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
  EXPECT_NE(message.find("70000"), std::string::npos) << message;
  EXPECT_NE(message.find("entry 5"), std::string::npos) << message;
  EXPECT_EQ(status_of([&] { make_operand(A, TcPrecision::f16, false, s.context()); }),
            SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
  EXPECT_EQ(status_of([&] { make_operand(A, TcPrecision::bf16, true, s.context()); }), SPARSETC_STATUS_SUCCESS);
  // a workspace too small for a split schedule
  std::vector<int64_t> lengths(300, 2);
  lengths[7] = 9000;
  const sd::TcBcsrOperand split = make_operand(rows_of(40000, lengths, seed), TcPrecision::f16, true, s.context());
  ASSERT_GT(sd::tc_spmm_workspace_bytes(split, 8), 0u);
  DeviceBuffer B2(40000 * 8 * 2, s.context()), C2(300 * 8 * 4, s.context());
  args.B = B2.data();
  args.C = C2.data();
  EXPECT_EQ(status_of([&] { sd::tc_spmm(split, args, nullptr, 0, s.stream); }), SPARSETC_STATUS_WORKSPACE_TOO_SMALL);
  // the caller's arrival counters: fewer than the split panels need
  const int64_t counter_count = sd::tc_spmm_counter_count(split, 8);
  ASSERT_GT(counter_count, 0);
  EXPECT_LT(sd::tc_spmm_workspace_bytes(split, 8, true), sd::tc_spmm_workspace_bytes(split, 8));
  DeviceBuffer counters(size_t(counter_count) * sizeof(unsigned), s.context()),
      ws(sd::tc_spmm_workspace_bytes(split, 8, true), s.context());
  args.counters = counters.as<unsigned>();
  args.counter_count = counter_count - 1;
  EXPECT_EQ(status_of([&] { sd::tc_spmm(split, args, ws.data(), ws.size(), s.stream); }),
            SPARSETC_STATUS_INTERNAL_ERROR);
  ASSERT_EQ(cudaStreamSynchronize(s.stream), cudaSuccess);
}

}  // namespace

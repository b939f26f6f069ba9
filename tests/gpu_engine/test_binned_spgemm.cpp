// The binned merge-path SpGEMM (gpu/spgemm/binned/) against the float64 CPU reference: structure
// identical to Gustavson's (explicit and cancelled zeros kept), values within the rounding bound
// (n + 2) * eps * (|A| |B|)_ij; every bin group hit (heap, the four ESC bins, merge path); fresh
// random inputs with odd, rectangular shapes and empty rows; bitwise-identical results across
// repeats, panels, merge-row growth and numeric-only reuse; empty matrices; rows with more than
// 2^16 products; unsorted and transposed operands; more than 2^31 products. Every device allocation
// is poisoned (0xFF: NaN values, -1 indices) so an unwritten output cannot pass. Skips without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;
using sparsetc_test::absolute;
using sparsetc_test::values_as;


class BinnedSpgemm : public sparsetc_test::PoisonedGpuTest {};

// ---- inputs

// rows x cols; each row's length drawn from `lengths` (clipped to cols), distinct random columns,
// values +-[0.5, 1.5] with a fraction of explicit zeros.
CsrMatrix<double> random_rows(int64_t rows, int64_t cols, const std::vector<int64_t>& lengths, uint64_t seed,
                              double zeros = 0.05) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5), unit(0, 1);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(size_t(rows + 1), 0);
  std::vector<int64_t> pool(static_cast<size_t>(cols));
  std::iota(pool.begin(), pool.end(), 0);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t length = std::min<int64_t>(lengths[size_t(rng() % lengths.size())], cols);
    for (int64_t j = 0; j < length; ++j) std::swap(pool[size_t(j)], pool[size_t(j + int64_t(rng() % uint64_t(cols - j)))]);
    std::vector<int64_t> picked(pool.begin(), pool.begin() + length);
    std::sort(picked.begin(), picked.end());
    for (int64_t c : picked) {
      m.col_idx.push_back(c);
      m.values.push_back(unit(rng) < zeros ? 0.0 : (rng() & 1 ? 1 : -1) * u(rng));
    }
    m.row_ptr[size_t(i + 1)] = m.nnz();
  }
  return m;
}

template <typename V>
CsrMatrix<double> rounded(CsrMatrix<double> m) {
  for (double& x : m.values) x = double(V(x));
  return m;
}

std::vector<int64_t> row_bounds(const CsrMatrix<double>& a, const CsrMatrix<double>& b) {
  std::vector<int64_t> u(size_t(a.rows), 0);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t p = a.row_ptr[size_t(i)]; p < a.row_ptr[size_t(i + 1)]; ++p) {
      const int64_t k = a.col_idx[size_t(p)];
      u[size_t(i)] += b.row_ptr[size_t(k + 1)] - b.row_ptr[size_t(k)];
    }
  return u;
}

int64_t expected_room(const CsrMatrix<double>& a, const CsrMatrix<double>& b);

// ---- running and checking

template <typename V>
struct Result {
  CsrMatrix<V> c;
  sd::BinnedSpgemmStats stats;
};

template <typename V>
Result<V> multiply(const CsrMatrix<double>& a, const CsrMatrix<double>& b, const sd::GpuContext& ctx,
                sd::BinnedSpgemmOptions options = {}) {
  const sd::DeviceCsr<V> da = sd::csr_to_device(values_as<V>(a), ctx), db = sd::csr_to_device(values_as<V>(b), ctx);
  sd::BinnedSpgemm<V> spgemm(da.view(), db.view(), options, ctx);
  const sd::DeviceCsr<V> c = spgemm.multiply();
  Result<V> result{sd::csr_to_host(c.view(), ctx.stream), spgemm.stats()};
  EXPECT_EQ(cudaStreamSynchronize(ctx.stream), cudaSuccess);
  return result;
}

// Structure identical to the CPU's Gustavson; values within (n_i + 2) eps (|A||B|)_ij, where n_i
// is the length of row i of A (products of one entry, each rounded, summed left to right).
template <typename V>
::testing::AssertionResult matches_reference(const CsrMatrix<V>& got, const CsrMatrix<double>& a,
                                             const CsrMatrix<double>& b) {
  const CsrMatrix<double> want = sd::cpu_spgemm(a, b, 0);
  const CsrMatrix<double> bound = sd::cpu_spgemm(absolute(a), absolute(b), 0);
  if (got.rows != want.rows || got.cols != want.cols)
    return ::testing::AssertionFailure() << "shape " << got.rows << "x" << got.cols << ", want " << want.rows << "x"
                                         << want.cols;
  if (got.row_ptr != want.row_ptr) {
    for (size_t i = 0; i < want.row_ptr.size(); ++i)
      if (got.row_ptr[i] != want.row_ptr[i])
        return ::testing::AssertionFailure() << "row_ptr[" << i << "] = " << got.row_ptr[i] << ", want "
                                             << want.row_ptr[i];
  }
  for (size_t p = 0; p < want.col_idx.size(); ++p)
    if (got.col_idx[p] != want.col_idx[p])
      return ::testing::AssertionFailure() << "col_idx[" << p << "] = " << got.col_idx[p] << ", want "
                                           << want.col_idx[p];
  const double eps = std::numeric_limits<V>::epsilon();
  for (int64_t i = 0; i < want.rows; ++i) {
    const double n = double(a.row_ptr[size_t(i + 1)] - a.row_ptr[size_t(i)]);
    for (int64_t p = want.row_ptr[size_t(i)]; p < want.row_ptr[size_t(i + 1)]; ++p) {
      const double g = double(got.values[size_t(p)]), w = want.values[size_t(p)];
      const double tolerance = (n + 2) * eps * bound.values[size_t(p)] + std::numeric_limits<V>::min();
      if (!(std::fabs(g - w) <= tolerance))
        return ::testing::AssertionFailure() << "C(" << i << ", " << want.col_idx[size_t(p)] << ") = " << g
                                             << ", want " << w << " (bound " << tolerance << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

template <typename V>
::testing::AssertionResult bitwise_equal(const CsrMatrix<V>& x, const CsrMatrix<V>& y) {
  if (x.row_ptr != y.row_ptr || x.col_idx != y.col_idx) return ::testing::AssertionFailure() << "structure differs";
  if (x.values.size() != y.values.size() ||
      (!x.values.empty() && std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(V)) != 0))
    return ::testing::AssertionFailure() << "values differ in their bits";
  return ::testing::AssertionSuccess();
}

// Numeric-only values of A * B on `pattern`'s structure (its values ignored), back on the host.
template <typename V>
CsrMatrix<V> numeric_reuse(const CsrMatrix<double>& a, const CsrMatrix<double>& b, const CsrMatrix<V>& pattern,
                           const sd::GpuContext& ctx) {
  const sd::DeviceCsr<V> da = sd::csr_to_device(values_as<V>(a), ctx), db = sd::csr_to_device(values_as<V>(b), ctx);
  const sd::DeviceCsr<V> dp = sd::csr_to_device(pattern, ctx);
  sd::DeviceBuffer values(size_t(dp.nnz) * sizeof(V), ctx), in_warps(size_t(dp.nnz) * sizeof(V), ctx);
  sd::binned_numeric(da.view(), db.view(), dp.view(), values.as<V>(), ctx);
  sd::binned_numeric(da.view(), db.view(), dp.view(), in_warps.as<V>(), ctx, false);
  CsrMatrix<V> reused = pattern, warps = pattern;
  sd::copy_device_to_host(reused.values.data(), values.data(), values.size(), ctx.stream);
  sd::copy_device_to_host(warps.values.data(), in_warps.data(), in_warps.size(), ctx.stream);
  EXPECT_TRUE(bitwise_equal(reused, warps)) << "short rows in threads against every row in a warp";
  return reused;
}

// The pattern (and values) of c with every third entry dropped.
template <typename V>
CsrMatrix<V> every_third_dropped(const CsrMatrix<V>& c) {
  CsrMatrix<V> thinned;
  thinned.rows = c.rows;
  thinned.cols = c.cols;
  thinned.row_ptr.assign(c.row_ptr.size(), 0);
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t p = c.row_ptr[size_t(i)]; p < c.row_ptr[size_t(i + 1)]; ++p)
      if (p % 3 != 1) {
        thinned.col_idx.push_back(c.col_idx[size_t(p)]);
        thinned.values.push_back(c.values[size_t(p)]);
      }
    thinned.row_ptr[size_t(i + 1)] = int64_t(thinned.col_idx.size());
  }
  return thinned;
}


// Mixed row lengths: products per row from 0 to ~20000, so every bin group runs.
struct Operands {
  CsrMatrix<double> a, b;
};
Operands mixed(uint64_t seed) {
  return {random_rows(1501, 1203, {0, 1, 2, 3, 4, 6, 9, 17, 33, 70, 140, 400}, seed),
          random_rows(1203, 1707, {0, 1, 2, 3, 5, 8, 20, 60, 150}, seed + 1)};
}

template <typename V>
void check_mixed(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const Operands o = mixed(seed);
  const CsrMatrix<double> a = rounded<V>(o.a), b = rounded<V>(o.b);
  const Result<V> run = multiply<V>(a, b, t.context());
  EXPECT_TRUE(matches_reference(run.c, a, b)) << "seed " << seed;
  int64_t heap = 0;
  for (int k = 2; k <= 32; ++k) heap += run.stats.bin_rows[size_t(k)];
  EXPECT_GT(run.stats.bin_rows[0], 0);
  EXPECT_GT(run.stats.bin_rows[1], 0);
  EXPECT_GT(heap, 0);
  for (int k = sd::binned::kFirstEscBin; k <= sd::binned::kMergeBin; ++k)
    EXPECT_GT(run.stats.bin_rows[size_t(k)], 0) << "bin " << k << " got no row (seed " << seed << ")";
  int64_t products = 0;
  for (int64_t u : row_bounds(a, b)) products += u;
  EXPECT_EQ(run.stats.products, products);
  EXPECT_EQ(run.stats.temporary_entries, expected_room(a, b));
}

TEST_F(BinnedSpgemm, MatchesCpuReferenceEveryBinFloat) { check_mixed<float>(*this); }
TEST_F(BinnedSpgemm, MatchesCpuReferenceEveryBinDouble) { check_mixed<double>(*this); }

TEST_F(BinnedSpgemm, RectangularShapes) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  struct Shape {
    int64_t m, k, n;
    std::vector<int64_t> la, lb;
  };
  const Shape shapes[] = {{3001, 41, 5003, {0, 1, 5, 17, 40}, {0, 3, 60, 400}},  // tall A, wide B: u up to 16000
                          {37, 4999, 61, {0, 250, 1000}, {0, 1, 7, 30}},         // short, deep
                          {1, 1, 1, {1}, {1}},
                          {2, 9000, 3, {9000}, {3}}};  // 27000 products into 3 columns
  for (const Shape& s : shapes) {
    const CsrMatrix<double> a = random_rows(s.m, s.k, s.la, seed + uint64_t(s.m)),
                            b = random_rows(s.k, s.n, s.lb, seed + uint64_t(s.n));
    const Result<double> run = multiply<double>(a, b, context());
    EXPECT_TRUE(matches_reference(run.c, a, b)) << s.m << "x" << s.k << "x" << s.n << " seed " << seed;
  }
}

TEST_F(BinnedSpgemm, RowsWithMoreThan65536Products) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> a = random_rows(23, 3001, {0, 310, 520}, seed),
                          b = random_rows(3001, 2003, {150, 300}, seed + 1);
  const std::vector<int64_t> u = row_bounds(a, b);
  ASSERT_GT(*std::max_element(u.begin(), u.end()), int64_t(1) << 16);
  const CsrMatrix<float> want_bits = multiply<float>(rounded<float>(a), rounded<float>(b), context()).c;
  EXPECT_TRUE(matches_reference(want_bits, rounded<float>(a), rounded<float>(b))) << "seed " << seed;
  const Result<double> run = multiply<double>(a, b, context());
  EXPECT_TRUE(matches_reference(run.c, a, b)) << "seed " << seed;
  EXPECT_GT(run.stats.bin_rows[sd::binned::kMergeBin], 0);
}

TEST_F(BinnedSpgemm, EmptyRowsAndEmptyMatrices) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  struct Shape {
    int64_t m, k, n;
    std::vector<int64_t> la, lb;
  };
  const Shape shapes[] = {{0, 5, 7, {1}, {1}},    {6, 0, 4, {0}, {0}},       {5, 7, 0, {3}, {0}},
                          {100, 50, 80, {0}, {4}}, {100, 50, 80, {3}, {0}}, {0, 0, 0, {0}, {0}},
                          {300, 200, 100, {0, 0, 0, 2}, {0, 0, 5}}};
  for (const Shape& s : shapes) {
    const CsrMatrix<double> a = random_rows(s.m, s.k, s.la, seed), b = random_rows(s.k, s.n, s.lb, seed + 1);
    const Result<double> run = multiply<double>(a, b, context());
    EXPECT_TRUE(matches_reference(run.c, a, b)) << s.m << "x" << s.k << "x" << s.n;
  }
}

TEST_F(BinnedSpgemm, BitwiseIdenticalAcrossRepeatsPanelsGrowthAndNumericReuse) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const Operands o = mixed(seed);
  const Result<double> first = multiply<double>(o.a, o.b, context());
  EXPECT_EQ(first.stats.panels, 1);
  EXPECT_TRUE(bitwise_equal(multiply<double>(o.a, o.b, context()).c, first.c)) << "repeat, seed " << seed;

  sd::BinnedSpgemmOptions small_budget;
  small_budget.memory_budget = 400 * 1024;  // C~ of this product is several MB: many panels
  const Result<double> panels = multiply<double>(o.a, o.b, context(), small_budget);
  EXPECT_GT(panels.stats.panels, 3);
  EXPECT_TRUE(bitwise_equal(panels.c, first.c)) << "panels, seed " << seed;

  // One plan multiplied twice: the constructor's bins kept (one panel), or each panel binned again
  // (the constructor's bins dropped); the same bits every time.
  for (const size_t budget : {size_t(0), size_t(400 * 1024)}) {
    sd::BinnedSpgemmOptions options;
    options.memory_budget = budget;
    const sd::GpuContext plan_ctx = context();
    const sd::DeviceCsr<double> pa = sd::csr_to_device(o.a, plan_ctx), pb = sd::csr_to_device(o.b, plan_ctx);
    sd::BinnedSpgemm<double> plan(pa.view(), pb.view(), options, plan_ctx);
    for (int round = 0; round < 2; ++round) {
      const sd::DeviceCsr<double> c = plan.multiply();
      EXPECT_TRUE(bitwise_equal(sd::csr_to_host(c.view(), plan_ctx.stream), first.c))
          << "plan reused, budget " << budget << ", round " << round << ", seed " << seed;
    }
    EXPECT_EQ(plan.stats().panels > 1, budget > 0);
  }

  sd::BinnedSpgemmOptions tight;
  tight.merge_initial_capacity = 16;  // every merge row checkpoints and grows several times
  tight.block_dense = false;          // (the merge path; the block dense accumulator grows once)
  const Result<double> grown = multiply<double>(o.a, o.b, context(), tight);
  EXPECT_GE(grown.stats.grow_rounds, 3);
  EXPECT_GE(grown.stats.grown_rows, grown.stats.bin_rows[sd::binned::kMergeBin]);
  EXPECT_TRUE(bitwise_equal(grown.c, first.c)) << "grown, seed " << seed;
  tight.block_dense = true;
  const Result<double> counted = multiply<double>(o.a, o.b, context(), tight);
  EXPECT_EQ(counted.stats.grow_rounds, 1);
  EXPECT_TRUE(bitwise_equal(counted.c, first.c)) << "counted and grown once, seed " << seed;
  // The merge rows on their side stream beside the other bins (the default, with its growth rounds
  // above) or in turn on the caller's stream: the same bits.
  for (const bool block_dense : {false, true}) {
    tight.block_dense = block_dense;
    tight.overlap_merge_rows = false;
    EXPECT_TRUE(bitwise_equal(multiply<double>(o.a, o.b, context(), tight).c, first.c))
        << "merge rows in turn, block dense " << block_dense << ", seed " << seed;
  }

  // Numeric-only on the kept pattern: same bits; and for new values, the same bits as a full product.
  const sd::GpuContext ctx = context();
  const sd::DeviceCsr<double> da = sd::csr_to_device(o.a, ctx), db = sd::csr_to_device(o.b, ctx);
  sd::BinnedSpgemm<double> spgemm(da.view(), db.view(), {}, ctx);
  const sd::DeviceCsr<double> c = spgemm.multiply();
  sd::DeviceBuffer values(size_t(c.nnz) * sizeof(double), ctx);
  sd::binned_numeric(da.view(), db.view(), c.view(), values.as<double>(), ctx);
  CsrMatrix<double> reused = first.c;
  sd::copy_device_to_host(reused.values.data(), values.data(), values.size(), stream_);
  EXPECT_TRUE(bitwise_equal(reused, first.c)) << "numeric-only, seed " << seed;

  CsrMatrix<double> a2 = o.a;
  std::mt19937_64 rng(seed + 7);
  std::uniform_real_distribution<double> u(-2, 2);
  for (double& x : a2.values) x = u(rng);
  const sd::DeviceCsr<double> da2 = sd::csr_to_device(a2, ctx);
  sd::binned_numeric(da2.view(), db.view(), c.view(), values.as<double>(), ctx);
  sd::copy_device_to_host(reused.values.data(), values.data(), values.size(), stream_);
  const Result<double> full2 = multiply<double>(a2, o.b, context());
  EXPECT_TRUE(bitwise_equal(reused, full2.c)) << "numeric-only with new values, seed " << seed;
  EXPECT_TRUE(matches_reference(reused, a2, o.b)) << "seed " << seed;
}

// Band rows of 201 entries: u = 201^2 > 8192 with a 401-column window, the merge kernel's dense
// mode (the block dense accumulator off); against the reference, and bit for bit against
// numeric-only (a different kernel) and the block dense accumulator.
TEST_F(BinnedSpgemm, DenseWindowRowsMatchReferenceAndNumericReuse) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  CsrMatrix<double> a = sd::generate_band(3001, 100, seed), b = sd::generate_band(3001, 100, seed + 1);
  for (size_t p = 0; p < a.values.size(); p += 7) a.values[p] = 0;  // explicit zeros stay in the pattern
  sd::BinnedSpgemmOptions paper;
  paper.block_dense = false;
  const Result<double> run = multiply<double>(a, b, context(), paper);
  EXPECT_TRUE(bitwise_equal(multiply<double>(a, b, context()).c, run.c)) << "block dense, seed " << seed;
  EXPECT_GT(run.stats.bin_rows[sd::binned::kMergeBin], 2000);
  EXPECT_TRUE(matches_reference(run.c, a, b)) << "seed " << seed;
  const sd::GpuContext ctx = context();
  EXPECT_TRUE(bitwise_equal(numeric_reuse(a, b, run.c, ctx), run.c)) << "seed " << seed;
  const Result<float> single = multiply<float>(rounded<float>(a), rounded<float>(b), context(), paper);
  EXPECT_TRUE(matches_reference(single.c, rounded<float>(a), rounded<float>(b))) << "seed " << seed;

  // Wide windows (results spread over 9000 columns, rows of B of 300): the global dense windows,
  // some results longer than the initial 4096-entry region (waiting, grown, redone); against the
  // reference, numeric-only and the merge path (windows off), bit for bit.
  const CsrMatrix<double> wa = random_rows(400, 3000, {40, 60}, seed + 2), wb = random_rows(3000, 9001, {300}, seed + 3);
  const Result<double> wide = multiply<double>(wa, wb, context(), paper);
  EXPECT_TRUE(matches_reference(wide.c, wa, wb)) << "seed " << seed;
  EXPECT_GT(wide.stats.grow_rounds, 0);
  sd::BinnedSpgemmOptions no_windows = paper;
  no_windows.global_windows = false;
  EXPECT_TRUE(bitwise_equal(multiply<double>(wa, wb, context(), no_windows).c, wide.c)) << "seed " << seed;
  EXPECT_TRUE(bitwise_equal(numeric_reuse(wa, wb, wide.c, ctx), wide.c)) << "seed " << seed;
}

// The block dense accumulator (block_dense.cu): ESC rows of bins 35/36 whose columns span too
// wide for a warp's window and that are too long to hash (u ~ 600-2400 over 20011 columns), and
// merge rows (u ~ 12000-18000 over 9001 columns, results longer than their first region: counted,
// grown, redone; and over 30015 columns, results that fit it). Against the reference and, bit for
// bit, against the paper's kernels (ESC sort, merge path), in many passes over B's columns (a small
// shared-memory budget), with every chunk of short rows of B streamed by one warp, after the growth
// of every merge row, and numeric-only reuse.
template <typename V>
void check_block_dense(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::GpuContext ctx = t.context();
  const CsrMatrix<double> ea = rounded<V>(random_rows(501, 3000, {0, 20, 33, 41}, seed)),
                          eb = rounded<V>(random_rows(3000, 20011, {0, 30, 59}, seed + 1));
  const CsrMatrix<double> ma = rounded<V>(random_rows(203, 3000, {40, 60}, seed + 2)),
                          mb = rounded<V>(random_rows(3000, 9001, {300}, seed + 3));
  // Long rows of A (1100-3000 entries) over short rows of B (1-9): chunks streamed by one warp;
  // rows of 400 entries (bin 35) stream only when the rule is lowered.
  const CsrMatrix<double> sa = rounded<V>(random_rows(61, 20000, {0, 400, 1100, 3000}, seed + 4)),
                          sb = rounded<V>(random_rows(20000, 5003, {0, 1, 3, 5, 9}, seed + 5));
  // Merge rows (u ~ 9000-18000) over short rows of B (30-60) on every 15th of 30015 columns: rows
  // of C of at most 2001 entries, which fit their first region (their bits are set by the symbolic
  // pass, not while adding), spanning more columns than a pass holds (fp32 two passes in the
  // default 100 KB, fp64 three).
  const CsrMatrix<double> ra = rounded<V>(random_rows(97, 3000, {200, 300}, seed + 6));
  CsrMatrix<double> rb = rounded<V>(random_rows(3000, 2001, {30, 60}, seed + 7));
  rb.cols *= 15;
  for (int64_t& c : rb.col_idx) c *= 15;
  struct Case {
    Operands o;
    int64_t rows;  // rows of bins 35..37 (u > 512) at least (in expectation several times more)
  };
  for (const Case& k :
       {Case{{ea, eb}, 150}, Case{{ma, mb}, 150}, Case{{sa, sb}, 15}, Case{{ra, rb}, 90}}) {
    const Operands& o = k.o;
    const Result<V> run = multiply<V>(o.a, o.b, ctx);
    EXPECT_GE(run.stats.block_dense_passes, 1);  // fp64 on 20011 columns: 2 passes in the default 100 KB
    EXPECT_TRUE(matches_reference(run.c, o.a, o.b)) << "seed " << seed;
    const std::vector<int64_t> u = row_bounds(o.a, o.b);
    const int64_t long_rows = std::count_if(u.begin(), u.end(), [](int64_t x) { return x > 512; });
    EXPECT_EQ(run.stats.bin_rows[35] + run.stats.bin_rows[36] + run.stats.bin_rows[37], long_rows) << "seed " << seed;
    EXPECT_GT(long_rows, k.rows) << "seed " << seed;
    EXPECT_TRUE(bitwise_equal(multiply<V>(o.a, o.b, ctx).c, run.c)) << "repeat, seed " << seed;

    sd::BinnedSpgemmOptions paper;
    paper.block_dense = false;
    const Result<V> sorted = multiply<V>(o.a, o.b, ctx, paper);
    EXPECT_EQ(sorted.stats.block_dense_passes, 0);
    EXPECT_TRUE(bitwise_equal(sorted.c, run.c)) << "against the ESC sort / merge path, seed " << seed;

    sd::BinnedSpgemmOptions passes;
    passes.block_dense_bytes = 16 << 10;
    passes.block_dense_passes = 64;
    const Result<V> many = multiply<V>(o.a, o.b, ctx, passes);
    EXPECT_GT(many.stats.block_dense_passes, 1);  // 2 on 5003 columns in fp32, up to 16 on 20011 in fp64
    EXPECT_TRUE(bitwise_equal(many.c, run.c)) << many.stats.block_dense_passes << " passes, seed " << seed;

    // Every chunk of short rows of B to one warp, whatever the length of the row of A, and with
    // rows of B of up to 255 entries among them: the same bits.
    sd::BinnedSpgemmOptions streamed;
    streamed.block_dense_stream_min_entries = 1;
    streamed.block_dense_stream_long_row_of_b = 256;
    EXPECT_TRUE(bitwise_equal(multiply<V>(o.a, o.b, ctx, streamed).c, run.c)) << "streamed chunks, seed " << seed;

    sd::BinnedSpgemmOptions tight;
    tight.merge_initial_capacity = 16;
    tight.block_dense_first_bin = sd::binned::kFirstAccumulatorBin;
    const Result<V> grown = multiply<V>(o.a, o.b, ctx, tight);
    EXPECT_EQ(grown.stats.grown_rows, grown.stats.bin_rows[sd::binned::kMergeBin]) << "one growth per merge row";
    EXPECT_TRUE(bitwise_equal(grown.c, run.c)) << "grown, seed " << seed;

    EXPECT_TRUE(bitwise_equal(numeric_reuse(o.a, o.b, run.c, ctx), run.c)) << "numeric-only, seed " << seed;

    // Numeric-only on a pattern with every third entry dropped: the kept entries keep their bits
    // (the dropped columns' products leave nothing behind in the accumulator).
    const CsrMatrix<V> thinned = every_third_dropped(run.c);
    EXPECT_TRUE(bitwise_equal(numeric_reuse(o.a, o.b, thinned, ctx), thinned))
        << "numeric-only on a thinned pattern, seed " << seed;
  }
}
// Numeric-only on crowded rows, as in AP of an AMG Galerkin product: rows of B of at most one
// entry (an aggregation prolongator) or two, over 23 columns, so up to 31 products land on a few
// entries of C (numeric.cu's broadcast rows, both the one-product-a-lane and the general way):
// the same bits as the full product, also on a thinned pattern, and the reference's values.
template <typename V>
void check_crowded_numeric(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::GpuContext ctx = t.context();
  // B of 8 columns: rows of C of at most 8 entries (numeric_values gives such patterns to a thread
  // per row), some of them over more than 64 products (the threads leave those to the warps); B of
  // 6 columns and rows of at most one entry: every row to a thread (AP of a Galerkin product).
  const std::pair<int64_t, std::vector<int64_t>> b_shapes[] = {
      {23, {0, 1, 1, 1}}, {23, {0, 1, 2}}, {8, {0, 3, 5, 8}}, {6, {0, 1, 1, 1}}};
  for (const auto& [b_cols, b_lengths] : b_shapes) {
    const CsrMatrix<double> a = rounded<V>(random_rows(2500, 1500, {0, 3, 9, 27, 31}, seed)),
                            b = rounded<V>(random_rows(1500, b_cols, b_lengths, seed + 1));
    const Result<V> run = multiply<V>(a, b, ctx);
    EXPECT_TRUE(matches_reference(run.c, a, b)) << "seed " << seed;
    const CsrMatrix<V> reused = numeric_reuse(a, b, run.c, ctx);
    EXPECT_TRUE(bitwise_equal(reused, run.c)) << "numeric-only, seed " << seed;
    EXPECT_TRUE(matches_reference(reused, a, b)) << "numeric-only, seed " << seed;
    const CsrMatrix<V> thinned = every_third_dropped(run.c);
    EXPECT_TRUE(bitwise_equal(numeric_reuse(a, b, thinned, ctx), thinned)) << "thinned pattern, seed " << seed;
  }
}
TEST_F(BinnedSpgemm, NumericReuseOfCrowdedRowsFloat) { check_crowded_numeric<float>(*this); }
TEST_F(BinnedSpgemm, NumericReuseOfCrowdedRowsDouble) { check_crowded_numeric<double>(*this); }

TEST_F(BinnedSpgemm, BlockDenseAccumulatorMatchesPaperKernelsFloat) { check_block_dense<float>(*this); }
TEST_F(BinnedSpgemm, BlockDenseAccumulatorMatchesPaperKernelsDouble) { check_block_dense<double>(*this); }

// Rows sorted in registers, a thread per row (register_sort.cu): the heap's rows (8, 16 and 32 keys)
// and bin 33's of u <= 64 (64 keys; the warps take the rest of the bin), however few, against the
// reference, the heap (its queue in registers and in shared memory), the warps and the groups of
// lanes (short_rows.cu, 8, 16, 32 lanes), bit for bit, and run to run. Narrow B (311 columns): runs of equal columns to fold; rows of A of 40 entries
// meeting mostly empty rows of B. Then B's columns moved to the top of the widest B the 32-bit keys
// hold (the largest keys one below the empty key) and of one column more (the heap and the warps
// take the rows): the same entries, moved, the same bits.
template <typename V>
void check_register_sort(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> a = rounded<V>(random_rows(4001, 1203, {0, 1, 2, 3, 4, 5, 7, 9, 40}, seed)),
                          b = rounded<V>(random_rows(1203, 311, {0, 0, 0, 1, 2, 3, 5, 8}, seed + 1));
  sd::BinnedSpgemmOptions sorted;
  sorted.short_group_warps = sorted.middle_rows_sorted_from = 0;
  const Result<V> sort = multiply<V>(a, b, t.context(), sorted);
  EXPECT_TRUE(matches_reference(sort.c, a, b)) << "seed " << seed;
  for (const int keys : {8, 16, 32}) {  // rows in every u range (and group size): 2..8, 9..16, 17..32
    int64_t rows = 0;
    for (int u = keys == 8 ? 2 : keys / 2 + 1; u <= keys; ++u) rows += sort.stats.bin_rows[size_t(u)];
    EXPECT_GT(rows, 50) << keys << " keys, seed " << seed;
  }
  EXPECT_GT(sort.stats.bin_rows[size_t(sd::binned::kFirstEscBin)], 100) << "seed " << seed;
  sd::BinnedSpgemmOptions heap = sorted;
  heap.heap_rows_sorted = heap.middle_rows_sorted = false;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context(), heap).c, sort.c)) << "against the heap, seed " << seed;
  heap.heap_queue_in_registers = false;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context(), heap).c, sort.c))
      << "against the shared-memory heap, seed " << seed;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context(), sorted).c, sort.c)) << "repeat, seed " << seed;
  sd::BinnedSpgemmOptions groups;
  groups.short_rows_in_registers = true;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context(), groups).c, sort.c)) << "against the groups, seed " << seed;

  for (const int64_t cols : {sd::binned::kRegisterSortMaxColumns, sd::binned::kRegisterSortMaxColumns + 1}) {
    const int64_t shift = cols - b.cols;
    CsrMatrix<double> wide = b;
    wide.cols = cols;
    for (int64_t& c : wide.col_idx) c += shift;
    Result<V> moved = multiply<V>(a, wide, t.context(), sorted);
    EXPECT_EQ(moved.c.cols, cols);
    moved.c.cols = b.cols;
    for (int64_t& c : moved.c.col_idx) c -= shift;
    EXPECT_TRUE(bitwise_equal(moved.c, sort.c)) << "B of " << cols << " columns, seed " << seed;
  }
}
TEST_F(BinnedSpgemm, RegisterSortMatchesHeapFloat) { check_register_sort<float>(*this); }
TEST_F(BinnedSpgemm, RegisterSortMatchesHeapDouble) { check_register_sort<double>(*this); }

// Rows of u <= 128 by one warp per row (middle_rows.cu): bin 33 (the default) and the heap bins
// (short_rows_in_warps; by default the small u ranges go to groups) against the reference, the
// block-per-row ESC sort (esc.cu) and the heap, bit for bit, and run to run. Narrow B (97 or 151 columns): long runs of equal columns to fold;
// rows of B of length 0 met (tails of every chunk), rows of A of 40-70 entries meeting mostly empty
// rows of B (two or three 32-entry chunks per row), explicit zeros in both operands.
template <typename V>
void check_middle_rows(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const struct {
    CsrMatrix<double> a, b;
  } cases[] = {
      {rounded<V>(random_rows(3001, 1501, {0, 2, 5, 7, 9, 12, 15, 21}, seed)),
       rounded<V>(random_rows(1501, 151, {0, 1, 3, 5, 7, 9, 11}, seed + 1))},
      {rounded<V>(random_rows(1999, 1203, {3, 40, 50, 70}, seed + 2)),
       rounded<V>(random_rows(1203, 97, {0, 0, 0, 0, 0, 1, 2, 5}, seed + 3))},
  };
  for (const auto& c : cases) {
    const Result<V> warps = multiply<V>(c.a, c.b, t.context());
    EXPECT_TRUE(matches_reference(warps.c, c.a, c.b)) << "seed " << seed;
    EXPECT_GT(warps.stats.bin_rows[size_t(sd::binned::kFirstEscBin)], 300) << "seed " << seed;
    sd::BinnedSpgemmOptions blocks;
    blocks.middle_rows_in_warps = false;
    EXPECT_TRUE(bitwise_equal(multiply<V>(c.a, c.b, t.context(), blocks).c, warps.c)) << "against esc.cu, seed " << seed;
    EXPECT_TRUE(bitwise_equal(multiply<V>(c.a, c.b, t.context()).c, warps.c)) << "repeat, seed " << seed;
    sd::BinnedSpgemmOptions all_warps;
    all_warps.short_rows_in_warps = true;
    const Result<V> short_warps = multiply<V>(c.a, c.b, t.context(), all_warps);
    int64_t short_rows = 0;
    for (int k = 2; k <= sd::binned::kHeapMaxBound; ++k) short_rows += short_warps.stats.bin_rows[size_t(k)];
    EXPECT_GT(short_rows, 100) << "seed " << seed;
    EXPECT_TRUE(bitwise_equal(short_warps.c, warps.c)) << "short rows by warps against the default, seed " << seed;
    sd::BinnedSpgemmOptions sorted;
    sorted.short_group_warps = sorted.middle_rows_sorted_from = 0;
    EXPECT_TRUE(bitwise_equal(multiply<V>(c.a, c.b, t.context(), sorted).c, warps.c))
        << "against the register sort, seed " << seed;
    sd::BinnedSpgemmOptions heap = sorted;
    heap.heap_rows_sorted = heap.middle_rows_sorted = false;
    EXPECT_TRUE(bitwise_equal(multiply<V>(c.a, c.b, t.context(), heap).c, warps.c)) << "against the heap, seed " << seed;
  }
}
TEST_F(BinnedSpgemm, MiddleRowsInWarpsMatchEscFloat) { check_middle_rows<float>(*this); }
TEST_F(BinnedSpgemm, MiddleRowsInWarpsMatchEscDouble) { check_middle_rows<double>(*this); }

// Rows of bin 34 over short rows of B (u = 129..512, ~8 products per row of B met: the accumulators
// leave them all): those of u <= 256 by one warp (wide_rows_in_warps), the others by a block, from
// the accumulators' list and (accumulators off) from the bin itself, against the reference and
// the block-per-row ESC sort, bit for bit. Narrow B (151 columns): long runs to fold.
template <typename V>
void check_wide_rows(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> a = rounded<V>(random_rows(2003, 1501, {17, 20, 25, 31, 38, 45}, seed)),
                          b = rounded<V>(random_rows(1501, 151, {5, 7, 9, 11, 12}, seed + 1));
  sd::BinnedSpgemmOptions counted;
  counted.time_stages = true;
  const Result<V> warps = multiply<V>(a, b, t.context(), counted);
  EXPECT_TRUE(matches_reference(warps.c, a, b)) << "seed " << seed;
  EXPECT_GT(warps.stats.bin_rows[size_t(sd::binned::kFirstAccumulatorBin)], 1000) << "seed " << seed;
  EXPECT_GT(warps.stats.esc_paths[2], 1000) << "the accumulators leave them, seed " << seed;
  sd::BinnedSpgemmOptions blocks;
  blocks.wide_rows_in_warps = false;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context(), blocks).c, warps.c)) << "against esc.cu, seed " << seed;
  sd::BinnedSpgemmOptions unlisted;
  unlisted.esc_dense_windows = unlisted.esc_hash_tables = false;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context(), unlisted).c, warps.c))
      << "without the accumulators' list, seed " << seed;
  EXPECT_TRUE(bitwise_equal(multiply<V>(a, b, t.context()).c, warps.c)) << "repeat, seed " << seed;
}
TEST_F(BinnedSpgemm, WideRowsInWarpsMatchEscFloat) { check_wide_rows<float>(*this); }
TEST_F(BinnedSpgemm, WideRowsInWarpsMatchEscDouble) { check_wide_rows<double>(*this); }

// ---- the shared-memory accumulators of the ESC bins (accumulators.cu)

// Rows whose columns stay within half_width of the diagonal (scaled to cols): FEM-like operands
// whose products span a narrow window. Lengths from `lengths` (clipped to the band), distinct
// columns, values +-[0.5, 1.5] with explicit zeros.
CsrMatrix<double> banded_rows(int64_t rows, int64_t cols, int64_t half_width, const std::vector<int64_t>& lengths,
                              uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5), unit(0, 1);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(size_t(rows + 1), 0);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t centre = i * cols / rows, lo = std::max<int64_t>(0, centre - half_width),
                  hi = std::min<int64_t>(cols, centre + half_width + 1);
    std::vector<int64_t> pool(static_cast<size_t>(hi - lo));
    std::iota(pool.begin(), pool.end(), lo);
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(size_t(std::min<int64_t>(lengths[size_t(rng() % lengths.size())], hi - lo)));
    std::sort(pool.begin(), pool.end());
    for (int64_t c : pool) {
      m.col_idx.push_back(c);
      m.values.push_back(unit(rng) < 0.05 ? 0.0 : (rng() & 1 ? 1 : -1) * u(rng));
    }
    m.row_ptr[size_t(i + 1)] = m.nnz();
  }
  return m;
}

// Columns c -> c * stride + c % 3: the same number of distinct columns spread over a wide span.
CsrMatrix<double> spread_columns(CsrMatrix<double> m, int64_t stride) {
  for (int64_t& c : m.col_idx) c = c * stride + c % 3;
  m.cols = m.cols * stride;
  return m;
}

// path: 0 dense window, 1 hash table, 2 ESC sort (bins.hpp). Against the reference, run to run, the
// ESC sort (accumulators off) and numeric-only reuse, bit for bit.
template <typename V>
void check_accumulators(BinnedSpgemm& t, const CsrMatrix<double>& a0, const CsrMatrix<double>& b0, int path,
                        uint64_t seed, const sd::BinnedSpgemmOptions& options = {}) {
  const CsrMatrix<double> a = rounded<V>(a0), b = rounded<V>(b0);
  const sd::GpuContext ctx = t.context();
  sd::BinnedSpgemmOptions counted = options;
  counted.time_stages = true;      // also counts the rows of each path
  const Result<V> run = multiply<V>(a, b, ctx, counted);
  EXPECT_TRUE(matches_reference(run.c, a, b)) << "seed " << seed;
  EXPECT_GT(run.stats.esc_paths[size_t(path)], 0) << "path " << path << ", seed " << seed;
  const Result<V> again = multiply<V>(a, b, ctx, counted);
  EXPECT_TRUE(bitwise_equal(again.c, run.c)) << "repeat, seed " << seed;  // (the paths taken may differ)

  sd::BinnedSpgemmOptions sort_only = counted;
  sort_only.esc_dense_windows = false;
  sort_only.esc_hash_tables = false;
  const Result<V> sorted = multiply<V>(a, b, ctx, sort_only);
  EXPECT_EQ(sorted.stats.esc_paths[0] + sorted.stats.esc_paths[1], 0);
  EXPECT_TRUE(bitwise_equal(sorted.c, run.c)) << "accumulators against the ESC sort, seed " << seed;

  EXPECT_TRUE(bitwise_equal(numeric_reuse(a, b, run.c, ctx), run.c)) << "numeric-only, seed " << seed;
}

// Narrow spans (at most 2 * (30 + 40) + 1 columns) with u from 0 to 61 * 81: the dense window.
// Odd lengths leave tails in every 32-product step; rows of B of length 0 are met.
template <typename V>
void check_dense_accumulator(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> a = banded_rows(1001, 1001, 30, {0, 3, 20, 33, 45, 61}, seed),
                          b = banded_rows(1001, 1201, 40, {0, 1, 17, 40, 63, 81}, seed + 1);
  check_accumulators<V>(t, a, b, 0, seed);
}
TEST_F(BinnedSpgemm, AccumulatorDenseWindowFloat) { check_dense_accumulator<float>(*this); }
TEST_F(BinnedSpgemm, AccumulatorDenseWindowDouble) { check_dense_accumulator<double>(*this); }

// Wide spans (60 columns spread x389 over ~23000) with u up to 21 * 47 <= kHashSlots: the hash
// table (compression 3:1 to 8:1, above the probe's 4:1 over the bin). Rows of 60-70 entries (u ~ 1400 > kHashSlots) stay with the ESC sort,
// and so do hash-sized rows that do not compress (16 x 16 products on 200000 columns) once the
// bin's probe has shown it.
template <typename V>
void check_hash_accumulator(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> b = spread_columns(random_rows(907, 60, {0, 13, 31, 47}, seed + 1), 389);
  const CsrMatrix<double> a = random_rows(1203, 907, {0, 9, 14, 21}, seed);
  static_assert(21 * 47 <= sd::binned::kHashSlots, "rows of u up to 987 hash");
  check_accumulators<V>(t, a, b, 1, seed);
  const CsrMatrix<double> long_rows = random_rows(301, 907, {60, 70}, seed + 2);
  check_accumulators<V>(t, long_rows, b, 2, seed);
  const CsrMatrix<double> ua = random_rows(3001, 3001, {16}, seed + 3), ub = random_rows(3001, 200000, {16}, seed + 4);
  check_accumulators<V>(t, ua, ub, 2, seed);
}
TEST_F(BinnedSpgemm, AccumulatorHashTableFloat) { check_hash_accumulator<float>(*this); }
TEST_F(BinnedSpgemm, AccumulatorHashTableDouble) { check_hash_accumulator<double>(*this); }

// Every row of bins 33..36 to the accumulators, also those over short rows of B (3-9 entries, as in
// graphs and meshes) and whatever their compression: a round of 32 products spans several rows of
// B, so lanes of one round meet on one column (folded in lane order by the lowest), and the
// accumulated rows must still carry the ESC sort's bits. Hash: 100 columns spread over ~39000;
// dense window: a band.
template <typename V>
void check_accumulators_on_short_rows_of_b(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  sd::BinnedSpgemmOptions every_row;
  every_row.accumulator_min_row_of_b = 0;
  every_row.accumulator_min_compression = 1;
  every_row.accumulator_first_bin = sd::binned::kFirstEscBin;
  const CsrMatrix<double> b = spread_columns(random_rows(907, 100, {0, 3, 5, 9}, seed + 1), 389);
  const CsrMatrix<double> a = random_rows(1203, 907, {0, 7, 12, 30, 60, 100}, seed);
  check_accumulators<V>(t, a, b, 1, seed, every_row);
  const CsrMatrix<double> band_a = banded_rows(1001, 1001, 30, {0, 7, 20, 33, 61}, seed + 2),
                          band_b = banded_rows(1001, 1201, 40, {0, 3, 6, 9}, seed + 3);
  check_accumulators<V>(t, band_a, band_b, 0, seed, every_row);
}
TEST_F(BinnedSpgemm, AccumulatorsOnShortRowsOfBFloat) { check_accumulators_on_short_rows_of_b<float>(*this); }
TEST_F(BinnedSpgemm, AccumulatorsOnShortRowsOfBDouble) { check_accumulators_on_short_rows_of_b<double>(*this); }

// ---- stage 2's sort keys (bins.hpp; host only, no device needed)

// Bins 0, 1 and 34..37 are their own keys; bin 33 takes two adjacent keys, kShortEscKey up to
// kShortEscBound and 33 above, so its rows stay one range, [begin(32), end(33)); the heap's keys
// start above every bin's and stay below kSortKeys.
TEST(BinnedSpgemmKeys, EachBinIsOneRangeOfKeys) {
  namespace bn = sd::binned;
  static_assert(bn::kShortEscKey + 1 == bn::kFirstEscBin, "bin 33's two keys are adjacent");
  for (const int64_t u : {0, 1, 2, 5, 8, 9, 16, 17, 32, 33, 64, 65, 128, 129, 512, 513, 2048, 2049, 8192, 8193,
                          1 << 20})
    for (const int64_t length : {1, 3, 8, 17, 40}) {
      const int bin = bn::bin_of(u, length), key = bn::sort_key(bin, u, length);
      EXPECT_LT(key, bn::kSortKeys) << "u " << u;
      const int want = bin >= 2 && bin <= bn::kHeapMaxBound ? -1
                       : bin == bn::kFirstEscBin && u <= bn::kShortEscBound ? bn::kShortEscKey
                                                                           : bin;
      if (want < 0) {
        EXPECT_GE(key, bn::kHeapKeyBase) << "u " << u;
      } else {
        EXPECT_EQ(key, want) << "u " << u;
      }
    }
  EXPECT_LT(bn::kMergeBin, bn::kHeapKeyBase);
}

// ---- the room of a row in C~ (bins.hpp, row_capacity)

// Computed here from the definitions: none for u <= 1, u up to 128, for u up to 8192 the lesser of
// u and the width of the row's column span (first to last column of the rows of B met), for merge
// rows min(u, 4096).
int64_t expected_room(const CsrMatrix<double>& a, const CsrMatrix<double>& b) {
  int64_t room = 0;
  for (int64_t i = 0; i < a.rows; ++i) {
    int64_t u = 0, first = std::numeric_limits<int64_t>::max(), last = -1;
    for (int64_t p = a.row_ptr[size_t(i)]; p < a.row_ptr[size_t(i + 1)]; ++p) {
      const int64_t k = a.col_idx[size_t(p)], bs = b.row_ptr[size_t(k)], be = b.row_ptr[size_t(k + 1)];
      u += be - bs;
      if (be == bs) continue;
      first = std::min(first, b.col_idx[size_t(bs)]);
      last = std::max(last, b.col_idx[size_t(be - 1)]);
    }
    room += u <= 1 ? 0 : u <= 128 ? u : u <= 8192 ? std::min(u, last - first + 1) : std::min<int64_t>(u, 4096);
  }
  return room;
}

// FEM-like operands (bands) whose rows of bins 34..36 span far fewer columns than their products:
// the room shrinks to the span, and every kernel that writes those rows (accumulators, ESC sort in
// warps and in blocks, block dense, panels, merge growth) stays within it, with the same bits.
template <typename V>
void check_narrow_spans(BinnedSpgemm& t) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> a = rounded<V>(banded_rows(1501, 1501, 100, {0, 2, 5, 12, 30, 61, 120, 201}, seed)),
                          b = rounded<V>(banded_rows(1501, 1701, 60, {0, 1, 4, 17, 40, 81, 121, 121}, seed + 1));
  const sd::GpuContext ctx = t.context();
  const Result<V> run = multiply<V>(a, b, ctx);
  EXPECT_TRUE(matches_reference(run.c, a, b)) << "seed " << seed;
  EXPECT_EQ(run.stats.temporary_entries, expected_room(a, b)) << "seed " << seed;
  EXPECT_LT(run.stats.temporary_entries * 3, run.stats.products) << "the spans should save most of the room";
  for (int k = sd::binned::kFirstAccumulatorBin; k <= sd::binned::kMergeBin; ++k)
    EXPECT_GT(run.stats.bin_rows[size_t(k)], 0) << "bin " << k << " got no row (seed " << seed << ")";

  std::vector<std::pair<const char*, sd::BinnedSpgemmOptions>> variants(6);
  variants[0].first = "ESC sort";
  variants[0].second.esc_dense_windows = variants[0].second.esc_hash_tables = false;
  variants[1].first = "ESC sort in blocks";
  variants[1].second = variants[0].second;
  variants[1].second.wide_rows_in_warps = variants[1].second.middle_rows_in_warps = false;
  variants[2].first = "no block dense";
  variants[2].second.block_dense = false;
  variants[3].first = "block dense from bin 34";
  variants[3].second = variants[0].second;
  variants[3].second.block_dense_first_bin = sd::binned::kFirstAccumulatorBin;
  variants[4].first = "panels";
  variants[4].second.memory_budget = 1;
  variants[5].first = "merge growth";
  variants[5].second.merge_initial_capacity = 64;
  variants[5].second.block_dense = false;
  for (const auto& [name, options] : variants) {
    const Result<V> other = multiply<V>(a, b, ctx, options);
    EXPECT_TRUE(bitwise_equal(other.c, run.c)) << name << ", seed " << seed;
  }
  EXPECT_TRUE(bitwise_equal(numeric_reuse(a, b, run.c, ctx), run.c)) << "numeric-only, seed " << seed;
}
TEST_F(BinnedSpgemm, NarrowColumnSpansShrinkTheRoomFloat) { check_narrow_spans<float>(*this); }
TEST_F(BinnedSpgemm, NarrowColumnSpansShrinkTheRoomDouble) { check_narrow_spans<double>(*this); }

TEST_F(BinnedSpgemm, UnsortedAndTransposedOperands) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const Operands o = mixed(seed);
  const sd::GpuContext ctx = context();
  // A with every row's columns shuffled, as device CSR arrays (int32 offsets, int64 indices, base 1).
  std::vector<int32_t> offsets(o.a.row_ptr.begin(), o.a.row_ptr.end());
  std::vector<int64_t> indices(o.a.col_idx.size());
  std::vector<double> values(o.a.values.size());
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < o.a.rows; ++i) {
    std::vector<int64_t> order(size_t(o.a.row_ptr[size_t(i + 1)] - o.a.row_ptr[size_t(i)]));
    std::iota(order.begin(), order.end(), o.a.row_ptr[size_t(i)]);
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t q = 0; q < order.size(); ++q) {
      indices[size_t(o.a.row_ptr[size_t(i)]) + q] = o.a.col_idx[size_t(order[q])] + 1;
      values[size_t(o.a.row_ptr[size_t(i)]) + q] = o.a.values[size_t(order[q])];
    }
  }
  for (int32_t& x : offsets) x += 1;
  sd::DeviceBuffer d_offsets(offsets.size() * 4, ctx), d_indices(indices.size() * 8, ctx),
      d_values(values.size() * 8, ctx);
  sd::copy_host_to_device(d_offsets.data(), offsets.data(), d_offsets.size(), stream_);
  sd::copy_host_to_device(d_indices.data(), indices.data(), d_indices.size(), stream_);
  sd::copy_host_to_device(d_values.data(), values.data(), d_values.size(), stream_);
  const sd::RawSparse raw{SPARSETC_FORMAT_CSR, o.a.rows,        o.a.cols,          o.a.nnz(),
                          d_offsets.data(),    d_indices.data(), d_values.data(),  SPARSETC_INDEX_32,
                          SPARSETC_INDEX_64,   SPARSETC_BASE_ONE, SPARSETC_VALUE_F64};
  const sd::DeviceCsr<double> sorted = sd::binned::prepare_operand<double>(raw, SPARSETC_DUPLICATES_ERROR, false, ctx);
  const sd::DeviceCsr<double> db = sd::csr_to_device(o.b, ctx);
  sd::BinnedSpgemm<double> from_unsorted(sorted.view(), db.view(), {}, ctx);
  const CsrMatrix<double> got = sd::csr_to_host(from_unsorted.multiply().view(), stream_);
  EXPECT_TRUE(bitwise_equal(got, multiply<double>(o.a, o.b, ctx).c)) << "seed " << seed;

  // op(B) = B^T with B stored as its transpose: the transpose made on the device.
  const CsrMatrix<double> bt = sd::transpose(o.b);
  const sd::DeviceCsr<double> dbt = sd::csr_to_device(bt, ctx);
  const sd::RawSparse raw_bt{SPARSETC_FORMAT_CSR, bt.rows,          bt.cols,          bt.nnz(),
                             dbt.row_ptr.data(),  dbt.col_idx.data(), dbt.values.data(), SPARSETC_INDEX_64,
                             SPARSETC_INDEX_32,   SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64};
  const sd::DeviceCsr<double> b_again = sd::binned::prepare_operand<double>(raw_bt, SPARSETC_DUPLICATES_ERROR, true, ctx);
  const sd::DeviceCsr<double> da = sd::csr_to_device(o.a, ctx);
  sd::BinnedSpgemm<double> transposed(da.view(), b_again.view(), {}, ctx);
  EXPECT_TRUE(bitwise_equal(sd::csr_to_host(transposed.multiply().view(), stream_), multiply<double>(o.a, o.b, ctx).c))
      << "seed " << seed;
}

// 2100 dense rows of 1024 entries times 1024 rows of 1024 columns spread over 100000: 2.25e9
// products (> 2^31), each row of C the same 1024 columns with exact integer sums.
TEST_F(BinnedSpgemm, ProductCountBeyondInt32) {
  const int64_t m = 2100, k = 1024, n = 100000, per_row = 1024;
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  CsrMatrix<float> a, b;
  a.rows = m;
  a.cols = k;
  a.row_ptr.resize(size_t(m + 1));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      a.col_idx.push_back(j);
      a.values.push_back(float(1 + rng() % 3));
    }
    a.row_ptr[size_t(i + 1)] = a.nnz();
  }
  b.rows = k;
  b.cols = n;
  b.row_ptr.resize(size_t(k + 1));
  std::vector<float> beta(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) {
    beta[size_t(r)] = float(1 + rng() % 2);
    for (int64_t j = 0; j < per_row; ++j) {
      b.col_idx.push_back(j * 97);
      b.values.push_back(beta[size_t(r)]);
    }
    b.row_ptr[size_t(r + 1)] = b.nnz();
  }
  const sd::GpuContext ctx = context();
  const sd::DeviceCsr<float> da = sd::csr_to_device(a, ctx), db = sd::csr_to_device(b, ctx);
  sd::BinnedSpgemm<float> spgemm(da.view(), db.view(), {}, ctx);
  ASSERT_EQ(spgemm.products(), m * k * per_row);
  ASSERT_GT(spgemm.products(), int64_t(INT32_MAX));
  const CsrMatrix<float> c = sd::csr_to_host(spgemm.multiply().view(), stream_);
  ASSERT_EQ(c.nnz(), m * per_row);
  for (int64_t i = 0; i < m; ++i) {
    double want = 0;
    for (int64_t j = 0; j < k; ++j) want += double(a.values[size_t(i * k + j)]) * double(beta[size_t(j)]);
    for (int64_t q = 0; q < per_row; ++q) {
      const size_t p = size_t(i * per_row + q);
      ASSERT_EQ(c.col_idx[p], q * 97) << "row " << i;
      ASSERT_EQ(double(c.values[p]), want) << "row " << i;
    }
  }
}

}  // namespace

// The tSparse tile SpGEMM (gpu/spgemm/tsparse/) against host references: the culled pair count
// against a host walk over the host tiles (and fewer than without culling); C's tiles and bitmaps
// - from the bitwise count and from the tensor-core ballot count - against the host tiling of the
// float64 Gustavson pattern; whole products in every arithmetic against the float64 reference
// (structure identical where nothing cancels, values within the arithmetic's bound: fp16 inputs
// rounded with u = 2^-11 each, so 2u + u^2 times sum |a||b|, plus the fp32 accumulation), engineered
// cancellation removing entries and tiles, empty tiles and products, odd and rectangular shapes, 0/1
// patterns exact, the fp16 range error, repeatable multiplications. Every device allocation is
// poisoned (0xFF: NaN values, -1 indices) so an unwritten output cannot pass. Skips without a device.
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
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "formats/tiled.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;
using sparsetc_test::absolute;
using sparsetc_test::values_as;
using sd::TileArithmetic;
using sd::TileCountMethod;

class TsparseSpgemm : public sparsetc_test::PoisonedGpuTest {};

// ---- inputs

// rows x cols; row lengths drawn from `lengths`, distinct random columns (clustered in windows of
// `window` columns around a random centre when window > 0, so tiles fill), values +-[0.5, 1.5]
// rounded to float, a fraction of explicit zeros.
CsrMatrix<double> random_rows(int64_t rows, int64_t cols, const std::vector<int64_t>& lengths, uint64_t seed,
                              int64_t window = 0, double zeros = 0.03) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5), unit(0, 1);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(size_t(rows + 1), 0);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t span = window > 0 ? std::min(window, cols) : cols;
    const int64_t lo = window > 0 ? std::clamp<int64_t>(i * cols / std::max<int64_t>(rows, 1) - span / 2, 0, cols - span) : 0;
    const int64_t length = std::min<int64_t>(lengths[size_t(rng() % lengths.size())], span);
    std::vector<int64_t> pool(static_cast<size_t>(span));
    std::iota(pool.begin(), pool.end(), lo);
    for (int64_t j = 0; j < length; ++j) std::swap(pool[size_t(j)], pool[size_t(j + int64_t(rng() % uint64_t(span - j)))]);
    std::vector<int64_t> picked(pool.begin(), pool.begin() + length);
    std::sort(picked.begin(), picked.end());
    for (int64_t c : picked) {
      m.col_idx.push_back(c);
      m.values.push_back(unit(rng) < zeros ? 0.0 : double(float((rng() & 1 ? 1 : -1) * u(rng))));
    }
    m.row_ptr[size_t(i + 1)] = m.nnz();
  }
  return m;
}

CsrMatrix<double> with_values(CsrMatrix<double> m, double value) {
  std::fill(m.values.begin(), m.values.end(), value);
  return m;
}

// ---- running and checking

template <typename V>
struct Product {
  CsrMatrix<V> c;
  sd::TsparseSpgemmStats stats;
};

template <typename V>
Product<V> multiply(const CsrMatrix<double>& a, const CsrMatrix<double>& b, TileArithmetic arithmetic,
                    const sd::GpuContext& ctx, TileCountMethod count = TileCountMethod::kBitwise) {
  const sd::DeviceCsr<V> da = sd::csr_to_device(values_as<V>(a), ctx), db = sd::csr_to_device(values_as<V>(b), ctx);
  const sd::TileOperand ta = sd::make_tile_operand(da.view(), arithmetic, "A", ctx);
  const sd::TileOperand tb = sd::make_tile_operand(db.view(), arithmetic, "B", ctx);
  sd::TsparseSpgemmOptions options;
  options.count = count;
  sd::TsparseSpgemm<V> spgemm(ta, tb, options, ctx);
  spgemm.symbolic();
  const sd::DeviceCsr<V> c = spgemm.multiply();
  Product<V> result{sd::csr_to_host(c.view(), ctx.stream), spgemm.stats()};
  EXPECT_EQ(cudaStreamSynchronize(ctx.stream), cudaSuccess);
  return result;
}

// The arithmetic's error bound for entry (i, j): (input + (n_i + 2) * acc) * (|A||B|)_ij, where input
// is the relative error of a product of rounded inputs and acc the accumulation's unit roundoff.
struct Bound {
  double input = 0, acc = 0;
};
Bound bound_of(TileArithmetic arithmetic) {
  const double u16 = std::ldexp(1.0, -11), ubf = std::ldexp(1.0, -8);
  switch (arithmetic) {
    case TileArithmetic::kF16: return {2 * u16 + u16 * u16, std::ldexp(1.0, -22)};
    case TileArithmetic::kBf16: return {2 * ubf + ubf * ubf, std::ldexp(1.0, -22)};
    // Split: each value within u^2 of hi + lo, and lo*lo (below u^2 |ab|) left out: 4u^2 per product;
    // three fp32 accumulations per task.
    case TileArithmetic::kF16Split: return {4 * u16 * u16, 3 * std::ldexp(1.0, -22)};
    case TileArithmetic::kBf16Split: return {4 * ubf * ubf, 3 * std::ldexp(1.0, -22)};
    case TileArithmetic::kF64: return {0, std::numeric_limits<double>::epsilon()};
    default: return {0, double(std::numeric_limits<float>::epsilon())};
  }
}

// C against the float64 product: every reference entry is there with a value within the bound, or
// absent when its bound reaches zero (it may cancel to exactly zero in the rounded arithmetic: with
// bf16 inputs two products of one entry coincide now and then); no entry the reference lacks.
template <typename V>
::testing::AssertionResult matches_reference(const CsrMatrix<V>& got, const CsrMatrix<double>& a,
                                             const CsrMatrix<double>& b, TileArithmetic arithmetic) {
  const CsrMatrix<double> full = sd::cpu_spgemm(a, b, 0);
  const CsrMatrix<double> magnitude = sd::cpu_spgemm(absolute(a), absolute(b), 0);
  const Bound bound = bound_of(arithmetic);
  if (got.rows != full.rows || got.cols != full.cols || got.row_ptr.size() != full.row_ptr.size())
    return ::testing::AssertionFailure() << "shape " << got.rows << "x" << got.cols;
  for (int64_t i = 0; i < full.rows; ++i) {
    const double n = double(a.row_ptr[size_t(i + 1)] - a.row_ptr[size_t(i)]);
    int64_t q = got.row_ptr[size_t(i)];
    const int64_t q_end = got.row_ptr[size_t(i + 1)];
    for (int64_t p = full.row_ptr[size_t(i)]; p < full.row_ptr[size_t(i + 1)]; ++p) {
      const double w = full.values[size_t(p)];
      const double tolerance = (bound.input + (n + 2) * bound.acc) * magnitude.values[size_t(p)] + 1e-30;
      if (q < q_end && got.col_idx[size_t(q)] == full.col_idx[size_t(p)]) {
        const double g = double(got.values[size_t(q)]);
        if (!(std::fabs(g - w) <= tolerance) || g == 0.0)
          return ::testing::AssertionFailure() << "C(" << i << ", " << full.col_idx[size_t(p)] << ") = " << g
                                               << ", want " << w << " (bound " << tolerance << ")";
        ++q;
      } else if (!(std::fabs(w) <= tolerance)) {
        return ::testing::AssertionFailure() << "C(" << i << ", " << full.col_idx[size_t(p)] << ") = " << w
                                             << " (bound " << tolerance << ") is missing";
      }
    }
    if (q != q_end)
      return ::testing::AssertionFailure() << "row " << i << ": entry at column " << got.col_idx[size_t(q)]
                                           << " that the reference does not have (or out of order)";
  }
  return ::testing::AssertionSuccess();
}

// Culled pairs on the host: for every A tile (I, K) the B tiles (K, J) whose rows meet its columns.
int64_t host_pairs(const sd::BitmapTiles<double>& a, const sd::BitmapTiles<double>& b, bool cull) {
  auto column_mask = [](uint64_t x) {
    uint32_t m = 0;
    for (int r = 0; r < 8; ++r) m |= uint32_t(x >> (8 * r)) & 0xFFu;
    return m;
  };
  auto row_mask = [](uint64_t x) {
    uint32_t m = 0;
    for (int r = 0; r < 8; ++r) m |= ((x >> (8 * r)) & 0xFFu) ? 1u << r : 0u;
    return m;
  };
  int64_t pairs = 0;
  for (int64_t t = 0; t < a.tiles(); ++t) {
    const int64_t k = a.tile_col[size_t(t)];
    for (int64_t s = b.tile_row_ptr[size_t(k)]; s < b.tile_row_ptr[size_t(k + 1)]; ++s)
      pairs += !cull || (column_mask(a.bitmap[size_t(t)]) & row_mask(b.bitmap[size_t(s)])) != 0;
  }
  return pairs;
}

template <typename T>
std::vector<T> download(const sd::DeviceBuffer& buffer, int64_t n, cudaStream_t stream) {
  std::vector<T> host(size_t(std::max<int64_t>(n, 0)));
  if (n > 0) sd::copy_device_to_host(host.data(), buffer.data(), size_t(n) * sizeof(T), stream);
  return host;
}

// Sparse tiles (3 entries per row in 40-column windows) meet only now and then: culling matters.
struct Operands {
  CsrMatrix<double> a, b;
};
Operands scattered(uint64_t seed) {
  return {random_rows(203, 157, {0, 1, 2, 3, 5}, seed, 40), random_rows(157, 181, {0, 1, 2, 4, 9}, seed + 1, 40)};
}
Operands dense_blocks(uint64_t seed) {
  return {random_rows(333, 517, {0, 10, 20, 30, 40}, seed, 48), random_rows(517, 259, {0, 12, 24, 32}, seed + 1, 40)};
}

TEST_F(TsparseSpgemm, CulledPairCountMatchesTheHostAndCullingRemovesPairs) {
  const sd::GpuContext ctx = context();
  const Operands m = scattered(sparsetc_test::fresh_seed());
  const sd::DeviceCsr<float> da = sd::csr_to_device(values_as<float>(m.a), ctx), db = sd::csr_to_device(values_as<float>(m.b), ctx);
  const sd::TileOperand ta = sd::make_tile_operand(da.view(), TileArithmetic::kF16, "A", ctx);
  const sd::TileOperand tb = sd::make_tile_operand(db.view(), TileArithmetic::kF16, "B", ctx);
  const sd::TilePairCount count = sd::count_tile_pairs(ta, tb, ctx);
  const auto ha = sd::csr_to_bitmap_tiles(m.a), hb = sd::csr_to_bitmap_tiles(m.b);
  EXPECT_EQ(count.pairs, host_pairs(ha, hb, true));
  EXPECT_LT(count.pairs, host_pairs(ha, hb, false)) << "no pair was culled: the test does not test culling";
  // The tile conversion equals the host's.
  EXPECT_EQ(download<uint64_t>(ta.bitmap, ta.tiles, stream_), ha.bitmap);
  EXPECT_EQ(download<int64_t>(ta.tile_row_ptr, ta.tile_rows() + 1, stream_), ha.tile_row_ptr);
}

// C's tiles and bitmaps from both counting kernels equal the host tiling of the structural product.
TEST_F(TsparseSpgemm, BothCountingKernelsGiveTheTilesOfTheStructuralProduct) {
  const sd::GpuContext ctx = context();
  for (const Operands& m : {scattered(sparsetc_test::fresh_seed()), dense_blocks(sparsetc_test::fresh_seed())}) {
    const auto want = sd::csr_to_bitmap_tiles(sd::cpu_spgemm(m.a, m.b, 0));
    const sd::DeviceCsr<float> da = sd::csr_to_device(values_as<float>(m.a), ctx),
                               db = sd::csr_to_device(values_as<float>(m.b), ctx);
    const sd::TileOperand ta = sd::make_tile_operand(da.view(), TileArithmetic::kF16, "A", ctx);
    const sd::TileOperand tb = sd::make_tile_operand(db.view(), TileArithmetic::kF16, "B", ctx);
    const sd::TilePairCount count = sd::count_tile_pairs(ta, tb, ctx);
    const sd::TileTasks tasks = sd::make_tile_tasks(ta, tb, count, ctx);
    ASSERT_EQ(tasks.tiles, want.tiles());
    EXPECT_EQ(download<int64_t>(tasks.tile_row_ptr, tasks.tile_rows() + 1, stream_), want.tile_row_ptr);
    EXPECT_EQ(download<int32_t>(tasks.tile_col, tasks.tiles, stream_), want.tile_col);
    const std::vector<int64_t> pair_ptr = download<int64_t>(tasks.tile_pair_ptr, tasks.tiles + 1, stream_);
    EXPECT_EQ(pair_ptr.front(), 0);
    EXPECT_EQ(pair_ptr.back(), count.pairs);
    for (TileCountMethod method : {TileCountMethod::kBitwise, TileCountMethod::kTensorCore}) {
      const sd::DeviceBuffer bitmap = sd::count_tiles(ta, tb, tasks, method, ctx);
      EXPECT_EQ(download<uint64_t>(bitmap, tasks.tiles, stream_), want.bitmap)
          << (method == TileCountMethod::kBitwise ? "bitwise" : "tensor-core") << " count";
    }
  }
}

template <typename V>
void check_product(TsparseSpgemm& t, TileArithmetic arithmetic, const Operands& m,
                   TileCountMethod count = TileCountMethod::kBitwise) {
  const Product<V> got = multiply<V>(m.a, m.b, arithmetic, t.context(), count);
  EXPECT_TRUE(matches_reference(got.c, m.a, m.b, arithmetic)) << "arithmetic " << int(arithmetic);
  EXPECT_GT(got.stats.pairs, 0);
}

TEST_F(TsparseSpgemm, Fp16TensorCoresMatchTheReference) {
  check_product<float>(*this, TileArithmetic::kF16, dense_blocks(sparsetc_test::fresh_seed()));
  check_product<float>(*this, TileArithmetic::kF16, scattered(sparsetc_test::fresh_seed()), TileCountMethod::kTensorCore);
}

TEST_F(TsparseSpgemm, Bf16TensorCoresMatchTheReference) {
  check_product<float>(*this, TileArithmetic::kBf16, dense_blocks(sparsetc_test::fresh_seed()));
  check_product<float>(*this, TileArithmetic::kBf16, scattered(sparsetc_test::fresh_seed()));
}

// Split values with full float mantissas: the bound is u^2 (2^-22 fp16, 2^-16 bf16), far below what
// one rounding allows; the largest relative error must also beat the unsplit arithmetic's by far.
TEST_F(TsparseSpgemm, SplitValuesReachTheSquaredUnitRoundoff) {
  Operands m = dense_blocks(sparsetc_test::fresh_seed());
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  std::uniform_real_distribution<double> u(0.5, 2);
  for (CsrMatrix<double>* x : {&m.a, &m.b})
    for (double& v : x->values) v = double(float((rng() & 1 ? 1 : -1) * u(rng)));
  const CsrMatrix<double> want = sd::cpu_spgemm(m.a, m.b, 0);
  const CsrMatrix<double> magnitude = sd::cpu_spgemm(absolute(m.a), absolute(m.b), 0);
  const auto worst = [&](TileArithmetic arithmetic) {
    const Product<float> got = multiply<float>(m.a, m.b, arithmetic, context());
    double err = 0;
    for (int64_t i = 0; i < want.rows; ++i)
      for (int64_t p = want.row_ptr[size_t(i)], q = got.c.row_ptr[size_t(i)]; p < want.row_ptr[size_t(i + 1)]; ++p)
        if (q < got.c.row_ptr[size_t(i + 1)] && got.c.col_idx[size_t(q)] == want.col_idx[size_t(p)])
          err = std::max(err, std::fabs(double(got.c.values[size_t(q++)]) - want.values[size_t(p)]) /
                                  magnitude.values[size_t(p)]);
    return err;
  };
  for (auto [split, plain] : {std::pair{TileArithmetic::kF16Split, TileArithmetic::kF16},
                              std::pair{TileArithmetic::kBf16Split, TileArithmetic::kBf16}}) {
    check_product<float>(*this, split, m);
    check_product<float>(*this, split, scattered(sparsetc_test::fresh_seed()));
    const double e_split = worst(split), e_plain = worst(plain);
    EXPECT_GT(e_plain, 0.0);
    EXPECT_LT(e_split * 16, e_plain) << "split " << e_split << ", plain " << e_plain;
  }
}

TEST_F(TsparseSpgemm, Fp64TensorCoresMatchTheReferenceToDoublePrecision) {
  Operands m = dense_blocks(sparsetc_test::fresh_seed());
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  std::uniform_real_distribution<double> u(-2, 2);
  for (CsrMatrix<double>* x : {&m.a, &m.b})
    for (double& v : x->values) v = u(rng);  // full double mantissas
  check_product<double>(*this, TileArithmetic::kF64, m);
  check_product<double>(*this, TileArithmetic::kF64, scattered(sparsetc_test::fresh_seed()));
}

TEST_F(TsparseSpgemm, CudaCoreVariantMatchesTheReference) {
  check_product<float>(*this, TileArithmetic::kCudaCores, dense_blocks(sparsetc_test::fresh_seed()));
  check_product<float>(*this, TileArithmetic::kCudaCores, scattered(sparsetc_test::fresh_seed()));
}

// Odd, rectangular shapes (no multiple of 8) with empty rows and columns; A * B with k = 1.
TEST_F(TsparseSpgemm, OddRectangularShapes) {
  for (TileArithmetic arithmetic : {TileArithmetic::kF16, TileArithmetic::kBf16, TileArithmetic::kCudaCores,
                                    TileArithmetic::kF16Split, TileArithmetic::kBf16Split}) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    check_product<float>(*this, arithmetic,
                         {random_rows(13, 29, {0, 2, 5, 11}, seed), random_rows(29, 5, {0, 1, 3}, seed + 1)});
    check_product<float>(*this, arithmetic, {random_rows(71, 1, {0, 1}, seed + 2), random_rows(1, 45, {7, 30}, seed + 3)});
  }
  const uint64_t seed = sparsetc_test::fresh_seed();
  check_product<double>(*this, TileArithmetic::kF64,
                        {random_rows(9, 17, {0, 3, 9}, seed), random_rows(17, 23, {1, 4, 10}, seed + 1)});
}

// 0/1 patterns give integer products: exact in every arithmetic (SMAPE 0, paper Section 6.4).
TEST_F(TsparseSpgemm, ZeroOnePatternsAreExact) {
  const Operands m = dense_blocks(sparsetc_test::fresh_seed());
  const CsrMatrix<double> a = with_values(m.a, 1.0), b = with_values(m.b, 1.0);
  const CsrMatrix<double> want = sd::cpu_spgemm(a, b, 0);
  for (TileArithmetic arithmetic : {TileArithmetic::kF16, TileArithmetic::kBf16, TileArithmetic::kCudaCores,
                                    TileArithmetic::kF16Split, TileArithmetic::kBf16Split}) {
    const Product<float> got = multiply<float>(a, b, arithmetic, context());
    ASSERT_EQ(got.c.col_idx, want.col_idx);
    for (size_t p = 0; p < want.values.size(); ++p) ASSERT_EQ(double(got.c.values[p]), want.values[p]) << p;
  }
  const Product<double> got = multiply<double>(a, b, TileArithmetic::kF64, context());
  EXPECT_EQ(got.c.values, want.values);
}

// Rows k and k + 1 of B are opposite and A holds equal values in columns k, k + 1: those products
// cancel exactly (values are small integers, exact in fp16), so whole entries and tiles go.
TEST_F(TsparseSpgemm, CancelledEntriesAndEmptyTilesAreRemoved) {
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  CsrMatrix<double> a = random_rows(64, 48, {0, 4, 8, 16}, rng(), 24), b = random_rows(48, 40, {2, 6, 12}, rng(), 16);
  for (double& v : a.values) v = double(int64_t(rng() % 7) - 3);
  for (double& v : b.values) v = double(int64_t(rng() % 7) - 3);
  // Even rows of B copied, negated, into the following odd rows; A's odd columns copy the even ones.
  CsrMatrix<double> nb;
  nb.rows = b.rows;
  nb.cols = b.cols;
  nb.row_ptr.assign(size_t(b.rows + 1), 0);
  for (int64_t i = 0; i < b.rows; ++i) {
    const int64_t from = i & ~int64_t(1);
    for (int64_t p = b.row_ptr[size_t(from)]; p < b.row_ptr[size_t(from + 1)]; ++p) {
      nb.col_idx.push_back(b.col_idx[size_t(p)]);
      nb.values.push_back(i & 1 ? -b.values[size_t(p)] : b.values[size_t(p)]);
    }
    nb.row_ptr[size_t(i + 1)] = nb.nnz();
  }
  CsrMatrix<double> na;
  na.rows = a.rows;
  na.cols = a.cols;
  na.row_ptr.assign(size_t(a.rows + 1), 0);
  for (int64_t i = 0; i < a.rows; ++i) {
    std::vector<std::pair<int64_t, double>> row;
    for (int64_t p = a.row_ptr[size_t(i)]; p < a.row_ptr[size_t(i + 1)]; ++p) {
      const int64_t c = a.col_idx[size_t(p)];
      if (c & 1) continue;
      row.push_back({c, a.values[size_t(p)]});
      row.push_back({c + 1, a.values[size_t(p)]});
    }
    for (auto [c, v] : row) {
      na.col_idx.push_back(c);
      na.values.push_back(v);
    }
    na.row_ptr[size_t(i + 1)] = na.nnz();
  }
  for (TileArithmetic arithmetic : {TileArithmetic::kF16, TileArithmetic::kBf16, TileArithmetic::kCudaCores,
                                    TileArithmetic::kF16Split, TileArithmetic::kBf16Split}) {
    const Product<float> got = multiply<float>(na, nb, arithmetic, context());
    EXPECT_GT(got.stats.structural_nnz, 0);
    EXPECT_EQ(got.c.nnz(), 0) << "every product cancels";
  }
  // Half of the rows of A keep an extra uncancelled column: those entries stay.
  CsrMatrix<double> mixed = na;
  for (int64_t i = 0; i < mixed.rows; i += 2)
    for (int64_t p = mixed.row_ptr[size_t(i)]; p < mixed.row_ptr[size_t(i + 1)]; p += 2)
      mixed.values[size_t(p)] += 1;  // column c now differs from c + 1
  const Product<float> got = multiply<float>(mixed, nb, TileArithmetic::kF16, context());
  EXPECT_LT(got.c.nnz(), got.stats.structural_nnz);
  EXPECT_TRUE(matches_reference(got.c, mixed, nb, TileArithmetic::kF16));
  const Product<double> got64 = multiply<double>(mixed, nb, TileArithmetic::kF64, context());
  EXPECT_TRUE(matches_reference(got64.c, mixed, nb, TileArithmetic::kF64));
}

// Empty operands, and operands whose tiles never meet (A's columns 0-7 used, B's rows 8-15 only).
TEST_F(TsparseSpgemm, EmptyProducts) {
  const CsrMatrix<double> empty_a = random_rows(21, 30, {0}, 1), b = random_rows(30, 19, {1, 3}, 2);
  EXPECT_EQ(multiply<float>(empty_a, b, TileArithmetic::kF16, context()).c.nnz(), 0);
  CsrMatrix<double> a = random_rows(21, 8, {1, 4}, 3);
  a.cols = 16;
  CsrMatrix<double> disjoint;
  disjoint.rows = 16;
  disjoint.cols = 19;
  disjoint.row_ptr.assign(17, 0);
  for (int64_t i = 8; i < 16; ++i) {
    disjoint.col_idx.push_back(i);
    disjoint.values.push_back(1.0);
    disjoint.row_ptr[size_t(i + 1)] = disjoint.nnz();
  }
  const Product<float> got = multiply<float>(a, disjoint, TileArithmetic::kF16, context());
  EXPECT_EQ(got.c.nnz(), 0);
  EXPECT_EQ(got.c.row_ptr, std::vector<int64_t>(22, 0));
  EXPECT_EQ(got.stats.pairs, 0);
  CsrMatrix<double> none;
  none.rows = 0;
  none.cols = 30;
  none.row_ptr = {0};
  EXPECT_EQ(multiply<double>(none, b, TileArithmetic::kF64, context()).c.rows, 0);
}

TEST_F(TsparseSpgemm, Fp16RangeErrorNamesBf16) {
  CsrMatrix<double> a = random_rows(40, 40, {3, 5}, sparsetc_test::fresh_seed());
  a.values[a.values.size() / 2] = 1e5;
  const sd::GpuContext ctx = context();
  const sd::DeviceCsr<float> da = sd::csr_to_device(values_as<float>(a), ctx);
  try {
    sd::make_tile_operand(da.view(), TileArithmetic::kF16, "A", ctx);
    ADD_FAILURE() << "no error for a value beyond the fp16 range";
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
    EXPECT_NE(std::string(e.what()).find("BF16"), std::string::npos) << e.what();
  }
  // bf16 holds it.
  check_product<float>(*this, TileArithmetic::kBf16, {a, a});
}

// A second multiplication on the kept task list gives the same bits; the tensor-core count gives
// the same product as the bitwise one.
TEST_F(TsparseSpgemm, RepeatedMultiplicationIsBitIdentical) {
  const Operands m = dense_blocks(sparsetc_test::fresh_seed());
  const sd::GpuContext ctx = context();
  const sd::DeviceCsr<float> da = sd::csr_to_device(values_as<float>(m.a), ctx), db = sd::csr_to_device(values_as<float>(m.b), ctx);
  const sd::TileOperand ta = sd::make_tile_operand(da.view(), TileArithmetic::kF16, "A", ctx);
  const sd::TileOperand tb = sd::make_tile_operand(db.view(), TileArithmetic::kF16, "B", ctx);
  sd::TsparseSpgemm<float> spgemm(ta, tb, {}, ctx);
  spgemm.symbolic();
  const CsrMatrix<float> first = sd::csr_to_host(spgemm.multiply().view(), stream_);
  const CsrMatrix<float> second = sd::csr_to_host(spgemm.multiply().view(), stream_);
  EXPECT_EQ(first.col_idx, second.col_idx);
  ASSERT_EQ(first.values.size(), second.values.size());
  EXPECT_EQ(std::memcmp(first.values.data(), second.values.data(), first.values.size() * sizeof(float)), 0);
  const Product<float> tc = multiply<float>(m.a, m.b, TileArithmetic::kF16, ctx, TileCountMethod::kTensorCore);
  EXPECT_EQ(tc.c.col_idx, first.col_idx);
  EXPECT_EQ(std::memcmp(tc.c.values.data(), first.values.data(), first.values.size() * sizeof(float)), 0);
}

}  // namespace

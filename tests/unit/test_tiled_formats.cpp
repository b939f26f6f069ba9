// formats/tiled: the host (reference) conversions to BCSR, bitmap tiles, DCSR, tiled DCSR and VBR,
// and row permutation, each against an independent brute-force construction from Triplets; round
// trips; dense equivalence; thread-count invariance; bad inputs; one large timed case.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/error.hpp"
#include "formats/convert.hpp"
#include "formats/tiled.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using namespace sparsetc::detail;
using sparsetc_test::fresh_seed;
using sparsetc_test::random_triplets;
using sparsetc_test::Triplets;

// ---------------------------------------------------------------------------------------------
// Inputs

// A random matrix with empty rows (random_triplets), empty columns (about one in eight is
// cleared) and explicit zeros (about one entry in ten becomes +0.0 or -0.0).
Triplets test_matrix(int64_t rows, int64_t cols, double density, uint64_t seed) {
  Triplets t = random_triplets(rows, cols, density, seed);
  std::mt19937_64 rng(seed ^ 0x5bd1e995u);
  std::vector<bool> cleared(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) cleared[size_t(j)] = rng() % 8 == 0;
  Triplets out{rows, cols, {}};
  for (const auto& [rc, v] : t.entries) {
    if (cleared[size_t(rc.second)]) continue;
    const uint64_t u = rng() % 20;
    out.entries[rc] = u == 0 ? 0.0 : u == 1 ? -0.0 : v;
  }
  return out;
}

// The same kind of matrix in O(entries): about `per_row` random columns in nine rows out of ten.
[[maybe_unused]] Triplets sparse_test_matrix(int64_t rows, int64_t cols, int64_t per_row, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Triplets t{rows, cols, {}};
  for (int64_t i = 0; i < rows; ++i) {
    if (rng() % 10 == 0) continue;
    const int64_t n = int64_t(rng() % uint64_t(2 * per_row + 1));
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t u = rng() % 20;
      t.entries[{i, int64_t(rng() % uint64_t(cols))}] = u == 0 ? 0.0 : u == 1 ? -0.0 : 0.5 + double(rng() % 1000);
    }
  }
  return t;
}

using sparsetc_test::csr_of;

// Bitwise equality of value arrays (distinguishes -0.0 from +0.0).
template <typename V>
bool same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0);
}

template <typename V>
bool nonzero_bits(V x) {
  V zero = V(0);
  return std::memcmp(&x, &zero, sizeof(V)) != 0;
}

struct Shape {
  int64_t rows, cols;
  double density;
};
std::vector<Shape> small_shapes() {
  std::vector<Shape> s;
  for (double d : {0.03, 0.3, 1.0})
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{
             {37, 53}, {1, 1}, {0, 0}, {130, 7}, {7, 130}, {0, 5}, {5, 0}, {64, 64}, {33, 17}})
      s.push_back({r, c, d});
  return s;
}
std::string describe(const Shape& s, uint64_t seed) {
  return sparsetc::detail::str(s.rows, "x", s.cols, " density ", s.density, " seed ", seed);
}

const std::vector<std::pair<int, int>> kBlockShapes = {{16, 8}, {16, 16}, {8, 8}, {3, 5}, {5, 3}, {1, 1}, {1, 7}, {40, 40}};

template <typename F>
void expect_status(F&& f, sparsetc_status_t status, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected status " << status << " mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "message: " << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Brute-force constructions

template <typename V>
BcsrMatrix<V> expected_bcsr(const Triplets& t, int h, int w) {
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> blocks;
  for (const auto& [rc, v] : t.entries) {
    auto& b = blocks[{rc.first / h, rc.second / w}];
    if (b.empty()) b.assign(size_t(h * w), 0.0);
    b[size_t((rc.first % h) * w + rc.second % w)] = v;
  }
  BcsrMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.block_height = h;
  m.block_width = w;
  m.block_row_ptr.assign(size_t((t.rows + h - 1) / h + 1), 0);
  for (const auto& [key, b] : blocks) {
    m.block_row_ptr[size_t(key.first + 1)]++;
    m.block_col.push_back(int32_t(key.second));
    for (double x : b) m.values.push_back(V(x));
  }
  for (size_t i = 1; i < m.block_row_ptr.size(); ++i) m.block_row_ptr[i] += m.block_row_ptr[i - 1];
  return m;
}

template <typename V>
BitmapTiles<V> expected_bitmap(const Triplets& t) {
  std::map<std::pair<int64_t, int64_t>, std::map<int, double>> tiles;
  for (const auto& [rc, v] : t.entries) tiles[{rc.first / 8, rc.second / 8}][int(rc.first % 8 * 8 + rc.second % 8)] = v;
  BitmapTiles<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.tile_row_ptr.assign(size_t((t.rows + 7) / 8 + 1), 0);
  m.element_offset = {0};
  for (const auto& [key, elements] : tiles) {
    m.tile_row_ptr[size_t(key.first + 1)]++;
    m.tile_row.push_back(int32_t(key.first));
    m.tile_col.push_back(int32_t(key.second));
    uint64_t bits = 0;
    for (const auto& [bit, v] : elements) {
      bits += uint64_t(1) << bit;  // distinct bits: adding is or-ing
      m.values.push_back(V(v));
    }
    m.bitmap.push_back(bits);
    m.element_offset.push_back(int64_t(m.values.size()));
  }
  for (size_t i = 1; i < m.tile_row_ptr.size(); ++i) m.tile_row_ptr[i] += m.tile_row_ptr[i - 1];
  return m;
}

template <typename V>
DcsrMatrix<V> expected_dcsr(const Triplets& t) {
  DcsrMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  for (const auto& [rc, v] : t.entries) {
    if (m.row_idx.empty() || m.row_idx.back() != rc.first) {
      m.row_idx.push_back(rc.first);
      m.row_ptr.push_back(m.row_ptr.back());
    }
    m.row_ptr.back()++;
    m.col_idx.push_back(int32_t(rc.second));
    m.values.push_back(V(v));
  }
  return m;
}

template <typename V>
TiledDcsr<V> expected_tiled(const Triplets& t, int64_t sw) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, double>>> segments;  // (strip, row)
  for (const auto& [rc, v] : t.entries) segments[{rc.second / sw, rc.first}].push_back({rc.second, v});
  TiledDcsr<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.strip_width = sw;
  m.strip_ptr.assign(size_t((t.cols + sw - 1) / sw + 1), 0);
  for (const auto& [key, entries] : segments) {
    m.strip_ptr[size_t(key.first + 1)]++;
    m.row_idx.push_back(int32_t(key.second));
    for (const auto& [c, v] : entries) {
      m.col_idx.push_back(int32_t(c));
      m.values.push_back(V(v));
    }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  for (size_t i = 1; i < m.strip_ptr.size(); ++i) m.strip_ptr[i] += m.strip_ptr[i - 1];
  return m;
}

template <typename V>
VbrMatrix<V> expected_vbr(const Triplets& t, const std::vector<int64_t>& gp, int64_t bw) {
  std::vector<int64_t> group_of(size_t(t.rows));
  for (size_t g = 0; g + 1 < gp.size(); ++g)
    for (int64_t r = gp[g]; r < gp[g + 1]; ++r) group_of[size_t(r)] = int64_t(g);
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> blocks;
  for (const auto& [rc, v] : t.entries) {
    const int64_t g = group_of[size_t(rc.first)], h = gp[size_t(g + 1)] - gp[size_t(g)];
    auto& b = blocks[{g, rc.second / bw}];
    if (b.empty()) b.assign(size_t(h * bw), 0.0);
    b[size_t((rc.first - gp[size_t(g)]) + (rc.second % bw) * h)] = v;  // column-major
  }
  VbrMatrix<V> m;
  m.rows = t.rows;
  m.cols = t.cols;
  m.block_width = bw;
  m.group_ptr = gp;
  m.block_ptr.assign(gp.size(), 0);
  for (const auto& [key, b] : blocks) {
    m.block_ptr[size_t(key.first + 1)]++;
    m.block_col.push_back(int32_t(key.second));
    for (double x : b) m.values.push_back(V(x));
    m.value_offset.push_back(int64_t(m.values.size()));
  }
  for (size_t i = 1; i < m.block_ptr.size(); ++i) m.block_ptr[i] += m.block_ptr[i - 1];
  return m;
}

// ---------------------------------------------------------------------------------------------
// Comparisons (exact, values bitwise)

template <typename V>
void expect_same(const CsrMatrix<V>& got, const CsrMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_TRUE(same_bits(got.values, want.values));
}
template <typename V>
void expect_same(const BcsrMatrix<V>& got, const BcsrMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.block_height, want.block_height);
  EXPECT_EQ(got.block_width, want.block_width);
  EXPECT_EQ(got.block_row_ptr, want.block_row_ptr);
  EXPECT_EQ(got.block_col, want.block_col);
  EXPECT_TRUE(same_bits(got.values, want.values));
}
template <typename V>
void expect_same(const BitmapTiles<V>& got, const BitmapTiles<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.tile_row_ptr, want.tile_row_ptr);
  EXPECT_EQ(got.tile_row, want.tile_row);
  EXPECT_EQ(got.tile_col, want.tile_col);
  EXPECT_EQ(got.bitmap, want.bitmap);
  EXPECT_EQ(got.element_offset, want.element_offset);
  EXPECT_TRUE(same_bits(got.values, want.values));
}
template <typename V>
void expect_same(const DcsrMatrix<V>& got, const DcsrMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_idx, want.row_idx);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_TRUE(same_bits(got.values, want.values));
}
template <typename V>
void expect_same(const TiledDcsr<V>& got, const TiledDcsr<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.strip_width, want.strip_width);
  EXPECT_EQ(got.strip_ptr, want.strip_ptr);
  EXPECT_EQ(got.row_idx, want.row_idx);
  EXPECT_EQ(got.row_ptr, want.row_ptr);
  EXPECT_EQ(got.col_idx, want.col_idx);
  EXPECT_TRUE(same_bits(got.values, want.values));
}
template <typename V>
void expect_same(const VbrMatrix<V>& got, const VbrMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.block_width, want.block_width);
  EXPECT_EQ(got.group_ptr, want.group_ptr);
  EXPECT_EQ(got.block_ptr, want.block_ptr);
  EXPECT_EQ(got.block_col, want.block_col);
  EXPECT_EQ(got.value_offset, want.value_offset);
  EXPECT_TRUE(same_bits(got.values, want.values));
}
template <typename V>
void expect_same(const DenseMatrix<V>& got, const DenseMatrix<V>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.order, want.order);
  EXPECT_TRUE(same_bits(got.data, want.data));
}

// Row partitions used for VBR.
std::vector<std::vector<int64_t>> partitions(int64_t rows, uint64_t seed) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> ones(size_t(rows + 1));
  std::iota(ones.begin(), ones.end(), 0);
  out.push_back(ones);
  out.push_back(rows == 0 ? std::vector<int64_t>{0} : std::vector<int64_t>{0, rows});
  for (int64_t step : {int64_t(16), int64_t(5)}) {
    std::vector<int64_t> p{0};
    while (p.back() < rows) p.push_back(std::min(rows, p.back() + step));
    out.push_back(p);
  }
  std::mt19937_64 rng(seed);
  std::vector<int64_t> p{0};
  while (p.back() < rows) p.push_back(std::min(rows, p.back() + 1 + int64_t(rng() % 9)));
  out.push_back(p);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Against brute force, float and double

template <typename V>
class TiledFormats : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TiledFormats, ValueTypes);

TYPED_TEST(TiledFormats, BcsrMatchesBruteForceAndDense) {
  using V = TypeParam;
  for (const Shape& s : small_shapes()) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe(s, seed));
    const Triplets t = test_matrix(s.rows, s.cols, s.density, seed);
    const CsrMatrix<V> a = csr_of<V>(t);
    const DenseMatrix<V> dense = csr_to_dense(a, SPARSETC_ORDER_ROW);
    for (auto [h, w] : kBlockShapes) {
      SCOPED_TRACE(str("block ", h, "x", w));
      const BcsrMatrix<V> b = csr_to_bcsr(a, h, w);
      expect_same(b, expected_bcsr<V>(t, h, w));
      EXPECT_EQ(b.block_rows() + 1, int64_t(b.block_row_ptr.size()));
      expect_same(bcsr_to_dense(b), dense);
    }
  }
}

TYPED_TEST(TiledFormats, BitmapMatchesBruteForceAndRoundTrips) {
  using V = TypeParam;
  for (const Shape& s : small_shapes()) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe(s, seed));
    const Triplets t = test_matrix(s.rows, s.cols, s.density, seed);
    const CsrMatrix<V> a = csr_of<V>(t);
    const BitmapTiles<V> tiles = csr_to_bitmap_tiles(a);
    expect_same(tiles, expected_bitmap<V>(t));
    expect_same(bitmap_tiles_to_csr(tiles), a);
  }
}

TYPED_TEST(TiledFormats, DcsrMatchesBruteForceAndRoundTrips) {
  using V = TypeParam;
  for (const Shape& s : small_shapes()) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe(s, seed));
    const Triplets t = test_matrix(s.rows, s.cols, s.density, seed);
    const CsrMatrix<V> a = csr_of<V>(t);
    const DcsrMatrix<V> d = csr_to_dcsr(a);
    expect_same(d, expected_dcsr<V>(t));
    expect_same(dcsr_to_csr(d), a);
  }
}

TYPED_TEST(TiledFormats, TiledDcsrMatchesBruteForceAndRoundTrips) {
  using V = TypeParam;
  for (const Shape& s : small_shapes()) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe(s, seed));
    const Triplets t = test_matrix(s.rows, s.cols, s.density, seed);
    const CsrMatrix<V> a = csr_of<V>(t);
    for (int64_t sw : {1, 3, 8, 16, 64, 1000}) {
      SCOPED_TRACE(str("strip width ", sw));
      const TiledDcsr<V> tiled = csr_to_tiled_dcsr(a, sw);
      expect_same(tiled, expected_tiled<V>(t, sw));
      EXPECT_EQ(tiled.strips() + 1, int64_t(tiled.strip_ptr.size()));
      expect_same(tiled_dcsr_to_csr(tiled), a);
    }
  }
}

TYPED_TEST(TiledFormats, VbrMatchesBruteForceAndDense) {
  using V = TypeParam;
  for (const Shape& s : small_shapes()) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe(s, seed));
    const Triplets t = test_matrix(s.rows, s.cols, s.density, seed);
    const CsrMatrix<V> a = csr_of<V>(t);
    const DenseMatrix<V> dense = csr_to_dense(a, SPARSETC_ORDER_ROW);
    for (const auto& gp : partitions(s.rows, seed))
      for (int64_t bw : {1, 3, 8, 16, 100}) {
        SCOPED_TRACE(str("block width ", bw, ", ", gp.size() - 1, " groups"));
        const VbrMatrix<V> v = csr_to_vbr(a, gp, bw);
        expect_same(v, expected_vbr<V>(t, gp, bw));
        expect_same(vbr_to_dense(v), dense);
      }
  }
}

TYPED_TEST(TiledFormats, PermuteRowsGathers) {
  using V = TypeParam;
  for (const Shape& s : small_shapes()) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe(s, seed));
    const Triplets t = test_matrix(s.rows, s.cols, s.density, seed);
    const CsrMatrix<V> a = csr_of<V>(t);
    std::vector<int64_t> perm(size_t(s.rows));
    std::iota(perm.begin(), perm.end(), 0);
    expect_same(permute_rows(a, perm), a);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
    Triplets want{t.rows, t.cols, {}};
    std::vector<int64_t> inverse(size_t(s.rows));
    for (int64_t i = 0; i < s.rows; ++i) inverse[size_t(perm[size_t(i)])] = i;
    for (const auto& [rc, v] : t.entries) want.entries[{inverse[size_t(rc.first)], rc.second}] = v;
    expect_same(permute_rows(a, perm), csr_of<V>(want));
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-made cases

TEST(TiledFormatsFixed, BitmapHighBitsUseUnsignedShifts) {
  // (3, 7) is bit 31 (the signed-shift trap), (4, 0) bit 32, (7, 7) bit 63; the 2nd tile's (0, 1)
  // bit 1. The 9x10 matrix has partial edge tiles.
  Triplets t{9, 10, {{{3, 7}, 1.0}, {{4, 0}, 2.0}, {{7, 7}, 3.0}, {{0, 9}, 4.0}, {{8, 8}, -0.0}}};
  const BitmapTiles<double> tiles = csr_to_bitmap_tiles(csr_of<double>(t));
  ASSERT_EQ(tiles.tiles(), 3);
  EXPECT_EQ(tiles.tile_row_ptr, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(tiles.bitmap[0], (uint64_t(1) << 31) | (uint64_t(1) << 32) | (uint64_t(1) << 63));
  EXPECT_EQ(tiles.bitmap[1], uint64_t(1) << 1);
  EXPECT_EQ(tiles.bitmap[2], uint64_t(1));
  EXPECT_EQ(tiles.element_offset, (std::vector<int64_t>{0, 3, 4, 5}));
  EXPECT_EQ(tiles.values[0], 1.0);
  EXPECT_EQ(tiles.values[2], 3.0);
  EXPECT_TRUE(std::signbit(tiles.values[4]));  // an explicit -0.0 stays a stored element
  expect_same(bitmap_tiles_to_csr(tiles), csr_of<double>(t));
}

TEST(TiledFormatsFixed, BlocksOfExplicitZerosExist) {
  // A single explicit zero still makes its block, tile and row exist.
  Triplets t{20, 20, {{{17, 19}, 0.0}}};
  const CsrMatrix<float> a = csr_of<float>(t);
  const BcsrMatrix<float> b = csr_to_bcsr(a, 16, 16);
  EXPECT_EQ(b.block_row_ptr, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(b.block_col, (std::vector<int32_t>{1}));
  EXPECT_EQ(b.values, std::vector<float>(256, 0.0f));
  const BitmapTiles<float> tiles = csr_to_bitmap_tiles(a);
  EXPECT_EQ(tiles.bitmap, (std::vector<uint64_t>{uint64_t(1) << (1 * 8 + 3)}));
  EXPECT_EQ(csr_to_dcsr(a).row_idx, (std::vector<int64_t>{17}));
  EXPECT_EQ(csr_to_tiled_dcsr(a, 8).row_idx, (std::vector<int32_t>{17}));
  const VbrMatrix<float> v = csr_to_vbr(a, {0, 10, 20}, 8);
  EXPECT_EQ(v.block_ptr, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(v.block_col, (std::vector<int32_t>{2}));
  EXPECT_EQ(v.value_offset, (std::vector<int64_t>{0, 80}));
}

TEST(TiledFormatsFixed, VbrBlocksAreColumnMajorAndPaddedOnTheRight) {
  // 3x5, groups {0}, {1, 2}, block width 4: group 1 has column blocks 0 and 1 (cols 4..7, padded).
  Triplets t{3, 5, {{{1, 0}, 1.0}, {{1, 3}, 2.0}, {{2, 1}, 3.0}, {{2, 4}, 4.0}}};
  const VbrMatrix<double> v = csr_to_vbr(csr_of<double>(t), {0, 1, 3}, 4);
  EXPECT_EQ(v.block_ptr, (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(v.block_col, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(v.value_offset, (std::vector<int64_t>{0, 8, 16}));
  // Block (i, j) at i + j * 2.
  EXPECT_EQ(v.values, (std::vector<double>{1, 0, 0, 3, 0, 0, 2, 0, 0, 4, 0, 0, 0, 0, 0, 0}));
}

// ---------------------------------------------------------------------------------------------
// Thread-count invariance

#ifdef _OPENMP
struct AllFormats {
  BcsrMatrix<double> b168, b1616, b88, b35;
  BitmapTiles<double> tiles;
  DcsrMatrix<double> dcsr;
  TiledDcsr<double> t1, t64;
  VbrMatrix<double> vbr;
  CsrMatrix<double> permuted, from_tiles, from_tiled;
};
AllFormats convert_all(const CsrMatrix<double>& a, const std::vector<int64_t>& gp, const std::vector<int64_t>& perm) {
  AllFormats f;
  f.b168 = csr_to_bcsr(a, 16, 8);
  f.b1616 = csr_to_bcsr(a, 16, 16);
  f.b88 = csr_to_bcsr(a, 8, 8);
  f.b35 = csr_to_bcsr(a, 3, 5);
  f.tiles = csr_to_bitmap_tiles(a);
  f.dcsr = csr_to_dcsr(a);
  f.t1 = csr_to_tiled_dcsr(a, 1);
  f.t64 = csr_to_tiled_dcsr(a, 64);
  f.vbr = csr_to_vbr(a, gp, 16);
  f.permuted = permute_rows(a, perm);
  f.from_tiles = bitmap_tiles_to_csr(f.tiles);
  f.from_tiled = tiled_dcsr_to_csr(f.t64);
  return f;
}

TEST(TiledFormatsThreads, IdenticalForOneTwoAndThreeThreads) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(str("seed ", seed));
  // Many block rows and parallel chunks; a few dense rows for skew.
  Triplets t = sparse_test_matrix(20011, 301, 6, seed);
  for (int64_t j = 0; j < t.cols; j += 2) t.entries[{5000, j}] = 1.5;
  for (int64_t i = 0; i < t.rows; i += 3) t.entries[{i, 299}] = -2.5;
  const CsrMatrix<double> a = csr_of<double>(t);
  const std::vector<int64_t> gp = partitions(t.rows, seed).back();
  std::vector<int64_t> perm(size_t(t.rows));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));

  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const AllFormats one = convert_all(a, gp, perm);
  for (int threads : {2, 3}) {
    SCOPED_TRACE(str(threads, " threads"));
    omp_set_num_threads(threads);
    const AllFormats many = convert_all(a, gp, perm);
    expect_same(many.b168, one.b168);
    expect_same(many.b1616, one.b1616);
    expect_same(many.b88, one.b88);
    expect_same(many.b35, one.b35);
    expect_same(many.tiles, one.tiles);
    expect_same(many.dcsr, one.dcsr);
    expect_same(many.t1, one.t1);
    expect_same(many.t64, one.t64);
    expect_same(many.vbr, one.vbr);
    expect_same(many.permuted, one.permuted);
    expect_same(many.from_tiles, one.from_tiles);
    expect_same(many.from_tiled, one.from_tiled);
  }
  omp_set_num_threads(saved);
  expect_same(one.from_tiles, a);
  expect_same(one.from_tiled, a);
  expect_same(one.b35, expected_bcsr<double>(t, 3, 5));
  expect_same(one.t64, expected_tiled<double>(t, 64));
}
#endif

// ---------------------------------------------------------------------------------------------
// Bad inputs

TEST(TiledFormatsErrors, BadShapesAndMalformedCsr) {
  const CsrMatrix<float> a = csr_of<float>(test_matrix(10, 12, 0.3, fresh_seed()));
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  expect_status([&] { csr_to_bcsr(a, 0, 8); }, invalid, "block shape 0x8");
  expect_status([&] { csr_to_bcsr(a, 16, -1); }, invalid, "block shape 16x-1");
  expect_status([&] { csr_to_tiled_dcsr(a, 0); }, invalid, "strip width 0");
  expect_status([&] { csr_to_vbr(a, {0, 10}, 0); }, invalid, "block width 0");
  CsrMatrix<float> bad = a;
  bad.row_ptr.pop_back();
  expect_status([&] { csr_to_bcsr(bad, 8, 8); }, invalid, "row offsets");
  expect_status([&] { csr_to_bitmap_tiles(bad); }, invalid, "row offsets");
  expect_status([&] { csr_to_dcsr(bad); }, invalid, "row offsets");
  expect_status([&] { csr_to_tiled_dcsr(bad, 8); }, invalid, "row offsets");
  expect_status([&] { csr_to_vbr(bad, {0, 10}, 8); }, invalid, "row offsets");
  expect_status([&] { permute_rows(bad, std::vector<int64_t>(10, 0)); }, invalid, "row offsets");
  bad = a;
  bad.values.pop_back();
  expect_status([&] { csr_to_bcsr(bad, 8, 8); }, invalid, "values");
}

TEST(TiledFormatsErrors, VbrGroupsMustPartitionTheRows) {
  const CsrMatrix<double> a = csr_of<double>(test_matrix(10, 12, 0.3, fresh_seed()));
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  expect_status([&] { csr_to_vbr(a, {}, 4); }, invalid, "group_ptr is empty");
  expect_status([&] { csr_to_vbr(a, {1, 10}, 4); }, invalid, "group_ptr starts at 1");
  expect_status([&] { csr_to_vbr(a, {0, 5, 9}, 4); }, invalid, "group_ptr ends at 9");
  expect_status([&] { csr_to_vbr(a, {0, 5, 11}, 4); }, invalid, "group_ptr ends at 11");
  expect_status([&] { csr_to_vbr(a, {0, 6, 4, 10}, 4); }, invalid, "not strictly increasing: group 1");
  expect_status([&] { csr_to_vbr(a, {0, 4, 4, 10}, 4); }, invalid, "not strictly increasing: group 1 is [4, 4)");
  expect_status([&] { csr_to_vbr(a, {0}, 4); }, invalid, "group_ptr ends at 0");
  const CsrMatrix<double> empty = csr_of<double>(Triplets{0, 3, {}});
  EXPECT_EQ(csr_to_vbr(empty, {0}, 4).groups(), 0);
  expect_status([&] { csr_to_vbr(empty, {0, 0}, 4); }, invalid, "not strictly increasing");
}

TEST(TiledFormatsErrors, PermutationMustBeAPermutation) {
  const CsrMatrix<double> a = csr_of<double>(test_matrix(6, 4, 0.5, fresh_seed()));
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  expect_status([&] { permute_rows(a, {0, 1, 2, 3, 4}); }, invalid, "5 entries for 6 rows (wrong length)");
  expect_status([&] { permute_rows(a, {0, 1, 2, 3, 4, 5, 0}); }, invalid, "wrong length");
  expect_status([&] { permute_rows(a, {0, 1, 2, 3, 4, 6}); }, invalid, "permutation[5] = 6 is out of range [0, 6)");
  expect_status([&] { permute_rows(a, {0, -1, 2, 3, 4, 5}); }, invalid, "permutation[1] = -1 is out of range");
  expect_status([&] { permute_rows(a, {0, 1, 2, 1, 4, 5}); }, invalid,
                "permutation[3] = 1 is repeated (also permutation[1])");
}

TEST(TiledFormatsErrors, IndicesMustFitInt32) {
  // Wide empty matrices: nothing is allocated per column, only the checks run.
  const int64_t two31 = int64_t(1) << 31;
  auto wide = [](int64_t cols) {
    CsrMatrix<float> m;
    m.rows = 1;
    m.cols = cols;
    m.row_ptr = {0, 0};
    return m;
  };
  const auto overflow = SPARSETC_STATUS_SIZE_OVERFLOW;
  EXPECT_EQ(csr_to_bcsr(wide(two31), 1, 1).block_cols(), two31);  // largest index 2^31 - 1 fits
  expect_status([&] { csr_to_bcsr(wide(two31 + 1), 1, 1); }, overflow, "block columns");
  EXPECT_EQ(csr_to_bcsr(wide(8 * two31), 16, 8).blocks(), 0);
  expect_status([&] { csr_to_bcsr(wide(8 * two31 + 1), 16, 8); }, overflow, "block columns");
  EXPECT_EQ(csr_to_bitmap_tiles(wide(8 * two31)).tiles(), 0);
  expect_status([&] { csr_to_bitmap_tiles(wide(8 * two31 + 1)); }, overflow, "tile columns");
  EXPECT_EQ(csr_to_dcsr(wide(two31)).cols, two31);
  expect_status([&] { csr_to_dcsr(wide(two31 + 1)); }, overflow, "columns");
  expect_status([&] { csr_to_tiled_dcsr(wide(two31 + 1), two31); }, overflow, "columns");
  EXPECT_EQ(csr_to_vbr(wide(64 * two31), {0, 1}, 64).block_col.size(), 0u);
  expect_status([&] { csr_to_vbr(wide(64 * two31 + 1), {0, 1}, 64); }, overflow, "column blocks");
}

TEST(TiledFormatsErrors, MalformedTiledInputsAreRejected) {
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  // 9x10: edge tiles in both directions; (0, 9) and (8, 8) live in partial tiles.
  Triplets t{9, 10, {{{0, 0}, 1.0}, {{0, 9}, 2.0}, {{3, 2}, 3.0}, {{8, 8}, 4.0}}};
  const CsrMatrix<double> a = csr_of<double>(t);

  const BitmapTiles<double> tiles = csr_to_bitmap_tiles(a);
  ASSERT_EQ(tiles.tiles(), 3);
  BitmapTiles<double> bt = tiles;
  bt.element_offset[1]++;
  expect_status([&] { bitmap_tiles_to_csr(bt); }, invalid, "tile 0 has an element count");
  bt = tiles;
  bt.bitmap[1] = uint64_t(1) << 2;  // tile (0, 1): element (0, 1) -> (0, 2), global column 10 of 10
  expect_status([&] { bitmap_tiles_to_csr(bt); }, invalid, "tile 1 has bitmap bits for elements outside the matrix");
  bt = tiles;
  bt.bitmap[2] = uint64_t(1) << 8;  // tile (1, 1): element (0, 0) -> (1, 0), global row 9 of 9
  expect_status([&] { bitmap_tiles_to_csr(bt); }, invalid, "tile 2 has bitmap bits for elements outside the matrix");
  bt = tiles;
  bt.tile_col[1] = 0;
  expect_status([&] { bitmap_tiles_to_csr(bt); }, invalid, "tile 1 does not follow the previous tile");
  bt = tiles;
  bt.tile_row_ptr = {0, 3, 3};
  expect_status([&] { bitmap_tiles_to_csr(bt); }, invalid, "tile 2 is not listed under its tile row");
  bt = tiles;
  bt.values.pop_back();
  expect_status([&] { bitmap_tiles_to_csr(bt); }, invalid, "element offsets");

  DcsrMatrix<double> d = csr_to_dcsr(a);
  std::swap(d.row_idx[0], d.row_idx[1]);
  expect_status([&] { dcsr_to_csr(d); }, invalid, "listed row 1");
  d = csr_to_dcsr(a);
  d.col_idx[0] = 10;
  expect_status([&] { dcsr_to_csr(d); }, invalid, "column outside");

  TiledDcsr<double> td = csr_to_tiled_dcsr(a, 8);
  ASSERT_EQ(td.strip_ptr, (std::vector<int64_t>{0, 2, 4}));
  td.col_idx[0] = 8;  // strip 0 holds columns [0, 8)
  expect_status([&] { tiled_dcsr_to_csr(td); }, invalid, "outside strip 0");
  td = csr_to_tiled_dcsr(a, 8);
  td.strip_ptr = {0, 5, 4};
  expect_status([&] { tiled_dcsr_to_csr(td); }, invalid, "strip_ptr");

  BcsrMatrix<double> b = csr_to_bcsr(a, 8, 8);
  b.values.pop_back();
  expect_status([&] { bcsr_to_dense(b); }, invalid, "values for");
  b = csr_to_bcsr(a, 8, 8);
  b.block_col[0] = 2;
  expect_status([&] { bcsr_to_dense(b); }, invalid, "block 0");

  VbrMatrix<double> v = csr_to_vbr(a, {0, 4, 9}, 4);
  v.value_offset[1] += 1;
  expect_status([&] { vbr_to_dense(v); }, invalid, "wrong size");
  v = csr_to_vbr(a, {0, 4, 9}, 4);
  v.group_ptr = {0, 9};
  expect_status([&] { vbr_to_dense(v); }, invalid, "block_ptr");
}

// ---------------------------------------------------------------------------------------------
// One large case: 200k x 200k, about 3M entries (a band of about 15 per row plus scattered ones, a few
// empty rows, explicit zeros), every conversion timed; checks are independent but linear-ish.

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

CsrMatrix<float> large_banded(int64_t n, uint64_t seed) {
  CsrMatrix<float> a;
  a.rows = a.cols = n;
  a.row_ptr.reserve(size_t(n + 1));
  a.col_idx.reserve(size_t(n * 16));
  a.values.reserve(size_t(n * 16));
  std::vector<int64_t> cols;
  for (int64_t i = 0; i < n; ++i) {
    cols.clear();
    if (splitmix(seed) % 50 != 0) {
      for (int k = 0; k < 17; ++k) cols.push_back(std::clamp<int64_t>(i - 40 + int64_t(splitmix(seed) % 81), 0, n - 1));
      if (splitmix(seed) % 4 == 0) cols.push_back(int64_t(splitmix(seed) % uint64_t(n)));
      std::sort(cols.begin(), cols.end());
      cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    }
    for (int64_t c : cols) {
      const uint64_t u = splitmix(seed);
      a.col_idx.push_back(c);
      a.values.push_back(u % 100 == 0 ? (u & 128 ? -0.0f : 0.0f) : float(int64_t(u % 2001) - 1000) / 64.0f + 0.01f);
    }
    a.row_ptr.push_back(int64_t(a.col_idx.size()));
  }
  return a;
}

template <typename F>
auto timed(const char* name, std::vector<std::pair<std::string, double>>& times, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  auto result = f();
  times.push_back({name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
  return result;
}

// Every CSR entry at its place in its block, the blocks exactly the distinct (group, column
// block) pairs in order, and no other stored value with non-zero bits. group_of[r] is the group
// (block row) of row r, first_row[g] its first row; element (i, j) of block b is at
// offset(b) + i * row_stride(g) + j * col_stride(g).
template <typename V, typename Offset, typename RowStride, typename ColStride>
void check_blocks(const CsrMatrix<V>& a, const std::vector<int64_t>& group_of, const std::vector<int64_t>& first_row,
                  const std::vector<int64_t>& block_ptr, const std::vector<int32_t>& block_col, int64_t width,
                  const std::vector<V>& values, Offset offset, RowStride row_stride, ColStride col_stride) {
  const int64_t block_cols = (a.cols + width - 1) / width;
  std::vector<int64_t> want;
  want.reserve(a.col_idx.size());
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r + 1)]; ++k)
      want.push_back(group_of[size_t(r)] * block_cols + a.col_idx[size_t(k)] / width);
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  std::vector<int64_t> got;
  for (size_t g = 0; g + 1 < block_ptr.size(); ++g)
    for (int64_t b = block_ptr[g]; b < block_ptr[g + 1]; ++b) got.push_back(int64_t(g) * block_cols + block_col[size_t(b)]);
  ASSERT_EQ(got, want);
  int64_t misplaced = 0, nonzero = 0;
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t g = group_of[size_t(r)];
    for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r + 1)]; ++k) {
      const int64_t c = a.col_idx[size_t(k)];
      const auto first = block_col.begin() + block_ptr[size_t(g)], last = block_col.begin() + block_ptr[size_t(g + 1)];
      const int64_t b = std::lower_bound(first, last, int32_t(c / width)) - block_col.begin();
      const V x = values[size_t(offset(b) + (r - first_row[size_t(g)]) * row_stride(g) + (c % width) * col_stride(g))];
      misplaced += std::memcmp(&x, &a.values[size_t(k)], sizeof(V)) != 0;
      nonzero += nonzero_bits(a.values[size_t(k)]);
    }
  }
  EXPECT_EQ(misplaced, 0);
  EXPECT_EQ(std::count_if(values.begin(), values.end(), [](V x) { return nonzero_bits(x); }), nonzero);
}

TEST(TiledFormatsLarge, TwoHundredThousandSquaredThreeMillionEntries) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(str("seed ", seed));
  const int64_t n = 200000;
  const CsrMatrix<float> a = large_banded(n, seed);
  std::cout << "[ large    ] " << n << "x" << n << ", " << a.nnz() << " entries, "
#ifdef _OPENMP
            << omp_get_max_threads()
#else
            << 1
#endif
            << " threads\n";
  std::vector<std::pair<std::string, double>> times;

  for (const auto& shape : std::vector<std::pair<int, int>>{{16, 8}, {16, 16}, {8, 8}}) {
    const int h = shape.first, w = shape.second;
    SCOPED_TRACE(str("block ", h, "x", w));
    const std::string name = str("csr_to_bcsr ", h, "x", w);
    const BcsrMatrix<float> b = timed(name.c_str(), times, [&] { return csr_to_bcsr(a, h, w); });
    std::vector<int64_t> group_of(static_cast<size_t>(n)), first_row;
    for (int64_t r = 0; r < n; ++r) group_of[size_t(r)] = r / h;
    for (int64_t I = 0; I < b.block_rows(); ++I) first_row.push_back(I * h);
    const int64_t area = int64_t(h) * w;
    check_blocks(a, group_of, first_row, b.block_row_ptr, b.block_col, w, b.values,
                 [&](int64_t blk) { return blk * area; }, [&](int64_t) { return int64_t(w); },
                 [](int64_t) { return int64_t(1); });
  }

  {
    const BitmapTiles<float> tiles = timed("csr_to_bitmap_tiles", times, [&] { return csr_to_bitmap_tiles(a); });
    std::vector<int64_t> group_of(static_cast<size_t>(n)), first_row;
    for (int64_t r = 0; r < n; ++r) group_of[size_t(r)] = r / 8;
    for (int64_t I = 0; I < tiles.tile_rows(); ++I) first_row.push_back(I * 8);
    // Elements sit at element_offset + (rank of the bit); expand the tiles to dense 8x8 to reuse
    // the block check.
    std::vector<float> expanded(size_t(tiles.tiles() * 64), 0.0f);
    int64_t bad_rows = 0;
    for (int64_t t = 0; t < tiles.tiles(); ++t) {
      bad_rows += tiles.tile_row[size_t(t)] < 0 || t < tiles.tile_row_ptr[size_t(tiles.tile_row[size_t(t)])] ||
                  t >= tiles.tile_row_ptr[size_t(tiles.tile_row[size_t(t)] + 1)];
      int64_t e = tiles.element_offset[size_t(t)];
      for (int bit = 0; bit < 64; ++bit)
        if (tiles.bitmap[size_t(t)] >> bit & 1u) expanded[size_t(t * 64 + bit)] = tiles.values[size_t(e++)];
      bad_rows += e != tiles.element_offset[size_t(t + 1)];
    }
    EXPECT_EQ(bad_rows, 0);
    check_blocks(a, group_of, first_row, tiles.tile_row_ptr, tiles.tile_col, 8, expanded,
                 [](int64_t blk) { return blk * 64; }, [](int64_t) { return int64_t(8); },
                 [](int64_t) { return int64_t(1); });
    expect_same(timed("bitmap_tiles_to_csr", times, [&] { return bitmap_tiles_to_csr(tiles); }), a);
  }

  {
    const DcsrMatrix<float> d = timed("csr_to_dcsr", times, [&] { return csr_to_dcsr(a); });
    int64_t nonempty = 0;
    for (int64_t r = 0; r < n; ++r) nonempty += a.row_ptr[size_t(r + 1)] > a.row_ptr[size_t(r)];
    EXPECT_EQ(int64_t(d.row_idx.size()), nonempty);
    expect_same(timed("dcsr_to_csr", times, [&] { return dcsr_to_csr(d); }), a);
  }

  for (int64_t sw : {int64_t(64), int64_t(1024)}) {
    SCOPED_TRACE(str("strip width ", sw));
    const TiledDcsr<float> td =
        timed(str("csr_to_tiled_dcsr ", sw).c_str(), times, [&] { return csr_to_tiled_dcsr(a, sw); });
    std::vector<int64_t> segments;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t k = a.row_ptr[size_t(r)]; k < a.row_ptr[size_t(r + 1)]; ++k)
        segments.push_back(a.col_idx[size_t(k)] / sw * n + r);
    std::sort(segments.begin(), segments.end());
    segments.erase(std::unique(segments.begin(), segments.end()), segments.end());
    std::vector<int64_t> got;
    for (int64_t s = 0; s < td.strips(); ++s)
      for (int64_t j = td.strip_ptr[size_t(s)]; j < td.strip_ptr[size_t(s + 1)]; ++j)
        got.push_back(s * n + td.row_idx[size_t(j)]);
    EXPECT_EQ(got, segments);
    expect_same(timed(str("tiled_dcsr_to_csr ", sw).c_str(), times, [&] { return tiled_dcsr_to_csr(td); }), a);
  }

  {
    uint64_t state = seed;
    std::vector<int64_t> gp{0};
    while (gp.back() < n) gp.push_back(std::min(n, gp.back() + 1 + int64_t(splitmix(state) % 32)));
    const int64_t bw = 16;
    const VbrMatrix<float> v = timed("csr_to_vbr (groups 1..32, width 16)", times, [&] { return csr_to_vbr(a, gp, bw); });
    std::vector<int64_t> group_of(static_cast<size_t>(n));
    for (size_t g = 0; g + 1 < gp.size(); ++g)
      for (int64_t r = gp[g]; r < gp[g + 1]; ++r) group_of[size_t(r)] = int64_t(g);
    int64_t bad_sizes = 0;
    for (size_t g = 0; g + 1 < gp.size(); ++g)
      for (int64_t b = v.block_ptr[g]; b < v.block_ptr[g + 1]; ++b)
        bad_sizes += v.value_offset[size_t(b + 1)] - v.value_offset[size_t(b)] != (gp[g + 1] - gp[g]) * bw;
    EXPECT_EQ(bad_sizes, 0);
    check_blocks(a, group_of, gp, v.block_ptr, v.block_col, bw, v.values,
                 [&](int64_t blk) { return v.value_offset[size_t(blk)]; }, [](int64_t) { return int64_t(1); },
                 [&](int64_t g) { return gp[size_t(g + 1)] - gp[size_t(g)]; });
  }

  {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
    const CsrMatrix<float> p = timed("permute_rows", times, [&] { return permute_rows(a, perm); });
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = a.row_ptr[size_t(perm[size_t(i)])], len = a.row_ptr[size_t(perm[size_t(i)] + 1)] - from;
      bad += p.row_ptr[size_t(i + 1)] - p.row_ptr[size_t(i)] != len ||
             !std::equal(a.col_idx.begin() + from, a.col_idx.begin() + from + len,
                         p.col_idx.begin() + p.row_ptr[size_t(i)]) ||
             std::memcmp(a.values.data() + from, p.values.data() + p.row_ptr[size_t(i)], size_t(len) * sizeof(float)) != 0;
    }
    EXPECT_EQ(bad, 0);
  }

  for (const auto& [name, ms] : times) {
    std::cout << "[ large    ]   " << name << ": " << ms << " ms\n";
    std::string key = "ms_" + name;  // an XML attribute name in --gtest_output=xml
    for (char& ch : key)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    ::testing::Test::RecordProperty(key, str(ms));
  }
}

}  // namespace

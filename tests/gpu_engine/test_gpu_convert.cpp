// GPU format conversions against the host references, with exact equality of every array (values
// compared bit for bit): CSR <-> CSC, BCSR (16x8, 16x16, 8x8 and odd shapes), 8x8 bitmap tiles,
// DCSR, tiled DCSR, VBR and row permutation on generated matrices (band, Poisson stencils, R-MAT,
// uniform, scrambled blocks) with odd sizes, fresh random matrices with empty rows, empty matrices,
// a row of 100k entries and a block row of thousands of blocks, and the real matrices of
// matrix_dir() when present; normalisation of user arrays (CSR/CSC/COO, int32/int64 offsets and
// indices, base 0/1, f64/f32/f16/bf16 values, COO duplicates summed or reported) against
// import_csr; and value rounding (f16/bf16/f32/f64, values at the rounding and overflow edges,
// NaN payloads) against store_values, with the out-of-range count. Skips without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "formats/convert.hpp"
#include "formats/raw.hpp"
#include "formats/tiled.hpp"
#include "formats/values.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "io/matrix_market.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;
using sd::DeviceBuffer;
using sd::GpuContext;
using sparsetc_test::Stream;

using sparsetc_test::same;
#define EXPECT_SAME_SCALAR(field) EXPECT_EQ(got.field, want.field) << #field << " " << where

// ---- matrices

using sparsetc_test::csr_of;

// rows x cols with the given entries per row (distinct random columns, some rows empty).
CsrMatrix<double> rows_of(int64_t cols, const std::vector<int64_t>& lengths, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  CsrMatrix<double> m;
  m.rows = int64_t(lengths.size());
  m.cols = cols;
  std::vector<int64_t> all(static_cast<size_t>(cols));
  std::iota(all.begin(), all.end(), int64_t(0));
  for (int64_t n : lengths) {
    std::vector<int64_t> pick;
    if (n * 4 > cols) {
      pick = all;
      std::shuffle(pick.begin(), pick.end(), rng);
      pick.resize(size_t(n));
    } else {
      std::uniform_int_distribution<int64_t> c(0, cols - 1);
      while (int64_t(pick.size()) < n) {
        pick.push_back(c(rng));
        std::sort(pick.begin(), pick.end());
        pick.erase(std::unique(pick.begin(), pick.end()), pick.end());
      }
    }
    std::sort(pick.begin(), pick.end());
    for (int64_t c : pick) {
      m.col_idx.push_back(c);
      m.values.push_back(u(rng));
    }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  return m;
}

// Row lengths from runs of (rows, entries per row).
std::vector<int64_t> run_lengths(std::initializer_list<std::pair<int, int64_t>> runs) {
  std::vector<int64_t> out;
  for (auto [rows, entries] : runs) out.insert(out.end(), size_t(rows), entries);
  return out;
}

CsrMatrix<double> empty_matrix(int64_t rows, int64_t cols) {
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(size_t(rows + 1), 0);
  return m;
}

struct Case {
  std::string name;
  CsrMatrix<double> matrix;
};

// Generated, random and edge-case matrices (odd sizes throughout).
const std::vector<Case>& corpus() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> c;
    const uint64_t seed = sparsetc_test::fresh_seed();
    c.push_back({"empty 0x0", empty_matrix(0, 0)});
    c.push_back({"empty 0x7", empty_matrix(0, 7)});
    c.push_back({"empty 9x0", empty_matrix(9, 0)});
    c.push_back({"empty 37x41", empty_matrix(37, 41)});
    c.push_back({"band 1001", sd::generate_band(1001, 3, seed + 1)});
    c.push_back({"poisson2d5 23", sd::generate_poisson2d5(23, seed + 2)});
    c.push_back({"poisson3d7 9", sd::generate_poisson3d7(9, seed + 3)});
    c.push_back({"poisson3d27 7", sd::generate_poisson3d27(7, seed + 4)});
    c.push_back({"rmat 11", sd::generate_rmat(11, 8, 0.57, 0.19, 0.19, seed + 5)});
    c.push_back({"uniform 333x517", sd::generate_uniform(333, 517, 5, seed + 6)});
    c.push_back({"blocks 203", sd::generate_scrambled_blocks(203, 16, 0.2, 0.5, seed + 7)});
    c.push_back({"random 97x131", csr_of(sparsetc_test::random_triplets(97, 131, 0.05, sparsetc_test::fresh_seed()))});
    c.push_back({"random 250x61", csr_of(sparsetc_test::random_triplets(250, 61, 0.2, sparsetc_test::fresh_seed()))});
    c.push_back({"random 1x1000", csr_of(sparsetc_test::random_triplets(1, 1000, 0.3, sparsetc_test::fresh_seed(), false))});
    c.push_back({"random 1000x1", csr_of(sparsetc_test::random_triplets(1000, 1, 0.3, sparsetc_test::fresh_seed()))});
    c.push_back({"dense 19x23", csr_of(sparsetc_test::random_triplets(19, 23, 1.0, sparsetc_test::fresh_seed(), false))});
    // A row of 100k entries between short and empty rows.
    c.push_back({"long row", rows_of(120007, {3, 0, 100000, 0, 0, 57, 1}, sparsetc_test::fresh_seed())});
    // One block row of 17 rows (16 + a partial block row) with thousands of blocks each.
    c.push_back({"wide block row", rows_of(60013, std::vector<int64_t>(17, 3001), sparsetc_test::fresh_seed())});
    // Columns far apart (column blocks beyond one 65536-block window, gaps between windows).
    c.push_back({"far columns", rows_of(5000011, {2, 5, 0, 1, 3, 40, 7, 0, 0, 11, 2, 1, 9, 4, 1, 3, 2, 30},
                                        sparsetc_test::fresh_seed())});
    // Columns of hundreds and of thousands of entries (the transpose's longer lists).
    c.push_back({"dense columns 3000x40", csr_of(sparsetc_test::random_triplets(3000, 40, 0.3, sparsetc_test::fresh_seed()))});
    c.push_back({"dense columns 5000x7", csr_of(sparsetc_test::random_triplets(5000, 7, 0.6, sparsetc_test::fresh_seed()))});
    // Groups of thousands of entries spread over millions of columns (several windows), and
    // dense tall groups.
    c.push_back({"heavy far", rows_of(3000017, {5000, 10, 0, 3000, 1, 0, 0, 0, 0, 2}, sparsetc_test::fresh_seed())});
    c.push_back({"dense 200x60", csr_of(sparsetc_test::random_triplets(200, 60, 1.0, sparsetc_test::fresh_seed(), false))});
    return c;
  }();
  return cases;
}

// Real matrices (SUM of duplicates, as the engine imports files), when present.
std::vector<Case> real_matrices() {
  std::vector<Case> cases;
  for (const char* name : {"1138_bus", "Erdos971", "USpowerGrid", "add32", "Trefethen_2000", "PGPgiantcompo",
                           "adder_dcop_32", "as-22july06", "EX5", "bayer10", "Dubcova1", "airfoil1"}) {
    const std::string path = sparsetc_test::matrix_path(name);
    if (path.empty()) continue;
    cases.push_back({name, sd::coo_to_csr(sd::read_matrix_market(path), SPARSETC_DUPLICATES_SUM)});
  }
  return cases;
}

// ---- the checks, one per conversion

template <typename V>
void check_transpose(const CsrMatrix<V>& A, const std::string& where, const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::DeviceCsc<V> csc = sd::gpu_csr_to_csc(d.view(), ctx);
  {
    const sd::CscMatrix<V> got = csc.to_host(ctx.stream), want = sd::csr_to_csc(A);
    EXPECT_SAME_SCALAR(rows);
    EXPECT_SAME_SCALAR(cols);
    EXPECT_SAME(col_ptr);
    EXPECT_SAME(row_idx);
    EXPECT_SAME(values);
  }
  const sd::DeviceCsr<V> back = sd::gpu_csc_to_csr(csc.view(), ctx);
  const CsrMatrix<V> got = sd::csr_to_host(back.view(), ctx.stream), want = sd::csc_to_csr(sd::csr_to_csc(A));
  EXPECT_SAME_SCALAR(rows);
  EXPECT_SAME_SCALAR(cols);
  EXPECT_SAME(row_ptr);
  EXPECT_SAME(col_idx);
  EXPECT_SAME(values);
}

template <typename V>
void check_bcsr(const CsrMatrix<V>& A, int h, int w, const std::string& where, const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::BcsrMatrix<V> got = sd::gpu_csr_to_bcsr(d.view(), h, w, ctx).to_host(ctx.stream);
  const sd::BcsrMatrix<V> want = sd::csr_to_bcsr(A, h, w);
  EXPECT_SAME_SCALAR(rows);
  EXPECT_SAME_SCALAR(cols);
  EXPECT_SAME_SCALAR(block_height);
  EXPECT_SAME_SCALAR(block_width);
  EXPECT_SAME(block_row_ptr);
  EXPECT_SAME(block_col);
  EXPECT_SAME(values);
}

// Each of the bitmap tiles' ways (the chosen one and every one forced) against the host's.
template <typename V>
void check_bitmap(const CsrMatrix<V>& A, const std::string& matrix, const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::BitmapTiles<V> want = sd::csr_to_bitmap_tiles(A);
  for (auto [way, name] : {std::pair{sd::BitmapWay::kChosen, " (chosen)"}, std::pair{sd::BitmapWay::kQuads, " (quads)"},
                           std::pair{sd::BitmapWay::kTileRows, " (tile rows)"},
                           std::pair{sd::BitmapWay::kTasks, " (tasks)"}}) {
    const std::string where = matrix + name;
    const sd::BitmapTiles<V> got = sd::gpu_csr_to_bitmap_tiles(d.view(), ctx, way).to_host(ctx.stream);
    EXPECT_SAME_SCALAR(rows);
    EXPECT_SAME_SCALAR(cols);
    EXPECT_SAME(tile_row_ptr);
    EXPECT_SAME(tile_row);
    EXPECT_SAME(tile_col);
    EXPECT_SAME(bitmap);
    EXPECT_SAME(element_offset);
    EXPECT_SAME(values);
  }
}

template <typename V>
void check_dcsr(const CsrMatrix<V>& A, const std::string& where, const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::DcsrMatrix<V> got = sd::gpu_csr_to_dcsr(d.view(), ctx).to_host(ctx.stream);
  const sd::DcsrMatrix<V> want = sd::csr_to_dcsr(A);
  EXPECT_SAME_SCALAR(rows);
  EXPECT_SAME_SCALAR(cols);
  EXPECT_SAME(row_idx);
  EXPECT_SAME(row_ptr);
  EXPECT_SAME(col_idx);
  EXPECT_SAME(values);
}

template <typename V>
void check_tiled_dcsr(const CsrMatrix<V>& A, int64_t strip_width, const std::string& where, const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::TiledDcsr<V> got = sd::gpu_csr_to_tiled_dcsr(d.view(), strip_width, ctx).to_host(ctx.stream);
  const sd::TiledDcsr<V> want = sd::csr_to_tiled_dcsr(A, strip_width);
  EXPECT_SAME_SCALAR(rows);
  EXPECT_SAME_SCALAR(cols);
  EXPECT_SAME_SCALAR(strip_width);
  EXPECT_SAME(strip_ptr);
  EXPECT_SAME(row_idx);
  EXPECT_SAME(row_ptr);
  EXPECT_SAME(col_idx);
  EXPECT_SAME(values);
}

template <typename V>
void check_vbr(const CsrMatrix<V>& A, const std::vector<int64_t>& groups, int64_t width, const std::string& where,
               const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::VbrMatrix<V> got = sd::gpu_csr_to_vbr(d.view(), groups, width, ctx).to_host(ctx.stream);
  const sd::VbrMatrix<V> want = sd::csr_to_vbr(A, groups, width);
  EXPECT_SAME_SCALAR(rows);
  EXPECT_SAME_SCALAR(cols);
  EXPECT_SAME_SCALAR(block_width);
  EXPECT_SAME(group_ptr);
  EXPECT_SAME(block_ptr);
  EXPECT_SAME(block_col);
  EXPECT_SAME(value_offset);
  EXPECT_SAME(values);
}

// A call's status and message: (SUCCESS, "") or what it threw.
using Outcome = std::pair<int, std::string>;
Outcome status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sd::Error& e) {
    return {int(e.status()), e.what()};
  }
  return {int(SPARSETC_STATUS_SUCCESS), std::string()};
}

template <typename V>
void check_permute(const CsrMatrix<V>& A, const std::vector<int64_t>& perm, const std::string& where,
                   const GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::DeviceCsr<V> p = sd::gpu_permute_rows(d.view(), perm, ctx);
  const CsrMatrix<V> got = sd::csr_to_host(p.view(), ctx.stream), want = sd::permute_rows(A, perm);
  EXPECT_SAME_SCALAR(rows);
  EXPECT_SAME_SCALAR(cols);
  EXPECT_SAME(row_ptr);
  EXPECT_SAME(col_idx);
  EXPECT_SAME(values);
}

// Row partitions for VBR: single rows, one group, fixed 5, random sizes 1..20 and 30..100.
std::vector<std::vector<int64_t>> partitions(int64_t rows, uint64_t seed) {
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> ones(size_t(rows + 1));
  std::iota(ones.begin(), ones.end(), int64_t(0));
  out.push_back(ones);
  out.push_back(rows > 0 ? std::vector<int64_t>{0, rows} : std::vector<int64_t>{0});
  std::vector<int64_t> fives{0}, random{0};
  while (fives.back() < rows) fives.push_back(std::min(rows, fives.back() + 5));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> size(1, 20);
  while (random.back() < rows) random.push_back(std::min(rows, random.back() + size(rng)));
  out.push_back(fives);
  out.push_back(random);
  std::vector<int64_t> tall{0};
  std::uniform_int_distribution<int64_t> tall_size(30, 100);
  while (tall.back() < rows) tall.push_back(std::min(rows, tall.back() + tall_size(rng)));
  out.push_back(tall);
  return out;
}

// Padded formats can be far larger than the matrix: test sizes stay under this many values.
constexpr double kValueBudget = 3e7;

// An upper bound of the VBR value count: every entry in a block of its own.
double vbr_bound(const CsrMatrix<double>& A, const std::vector<int64_t>& groups, int64_t width) {
  double bound = 0;
  for (size_t g = 0; g + 1 < groups.size(); ++g)
    bound += double(A.row_ptr[size_t(groups[g + 1])] - A.row_ptr[size_t(groups[g])]) * double(groups[g + 1] - groups[g]) *
             double(width);
  return bound;
}

// All conversions of one matrix in both value types.
template <typename V>
void check_all(const Case& c, const GpuContext& ctx) {
  const CsrMatrix<V> A = sd::cast_values<V>(c.matrix);
  const std::string type = sizeof(V) == 4 ? " (float)" : " (double)";
  check_transpose(A, c.name + type, ctx);
  for (auto [h, w] : {std::pair{16, 8}, std::pair{16, 16}, std::pair{8, 8}, std::pair{3, 5}, std::pair{1, 1},
                        std::pair{32, 32}})
    if (double(A.nnz()) * h * w <= kValueBudget)
      check_bcsr(A, h, w, c.name + type + " bcsr " + std::to_string(h) + "x" + std::to_string(w), ctx);
  check_bitmap(A, c.name + type + " bitmap", ctx);
  check_dcsr(A, c.name + type + " dcsr", ctx);
  for (int64_t sw : {int64_t(1), int64_t(3), int64_t(8), int64_t(64), int64_t(1000), A.cols + 5})
    check_tiled_dcsr(A, sw, c.name + type + " tiled dcsr " + std::to_string(sw), ctx);
  const auto parts = partitions(A.rows, sparsetc_test::fresh_seed());
  for (size_t p = 0; p < parts.size(); ++p)
    for (int64_t w : {int64_t(1), int64_t(4), int64_t(7), int64_t(32)})
      if (vbr_bound(c.matrix, parts[p], w) <= kValueBudget)
        check_vbr(A, parts[p], w, c.name + type + " vbr partition " + std::to_string(p) + " width " + std::to_string(w),
                ctx);
  std::vector<int64_t> perm(size_t(A.rows));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  check_permute(A, perm, c.name + type + " identity permutation", ctx);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(sparsetc_test::fresh_seed()));
  check_permute(A, perm, c.name + type + " random permutation", ctx);
}

TEST(GpuConvert, AllConversionsMatchTheHostOnGeneratedAndRandomMatrices) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  for (const Case& c : corpus()) {
    check_all<double>(c, s.context());
    check_all<float>(c, s.context());
  }
}

TEST(GpuConvert, AllConversionsMatchTheHostOnRealMatrices) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<Case> cases = real_matrices();
  if (cases.empty()) GTEST_SKIP() << "no matrices in " << sparsetc_test::matrix_dir();
  Stream s;
  for (const Case& c : cases) {
    check_all<double>(c, s.context());
    check_all<float>(c, s.context());
  }
}

// rows x (run (rows + 1)): row r holds columns [run r, run (r + 2)), two runs of `run` entries
// in strips of `run`; with dense_last_row, one more row holds every column.
CsrMatrix<double> staircase(int64_t rows, int64_t run, bool dense_last_row, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  CsrMatrix<double> m;
  m.rows = rows + (dense_last_row ? 1 : 0);
  m.cols = run * (rows + 1);
  for (int64_t r = 0; r < m.rows; ++r) {
    const bool dense = r == rows;
    for (int64_t c = dense ? 0 : run * r; c < (dense ? m.cols : run * (r + 2)); ++c) {
      m.col_idx.push_back(c);
      m.values.push_back(u(rng));
    }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  return m;
}

// Each of the tiled DCSR's ways on small inputs (also run under compute-sanitizer): the entry
// sort (segments of one or two entries: the band in strips of 1 and 7, R-MAT with its empty rows,
// the long row in 120007 strips), the strip windows (the band in strips of 64: rows of one strip
// and rows walked) and the segment gather, its segments listed by the rows (the staircase of runs
// of 10, whose tiles span 257 strips) or, with rows too long to walk (200 entries in two strips, a
// dense last row), selected from the entries. TiledDcsrStripWindowsAndTheirLimits checks the ways.
TEST(GpuConvert, TiledDcsrEveryWayOnSmallInputs) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  auto named = [](const std::string& name) -> const Case& {
    const std::vector<Case>& all = corpus();
    const auto it = std::find_if(all.begin(), all.end(), [&](const Case& c) { return c.name == name; });
    EXPECT_NE(it, all.end()) << name;
    return it != all.end() ? *it : all.front();
  };
  const Case& band = named("band 1001");
  const Case& rmat = named("rmat 11");
  const Case& long_row = named("long row");
  ASSERT_EQ(rmat.matrix.cols, 2048);
  ASSERT_EQ(long_row.matrix.cols, 120007);
  const CsrMatrix<double> stairs = staircase(3001, 10, false, sparsetc_test::fresh_seed());
  const CsrMatrix<double> tall_stairs = staircase(301, 100, false, sparsetc_test::fresh_seed());
  const CsrMatrix<double> arrow = staircase(301, 100, true, sparsetc_test::fresh_seed());
  for (int64_t sw : {int64_t(1), int64_t(7), int64_t(64)}) {
    check_tiled_dcsr(band.matrix, sw, band.name + " tiled dcsr " + std::to_string(sw), s.context());
    check_tiled_dcsr(sd::cast_values<float>(band.matrix), sw, band.name + " (float) tiled dcsr " + std::to_string(sw),
                     s.context());
    check_tiled_dcsr(rmat.matrix, sw, rmat.name + " tiled dcsr " + std::to_string(sw), s.context());
  }
  check_tiled_dcsr(long_row.matrix, 1, long_row.name + " tiled dcsr 1", s.context());
  check_tiled_dcsr(stairs, 10, "staircase tiled dcsr 10", s.context());
  check_tiled_dcsr(sd::cast_values<float>(stairs), 10, "staircase (float) tiled dcsr 10", s.context());
  check_tiled_dcsr(tall_stairs, 100, "staircase of 100 tiled dcsr 100", s.context());
  check_tiled_dcsr(arrow, 100, "arrow tiled dcsr 100", s.context());
  check_tiled_dcsr(sd::cast_values<float>(arrow), 100, "arrow (float) tiled dcsr 100", s.context());
}

// rows x cols, each row `runs` runs of `run` consecutive columns, run k starting at column
// first(r, k); a row with no runs where empty(r).
CsrMatrix<double> runs_of(int64_t rows, int64_t cols, int64_t runs, int64_t run,
                          const std::function<int64_t(int64_t, int64_t)>& first,
                          const std::function<bool(int64_t)>& empty, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; !empty(r) && k < runs; ++k)
      for (int64_t c = first(r, k); c < first(r, k) + run; ++c) {
        m.col_idx.push_back(c);
        m.values.push_back(u(rng));
      }
    m.row_ptr.push_back(int64_t(m.col_idx.size()));
  }
  return m;
}

template <typename V>
void check_tiled_way(const CsrMatrix<V>& A, int64_t strip_width, sd::gpuconv::TiledWay expected,
                     const std::string& where, const GpuContext& ctx, bool strip_windows = true) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  sd::gpuconv::TiledOptions options;
  sd::gpuconv::TiledWay way{};
  options.way = &way;
  options.strip_windows = strip_windows;
  const sd::TiledDcsr<V> got = sd::gpuconv::csr_to_tiled_dcsr(d.view(), strip_width, ctx, options).to_host(ctx.stream);
  const sd::TiledDcsr<V> want = sd::csr_to_tiled_dcsr(A, strip_width);
  EXPECT_EQ(int(way), int(expected)) << where;
  EXPECT_SAME(strip_ptr);
  EXPECT_SAME(row_idx);
  EXPECT_SAME(row_ptr);
  EXPECT_SAME(col_idx);
  EXPECT_SAME(values);
}

// The strip windows (strip_windows.cuh) and each limit that sends a matrix to the segment sort
// instead (also run under compute-sanitizer): a tile's window of 31 strips (34 does not fit), its
// 1024 segments (1280 do not), its 2^18 entries (281,600 do not), a long row across strips; each
// copy width (segments of 2.8, 6, 13 and 20 or 1000 entries); empty rows, empty tiles, a last
// partial tile, a rectangular matrix; both value types.
TEST(GpuConvert, TiledDcsrStripWindowsAndTheirLimits) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  using sd::gpuconv::TiledWay;
  const GpuContext& ctx = s.context();
  const uint64_t seed = sparsetc_test::fresh_seed();
  const auto never = [](int64_t) { return false; };
  // Staircase: row r holds columns [10 r, 10 r + 20); tiles of 256 rows span 2560 + 10 columns.
  const CsrMatrix<double> stairs = runs_of(3001, 30020, 1, 20, [](int64_t r, int64_t) { return 10 * r; }, never, seed);
  check_tiled_way(stairs, 160, TiledWay::kStripWindows, "staircase, strips of 160 (18 a tile)", ctx);
  check_tiled_way(sd::cast_values<float>(stairs), 160, TiledWay::kStripWindows, "staircase (float), strips of 160",
                  ctx);
  check_tiled_way(stairs, 86, TiledWay::kStripWindows, "staircase, strips of 86 (31 a tile)", ctx);
  check_tiled_way(stairs, 80, TiledWay::kSegmentSort, "staircase, strips of 80 (34 a tile)", ctx);
  check_tiled_way(stairs, 160, TiledWay::kSegmentSort, "staircase, strip windows off", ctx, false);
  // Four or five runs of 6 in strips of 10 (every row in the same 31 strips): 1024 or 1280 segments a tile.
  const auto spread = [](int64_t r, int64_t k) { return 60 * k + 10 * (r % 6); };
  const CsrMatrix<double> four = runs_of(700, 310, 4, 6, spread, never, seed + 1);
  const CsrMatrix<double> five = runs_of(700, 310, 5, 6, spread, never, seed + 2);
  check_tiled_way(four, 10, TiledWay::kStripWindows, "four runs of 6 (1024 segments a tile)", ctx);
  check_tiled_way(sd::cast_values<float>(four), 10, TiledWay::kStripWindows, "four runs of 6 (float)", ctx);
  check_tiled_way(five, 10, TiledWay::kSegmentSort, "five runs of 6 (1280 segments a tile)", ctx);
  // Rows of 1000 or 1100 entries in one strip: 256,000 or 281,600 entries a tile.
  const auto diagonal = [](int64_t r, int64_t) { return r; };
  const CsrMatrix<double> wide = runs_of(300, 1400, 1, 1000, diagonal, never, seed + 3);
  const CsrMatrix<double> wider = runs_of(300, 1400, 1, 1100, diagonal, never, seed + 4);
  check_tiled_way(wide, 4096, TiledWay::kStripWindows, "rows of 1000 in one strip", ctx);
  check_tiled_way(wider, 4096, TiledWay::kSegmentSort, "rows of 1100 in one strip", ctx);
  // Segments of 13 (the band): rows of one strip and rows walked across two; empty rows and two
  // empty tiles (rows 256-767); the last tile partial.
  const CsrMatrix<double> band = runs_of(
      5003, 5015, 1, 13, diagonal, [](int64_t r) { return (r >= 256 && r < 768) || r % 7 == 3; }, seed + 5);
  check_tiled_way(band, 64, TiledWay::kStripWindows, "band with empty rows and tiles, strips of 64", ctx);
  check_tiled_way(sd::cast_values<float>(band), 64, TiledWay::kStripWindows, "band (float), strips of 64", ctx);
  check_tiled_way(band, 1 << 20, TiledWay::kStripWindows, "band, one strip", ctx);
  // Rectangular: 2000 rows over 70000 columns, rows 35 columns apart, two runs of 9 each.
  const CsrMatrix<double> rect =
      runs_of(2000, 70000, 2, 9, [](int64_t r, int64_t k) { return 35 * r + 20 * k; }, never, seed + 6);
  check_tiled_way(rect, 500, TiledWay::kStripWindows, "2000 x 70000, strips of 500", ctx);
  // A long row across strips (a dense last row of 30020 entries).
  CsrMatrix<double> arrow = stairs;
  arrow.rows += 1;
  for (int64_t c = 0; c < arrow.cols; ++c) {
    arrow.col_idx.push_back(c);
    arrow.values.push_back(0.5 + double(c));
  }
  arrow.row_ptr.push_back(int64_t(arrow.col_idx.size()));
  check_tiled_way(arrow, 160, TiledWay::kSegmentSort, "staircase with a dense last row", ctx);
  // Stencils.
  check_tiled_way(sd::generate_poisson3d27(23, seed + 7), 1000, TiledWay::kStripWindows, "poisson3d27 23", ctx);
  check_tiled_way(sd::generate_poisson3d7(23, seed + 8), 8192, TiledWay::kStripWindows, "poisson3d7 23", ctx);
  // Short segments: in windows (the 5-point stencil in strips of 256, 2.8 entries a segment), or
  // not (the band in strips of 3: 90 strips a tile) the entry sort.
  const CsrMatrix<double> five_point = sd::generate_poisson2d5(101, seed + 9);
  check_tiled_way(five_point, 256, TiledWay::kStripWindows, "poisson2d5 101, strips of 256", ctx);
  check_tiled_way(sd::cast_values<float>(five_point), 256, TiledWay::kStripWindows, "poisson2d5 101 (float)", ctx);
  check_tiled_way(band, 3, TiledWay::kEntrySort, "band, strips of 3", ctx);
}

// BCSR's three kinds of block rows side by side in one matrix (also run under compute-sanitizer):
// compact (one warp), staged (one CTA: 257-1024 entries or 33-256 blocks, in one or several
// rounds of the stage, by 16-byte or by scalar copies) and large (tasks: 1025 entries, or more
// than 256 blocks, up to thousands of tasks a block row), including the last, partial block row.
// Every allocation is poisoned, so an unwritten block value or block column cannot pass.
class GpuConvertPoisoned : public sparsetc_test::PoisonedGpuTest {};

TEST_F(GpuConvertPoisoned, BcsrBlockRowsOfEveryKind) {
  // 2048 columns: at most 256 blocks of 8 columns, so the block rows are sized by their entries.
  const CsrMatrix<double> by_entries = rows_of(
      2048, run_lengths({{16, 1}, {16, 64}, {15, 64}, {1, 65}, {16, 20}, {16, 0}, {16, 3}, {7, 40}}),
      sparsetc_test::fresh_seed());
  // 5000 columns: a block row of 640 entries spans about 400 blocks of 8 (large), one of 48 about 47.
  const CsrMatrix<double> by_blocks =
      rows_of(5000, run_lengths({{16, 40}, {16, 3}, {8, 6}, {8, 0}, {5, 9}}), sparsetc_test::fresh_seed());
  // 2000003 columns: block rows of 257-512 and of 513-1024 entries spread over several 65536-block
  // windows of find_block_columns' second pass (its register paths: mask rounds, then the window).
  const CsrMatrix<double> far = rows_of(
      2000003, run_lengths({{16, 25}, {16, 2}, {8, 40}, {16, 32}, {3, 90}, {16, 50}, {12, 80}, {16, 33}}),
      sparsetc_test::fresh_seed());
  // Block rows of 257-512 entries within few blocks (find_block_columns' second pass in the
  // registers, one round of masks or several): a band of 25 entries a row (400 per 16-row block
  // row), and 256 columns (at most 32 blocks of 8) with block rows of 512 and 528 entries (16 rows)
  // or 256 and 264 (8 rows).
  const CsrMatrix<double> long_band = sd::generate_band(203, 12, sparsetc_test::fresh_seed());
  const CsrMatrix<double> near_512 =
      rows_of(256, run_lengths({{16, 32}, {16, 33}, {15, 17}, {16, 2}, {3, 40}}), sparsetc_test::fresh_seed());
  // Hubs: block rows of hundreds to thousands of tasks, one dense row of 20000 entries beside
  // sparse and empty ones (most of its tasks' slices empty in those), as R-MAT's hubs.
  const CsrMatrix<double> hubs = rows_of(
      50003, run_lengths({{16, 300}, {1, 20000}, {6, 3}, {2, 0}, {7, 40}, {1, 9000}, {15, 0}, {3, 700}}),
      sparsetc_test::fresh_seed());
  for (const auto& [name, A] : {std::pair{"by entries", &by_entries}, std::pair{"by blocks", &by_blocks},
                                std::pair{"far", &far}, std::pair{"long band", &long_band},
                                std::pair{"near 512", &near_512}, std::pair{"hubs", &hubs}}) {
    for (auto [h, w] : {std::pair{16, 8}, std::pair{16, 16}, std::pair{8, 8}, std::pair{3, 5}, std::pair{32, 32}}) {
      const std::string shape = " bcsr " + std::to_string(h) + "x" + std::to_string(w);
      check_bcsr(*A, h, w, std::string(name) + shape, context());
      check_bcsr(sd::cast_values<float>(*A), h, w, std::string(name) + " (float)" + shape, context());
    }
  }
}

// The bitmap tiles' ways (check_bitmap: quads of four tile rows a warp where every tile row is
// compact, a warp a tile row and tasks for the wide ones) on quads of exactly 1024 entries and 128
// tiles (four tile rows of 256 entries and 32 tiles), beside tile rows that are not compact (257+
// entries, or 33+ tiles), empty tile rows, the last quad and tile row partial; on poisoned
// allocations (also run under compute-sanitizer).
TEST_F(GpuConvertPoisoned, BitmapTilesQuadsBesideOtherTileRows) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  // 256 columns: at most 32 tiles a tile row, so the tile rows are sized by their entries. Tile
  // rows 0-3 and 8-11 full (the quads' limits), 6 of 256 entries in one long row and seven short.
  const CsrMatrix<double> full_quads = rows_of(
      256, run_lengths({{32, 32}, {8, 3}, {8, 0}, {1, 249}, {7, 1}, {8, 2}, {32, 32}, {8, 20}, {5, 9}}), seed);
  const CsrMatrix<double> by_entries =
      rows_of(256, run_lengths({{8, 32}, {8, 3}, {8, 0}, {8, 5}, {8, 33}, {8, 2}, {8, 1}, {8, 4}, {3, 7}, {5, 0},
                                {8, 20}, {1, 256}, {7, 1}, {8, 6}, {5, 9}}),
              seed + 1);
  // 5000 columns: 40 entries of a tile row spread over about 40 tiles (not compact).
  const CsrMatrix<double> by_tiles =
      rows_of(5000, run_lengths({{16, 5}, {8, 40}, {8, 3}, {4, 0}, {4, 2}, {5, 9}}), seed + 2);
  const CsrMatrix<double> band = sd::generate_band(1003, 6, seed + 3);
  const CsrMatrix<double> stencil = sd::generate_poisson3d27(11, seed + 4);  // 216 entries, 27 tiles a tile row
  for (const auto& [name, A] : {std::pair{"full quads", &full_quads}, std::pair{"by entries", &by_entries},
                                std::pair{"by tiles", &by_tiles}, std::pair{"band", &band},
                                std::pair{"poisson3d27 11", &stencil}}) {
    check_bitmap(*A, std::string(name) + " bitmap", context());
    check_bitmap(sd::cast_values<float>(*A), std::string(name) + " (float) bitmap", context());
  }
}

// The bitmap tiles' sorting kernel takes the tile rows that are not compact (every tile row, where
// most are not) of at most 256 entries (128 keys for at most 128 entries, else 256) whose tiles
// span fewer than 2^18 columns of tiles; the others go to the tasks. Scattered tile rows of
// exactly 128, 136, 256 and 264 entries, one row of 200, beside compact and empty ones and a
// partial last one; tiles shared by four rows each; spans of 2^18 - 1 (sorted) and 2^18 and
// 2^18 + 1 (tasks), also of a compact tile row among sorted ones; a tile row whose last key is
// 0xffffffff (span 2^18 - 1, bit 63, entry 255), the padding's value; scattered tile rows among
// mostly compact ones. Every allocation is poisoned (also run under compute-sanitizer).
TEST_F(GpuConvertPoisoned, BitmapTilesSortedInTheWarp) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const auto never = [](int64_t) { return false; };
  const int64_t span = sd::gpuconv::kSortedSpan;
  const CsrMatrix<double> scattered =
      rows_of(1000003, run_lengths({{8, 12}, {8, 16}, {8, 17}, {8, 32}, {8, 33}, {1, 200}, {7, 0}, {8, 0}, {8, 2},
                                    {8, 1}, {1, 129}, {7, 0}, {3, 40}}),
              seed);
  // Rows 2k and 2k + 1 of a tile row take tiles 2j and 2j + 1 of 40: four entries a tile.
  const CsrMatrix<double> shared = runs_of(
      203, 100003, 20, 1, [](int64_t r, int64_t k) { return 2400 * k + 8 * (r % 2) + r % 8; }, never, seed + 1);
  // Five tiles a row, the last row's fifth far off: 2^18 - 1, 2^18 and 2^18 + 1 tiles after the
  // first; then a compact tile row (two tiles) whose second tile is 2^18 + 1 after its first.
  const CsrMatrix<double> spans = runs_of(
      32, 8 * (span + 3), 5, 1,
      [span](int64_t r, int64_t k) {
        const int64_t rr = r % 8;
        if (r >= 24) return k < 4 ? k : 8 * (span + 1) + rr;
        return k == 4 && rr == 7 ? 8 * (span - 1 + r / 8) + rr : 8 * (5 * rr + k) + rr;
      },
      never, seed + 2);
  // Mostly compact tile rows (the compact kernel, then the sort of the others), two scattered.
  const CsrMatrix<double> mostly_compact =
      rows_of(1000003, run_lengths({{8, 2}, {8, 3}, {8, 1}, {8, 12}, {8, 2}, {8, 0}, {8, 4}, {3, 40}}), seed + 4);
  const CsrMatrix<double> padding_key = runs_of(
      8, 8 * span, 32, 1,
      [span](int64_t r, int64_t k) { return r == 7 && k == 31 ? 8 * (span - 1) + 7 : 8 * (32 * r + k) + k % 8; },
      never, seed + 3);
  for (const auto& [name, A] : {std::pair{"scattered", &scattered}, std::pair{"shared tiles", &shared},
                                std::pair{"spans", &spans}, std::pair{"padding key", &padding_key},
                                std::pair{"mostly compact", &mostly_compact}}) {
    check_bitmap(*A, std::string(name) + " bitmap", context());
    check_bitmap(sd::cast_values<float>(*A), std::string(name) + " (float) bitmap", context());
  }
}

// find_block_columns' first pass sorts the groups of at most 256 entries whose blocks span 8192 or
// more (a bitonic network over the warp: 128 keys for at most 128 entries, else 256): groups of
// exactly 128, 136 and 256 entries whose rows share most blocks (many duplicates), groups of
// distinct blocks, random rows beside empty and long ones, and spans of 8191 blocks (the window)
// and 8192 (the sort); the last group partial. Every allocation is poisoned (also run under
// compute-sanitizer).
TEST_F(GpuConvertPoisoned, BlockColumnsSortedWhereSpreadWide) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const auto never = [](int64_t) { return false; };
  const auto some_empty = [](int64_t r) { return r % 11 == 4; };
  // 61000 and 30000 are multiples of 8: at 8 columns a block, every row of a group shares its blocks.
  const CsrMatrix<double> shared16 =
      runs_of(203, 1000003, 16, 1, [](int64_t r, int64_t k) { return 61000 * k + r % 5; }, never, seed);
  const CsrMatrix<double> shared17 =
      runs_of(203, 1000003, 17, 1, [](int64_t r, int64_t k) { return 58000 * k + r % 7; }, some_empty, seed + 1);
  const CsrMatrix<double> shared32 =
      runs_of(203, 1000003, 32, 1, [](int64_t r, int64_t k) { return 30000 * k + r % 8; }, never, seed + 2);
  const CsrMatrix<double> distinct = runs_of(
      203, 1000003, 12, 1, [](int64_t r, int64_t k) { return 80000 * k + (977 * r + 131 * k) % 70000; }, never,
      seed + 3);
  const CsrMatrix<double> random =
      rows_of(1000003, run_lengths({{8, 16}, {8, 1}, {1, 200}, {7, 0}, {8, 32}, {1, 256}, {7, 0}, {5, 3}}), seed + 4);
  // Two entries a row, 8191 or 8192 blocks of 8 apart.
  const CsrMatrix<double> span_8191 =
      runs_of(37, 70000, 2, 1, [](int64_t r, int64_t k) { return k * 65528 + r % 8; }, never, seed + 5);
  const CsrMatrix<double> span_8192 =
      runs_of(37, 70000, 2, 1, [](int64_t r, int64_t k) { return k * 65536 + r % 8; }, never, seed + 6);
  for (const auto& [name, A] : {std::pair{"shared 16", &shared16}, std::pair{"shared 17", &shared17},
                                std::pair{"shared 32", &shared32}, std::pair{"distinct", &distinct},
                                std::pair{"random", &random}, std::pair{"span 8191", &span_8191},
                                std::pair{"span 8192", &span_8192}}) {
    for (auto [h, w] : {std::pair{8, 8}, std::pair{16, 8}, std::pair{4, 16}, std::pair{3, 5}, std::pair{8, 32}}) {
      const std::string shape = " bcsr " + std::to_string(h) + "x" + std::to_string(w);
      check_bcsr(*A, h, w, std::string(name) + shape, context());
    }
    check_bcsr(sd::cast_values<float>(*A), 8, 8, std::string(name) + " (float) bcsr 8x8", context());
    check_bitmap(*A, std::string(name) + " bitmap", context());
  }
}

// VBR's ways on poisoned allocations (also run under compute-sanitizer): every group within the
// staged limits, mostly compact (a band in groups of 1 to 32 rows: a warp per compact group, a CTA
// per other group, by 16-byte or scalar copies) or not (the 27-point stencil: a CTA per group),
// and not every group within them (a group of 33 rows; a group of 1280 entries): memset and
// scatter.
TEST_F(GpuConvertPoisoned, VbrEveryWay) {
  const CsrMatrix<double> stencil = sd::generate_poisson3d27(7, sparsetc_test::fresh_seed());
  const CsrMatrix<double> band = sd::generate_band(3001, 6, sparsetc_test::fresh_seed());
  std::mt19937_64 rng(sparsetc_test::fresh_seed());
  auto partition = [&](int64_t rows, int64_t lo, int64_t hi) {
    std::vector<int64_t> p{0};
    std::uniform_int_distribution<int64_t> size(lo, hi);
    while (p.back() < rows) p.push_back(std::min(rows, p.back() + size(rng)));
    return p;
  };
  const std::vector<int64_t> within = partition(stencil.rows, 1, 32), tall = {0, 33, stencil.rows};
  const CsrMatrix<double> heavy = rows_of(2048, std::vector<int64_t>(40, 64), sparsetc_test::fresh_seed());
  const std::vector<int64_t> heavy_groups = {0, 20, 40};
  const std::vector<int64_t> band_groups = partition(band.rows, 1, 32), wide = partition(stencil.rows, 20, 32);
  for (int64_t w : {int64_t(1), int64_t(7), int64_t(16)}) {
    const std::string width = " width " + std::to_string(w);
    check_vbr(band, band_groups, w, "band, groups of 1-32" + width, context());
    check_vbr(sd::cast_values<float>(band), band_groups, w, "band (float), groups of 1-32" + width, context());
    check_vbr(stencil, within, w, "stencil, groups of 1-32" + width, context());
    check_vbr(stencil, wide, w, "stencil, groups of 20-32" + width, context());
    check_vbr(sd::cast_values<float>(stencil), within, w, "stencil (float), groups of 1-32" + width, context());
    check_vbr(stencil, tall, w, "stencil, a group of 33" + width, context());
    check_vbr(heavy, heavy_groups, w, "groups of 1280 entries" + width, context());
  }
}

// The row permutation on poisoned allocations (also run under compute-sanitizer): 35 CTAs of its
// scan (the look-back crosses windows of 32), rows filling one to several tiles of the copy, empty
// rows, rows of hundreds to thousands of entries side by side (in their own order and shuffled);
// and bad permutations whose lengths add up to more entries than there are (a long row repeated)
// or fewer, reported like the host's while the copy stays within its buffers.
TEST_F(GpuConvertPoisoned, PermutationsOverManyScanTiles) {
  std::vector<int64_t> lengths(70001, 1);
  for (size_t i = 0; i < lengths.size(); i += 7) lengths[i] = 0;
  for (size_t i = 3; i < lengths.size(); i += 101) lengths[i] = 37;
  // Rows of 700, 1024 and 1025 entries among the short ones: tiles of the copy (2048 steps) that
  // one or two rows fill.
  for (size_t i = 5; i < lengths.size(); i += 997) lengths[i] = 1024;
  for (size_t i = 6; i < lengths.size(); i += 991) lengths[i] = 1025;
  for (size_t i = 9; i < 3000; i += 13) lengths[i] = 700;
  const int64_t long_row = 40000;
  lengths[size_t(long_row)] = 9000;  // about 4.4 tiles of the copy's 2048 steps
  const CsrMatrix<double> A = rows_of(12000, lengths, sparsetc_test::fresh_seed());
  std::vector<int64_t> perm(size_t(A.rows));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(sparsetc_test::fresh_seed()));
  check_permute(A, perm, "shuffled", context());
  check_permute(sd::cast_values<float>(A), perm, "shuffled (float)", context());
  std::vector<int64_t> reversed(perm.size());
  for (size_t i = 0; i < reversed.size(); ++i) reversed[i] = int64_t(reversed.size() - 1 - i);
  check_permute(A, reversed, "reversed", context());

  // 1200 rows of 0 to 3000 entries: most of the copy's tiles (2048 steps) within one to three rows.
  const std::vector<int64_t> heavy_pattern = {600, 1024, 0, 1000, 1025, 1, 3000, 512, 1024, 700};
  std::vector<int64_t> heavy_lengths(1200);
  for (size_t i = 0; i < heavy_lengths.size(); ++i) heavy_lengths[i] = heavy_pattern[(i * 7 + i / 10) % 10];
  const CsrMatrix<double> H = rows_of(12000, heavy_lengths, sparsetc_test::fresh_seed());
  std::vector<int64_t> identity(size_t(H.rows));
  std::iota(identity.begin(), identity.end(), int64_t(0));
  check_permute(H, identity, "heavy tiles, identity", context());
  std::vector<int64_t> heavy_perm = identity;
  std::shuffle(heavy_perm.begin(), heavy_perm.end(), std::mt19937_64(sparsetc_test::fresh_seed()));
  check_permute(H, heavy_perm, "heavy tiles, shuffled", context());
  check_permute(sd::cast_values<float>(H), heavy_perm, "heavy tiles, shuffled (float)", context());

  const sd::DeviceCsr<double> d = sd::csr_to_device(A, context());
  std::vector<std::pair<std::string, std::vector<int64_t>>> bad;
  bad.push_back({"the long row repeated", perm});
  for (size_t i = perm.size() / 2; i < perm.size(); i += 3) bad.back().second[i] = long_row;
  bad.push_back({"an empty row repeated", perm});
  bad.back().second[9] = 7;  // row 7 is empty
  bad.back().second[perm.size() - 2] = 7;
  bad.push_back({"out of range late", perm});
  bad.back().second[perm.size() - 5] = A.rows;
  bad.push_back({"negative", perm});
  bad.back().second[4097] = -3;
  for (const auto& [name, q] : bad) {
    const Outcome host = status_of([&] { sd::permute_rows(A, q); });
    const Outcome gpu = status_of([&] { sd::gpu_permute_rows(d.view(), q, context()); });
    EXPECT_EQ(host.first, int(SPARSETC_STATUS_INVALID_VALUE)) << name;
    EXPECT_EQ(gpu.first, host.first) << name;
    EXPECT_EQ(gpu.second, host.second) << name;
  }
}

TEST(GpuConvert, DefaultStreamWorksToo) {
  SKIP_WITHOUT_DEVICE();
  const GpuContext ctx{nullptr, nullptr};
  const Case& c = corpus()[8];  // rmat
  check_transpose(c.matrix, c.name, ctx);
  check_bcsr(c.matrix, 16, 8, c.name, ctx);
  check_bitmap(c.matrix, c.name, ctx);
}

TEST(GpuConvert, InvalidArgumentsAreReportedLikeTheHost) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  const CsrMatrix<double> A = sd::generate_band(50, 2, 1);
  const sd::DeviceCsr<double> d = sd::csr_to_device(A, ctx);
  // Permutations: out of range, repeated (the same messages as permute_rows).
  for (const std::vector<int64_t>& perm : {std::vector<int64_t>(50, 0), std::vector<int64_t>(49, 0)}) {
    std::vector<int64_t> p = perm;
    if (p.size() == 50) std::iota(p.begin(), p.end(), int64_t(0));
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<int64_t> q = p;
      if (q.size() == 50 && variant == 1) q[7] = 50;
      if (q.size() == 50 && variant == 2) q[31] = q[12];
      const auto host = status_of([&] { sd::permute_rows(A, q); });
      const auto gpu = status_of([&] { sd::gpu_permute_rows(d.view(), q, ctx); });
      EXPECT_EQ(gpu.first, host.first) << "variant " << variant << " size " << q.size();
      EXPECT_EQ(gpu.second, host.second);
    }
  }
  const int invalid = SPARSETC_STATUS_INVALID_VALUE;
  EXPECT_EQ(status_of([&] { sd::gpu_csr_to_vbr(d.view(), {0, 10, 10, 50}, 4, ctx); }).first, invalid);
  EXPECT_EQ(status_of([&] { sd::gpu_csr_to_vbr(d.view(), {0, 10}, 4, ctx); }).first, invalid);
  EXPECT_EQ(status_of([&] { sd::gpu_csr_to_tiled_dcsr(d.view(), 0, ctx); }).first, invalid);
  EXPECT_EQ(status_of([&] { sd::gpu_csr_to_bcsr(d.view(), 0, 8, ctx); }).first, invalid);
}

// ---- normalisation of user arrays

uint16_t to_bits16(double v, sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F16 ? sd::double_to_half(v) : sd::double_to_bfloat16(v);
}

// Values of `type` from doubles, as bytes.
std::vector<unsigned char> encode_values(const std::vector<double>& v, sparsetc_value_type_t type) {
  std::vector<unsigned char> out;
  auto put = [&](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + n);
  };
  for (double x : v) {
    if (type == SPARSETC_VALUE_F64) {
      put(&x, 8);
    } else if (type == SPARSETC_VALUE_F32) {
      const float f = float(x);
      put(&f, 4);
    } else {
      const uint16_t h = to_bits16(x, type);
      put(&h, 2);
    }
  }
  return out;
}

template <typename T>
std::vector<unsigned char> encode_indices(const std::vector<int64_t>& v, int64_t base) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i) {
    const T x = T(v[i] + base);
    std::memcpy(out.data() + i * sizeof(T), &x, sizeof(T));
  }
  return out;
}

std::vector<unsigned char> encode(const std::vector<int64_t>& v, sparsetc_index_type_t type, int64_t base) {
  return type == SPARSETC_INDEX_32 ? encode_indices<int32_t>(v, base) : encode_indices<int64_t>(v, base);
}

// User arrays on the host and their device copies, with a RawSparse for each.
struct UserArrays {
  std::vector<unsigned char> offsets, indices, values;
  sd::RawSparse host;
  DeviceBuffer d_offsets, d_indices, d_values;
  sd::RawSparse device;
  UserArrays(sparsetc_format_t format, int64_t rows, int64_t cols, const std::vector<int64_t>& outer,
             const std::vector<int64_t>& inner, const std::vector<double>& vals, sparsetc_index_type_t offset_type,
             sparsetc_index_type_t index_type, sparsetc_index_base_t base, sparsetc_value_type_t value_type,
             const GpuContext& ctx)
      : offsets(encode(outer, offset_type, base)),
        indices(encode(inner, index_type, base)),
        values(encode_values(vals, value_type)) {
    host.format = format;
    host.rows = rows;
    host.cols = cols;
    host.nnz = int64_t(inner.size());
    host.offset_type = offset_type;
    host.index_type = index_type;
    host.base = base;
    host.value_type = value_type;
    host.offsets = offsets.data();
    host.indices = indices.data();
    host.values = values.data();
    d_offsets = DeviceBuffer(std::max<size_t>(offsets.size(), 1), ctx);
    d_indices = DeviceBuffer(std::max<size_t>(indices.size(), 1), ctx);
    d_values = DeviceBuffer(std::max<size_t>(values.size(), 1), ctx);
    sd::copy_host_to_device(d_offsets.data(), offsets.data(), offsets.size(), ctx.stream);
    sd::copy_host_to_device(d_indices.data(), indices.data(), indices.size(), ctx.stream);
    sd::copy_host_to_device(d_values.data(), values.data(), values.size(), ctx.stream);
    EXPECT_EQ(cudaStreamSynchronize(ctx.stream), cudaSuccess);
    device = host;
    device.offsets = d_offsets.data();
    device.indices = d_indices.data();
    device.values = d_values.data();
  }
};

// Runs both imports; equal results, or the same error (status and message).
template <typename V>
void check_normalize(const UserArrays& a, sparsetc_duplicates_t dup, const std::string& where, const GpuContext& ctx,
                     const sd::gpuconv::NormalizeOptions& options = {}) {
  CsrMatrix<V> want;
  sparsetc_status_t want_status = SPARSETC_STATUS_SUCCESS;
  std::string want_message;
  try {
    want = sd::import_csr<V>(a.host, dup);
  } catch (const sd::Error& e) {
    want_status = e.status();
    want_message = e.what();
  }
  try {
    const sd::DeviceCsr<V> d = sd::gpuconv::normalize<V>(a.device, dup, ctx, options);
    ASSERT_EQ(want_status, SPARSETC_STATUS_SUCCESS) << where << ": the host failed with " << want_message;
    const CsrMatrix<V> got = sd::csr_to_host(d.view(), ctx.stream);
    EXPECT_SAME_SCALAR(rows);
    EXPECT_SAME_SCALAR(cols);
    EXPECT_SAME(row_ptr);
    EXPECT_SAME(col_idx);
    EXPECT_SAME(values);
  } catch (const sd::Error& e) {
    EXPECT_EQ(e.status(), want_status) << where << ": " << e.what();
    EXPECT_EQ(std::string(e.what()), want_message) << where;
  }
}

constexpr sparsetc_index_type_t kIndexTypes[] = {SPARSETC_INDEX_32, SPARSETC_INDEX_64};
constexpr sparsetc_index_base_t kBases[] = {SPARSETC_BASE_ZERO, SPARSETC_BASE_ONE};
constexpr sparsetc_value_type_t kValueTypes[] = {SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_F16,
                                                 SPARSETC_VALUE_BF16};

std::string layout(sparsetc_index_type_t o, sparsetc_index_type_t i, sparsetc_index_base_t b,
                   sparsetc_value_type_t v) {
  return std::string(" offsets ") + (o == SPARSETC_INDEX_32 ? "32" : "64") + " indices " +
         (i == SPARSETC_INDEX_32 ? "32" : "64") + " base " + std::to_string(int(b)) + " values " + std::to_string(int(v));
}

TEST(GpuConvert, NormalizeCsrAndCscInEveryLayout) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  std::vector<Case> cases;
  for (size_t k : {size_t(0), size_t(3), size_t(8), size_t(11), size_t(12), size_t(16)}) cases.push_back(corpus()[k]);
  for (const Case& c : cases) {
    const CsrMatrix<double>& A = c.matrix;
    const sd::CscMatrix<double> C = sd::csr_to_csc(A);
    for (auto o : kIndexTypes)
      for (auto i : kIndexTypes)
        for (auto b : kBases)
          for (auto v : kValueTypes) {
            const std::string where = c.name + layout(o, i, b, v);
            const UserArrays csr(SPARSETC_FORMAT_CSR, A.rows, A.cols, A.row_ptr, A.col_idx, A.values, o, i, b, v, ctx);
            check_normalize<double>(csr, SPARSETC_DUPLICATES_ERROR, where + " CSR", ctx);
            check_normalize<float>(csr, SPARSETC_DUPLICATES_ERROR, where + " CSR", ctx);
            const UserArrays csc(SPARSETC_FORMAT_CSC, A.rows, A.cols, C.col_ptr, C.row_idx, C.values, o, i, b, v, ctx);
            check_normalize<double>(csc, SPARSETC_DUPLICATES_ERROR, where + " CSC", ctx);
            check_normalize<float>(csc, SPARSETC_DUPLICATES_ERROR, where + " CSC", ctx);
          }
  }
}

// COO entries of a matrix, shuffled, with `repeats` extra copies (new values) of random entries.
struct CooEntries {
  std::vector<int64_t> rows, cols;
  std::vector<double> values;
};
CooEntries shuffled_coo(const CsrMatrix<double>& A, int64_t repeats, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::tuple<int64_t, int64_t, double>> e;
  for (int64_t r = 0; r < A.rows; ++r)
    for (int64_t k = A.row_ptr[size_t(r)]; k < A.row_ptr[size_t(r + 1)]; ++k)
      e.emplace_back(r, A.col_idx[size_t(k)], A.values[size_t(k)]);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const size_t unique = e.size();
  for (int64_t d = 0; d < repeats && unique > 0; ++d) {
    auto t = e[std::uniform_int_distribution<size_t>(0, unique - 1)(rng)];
    std::get<2>(t) = u(rng) * 1e-3;  // small: the sum's rounding depends on the order
    e.push_back(t);
  }
  std::shuffle(e.begin(), e.end(), rng);
  CooEntries c;
  for (const auto& [r, col, v] : e) {
    c.rows.push_back(r);
    c.cols.push_back(col);
    c.values.push_back(v);
  }
  return c;
}

TEST(GpuConvert, NormalizeCooWithAndWithoutDuplicates) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  std::vector<Case> cases;
  for (size_t k : {size_t(0), size_t(3), size_t(8), size_t(9), size_t(11), size_t(13), size_t(14)})
    cases.push_back(corpus()[k]);
  for (const Case& c : cases)
    for (int64_t repeats : {int64_t(0), int64_t(1), int64_t(40), c.matrix.nnz() * 3})
      for (auto t : kIndexTypes)
        for (auto b : kBases)
          for (auto v : {SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_BF16}) {
            const CooEntries e = shuffled_coo(c.matrix, repeats, sparsetc_test::fresh_seed());
            const std::string where = c.name + " repeats " + std::to_string(repeats) + layout(t, t, b, v) + " COO";
            const UserArrays coo(SPARSETC_FORMAT_COO, c.matrix.rows, c.matrix.cols, e.rows, e.cols, e.values, t, t, b,
                                 v, ctx);
            for (auto dup : {SPARSETC_DUPLICATES_SUM, SPARSETC_DUPLICATES_ERROR}) {
              check_normalize<double>(coo, dup, where + (dup ? " SUM" : " ERROR"), ctx);
              check_normalize<float>(coo, dup, where + (dup ? " SUM" : " ERROR"), ctx);
            }
          }
}

// The lengths of `rows` rows: `lengths`' (row, length) pairs, the other rows empty (for rows_of).
std::vector<int64_t> lengths_at(int64_t rows, const std::vector<std::pair<int64_t, int64_t>>& lengths) {
  std::vector<int64_t> length(size_t(rows), 0);
  for (const auto& [row, n] : lengths) length[size_t(row)] = n;
  return length;
}

// The row buckets against the host on the cases their limits make: rows past the ranked length
// (the bitonic sort) up to a full bucket, with repeats in them; a bucket one entry over its cap,
// and the buckets switched off (the radix sort); thousands of buckets; millions of empty rows;
// columns wide enough to cut the rows of a bucket, and to rule the buckets out.
TEST(GpuConvert, NormalizeCooByRowBucketsAndTheirLimits) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  using sd::gpuconv::CooWay;
  const uint64_t seed = sparsetc_test::fresh_seed();
  // 20000 rows over about 3000 entries make buckets of 2048 rows: rows 5-9, 3000 and 4100-4102
  // share buckets of their own.
  const std::vector<std::pair<int64_t, int64_t>> long_rows = {
      {5, 700}, {6, 3}, {9, 65}, {3000, 1900}, {4100, 100}, {4101, 64}, {4102, 129}, {7000, 1}, {19999, 33}};
  struct Case {
    std::string name;
    CsrMatrix<double> matrix;
    int64_t repeats;
    bool buckets;
    CooWay way;
  };
  std::vector<Case> cases;
  cases.push_back({"long rows", rows_of(2500, lengths_at(20000, long_rows), seed), 60, true, CooWay::kRowBuckets});
  cases.push_back({"long rows, buckets off", cases.back().matrix, 60, false, CooWay::kRadixSort});
  cases.push_back(
      {"a full bucket", rows_of(4000, lengths_at(20000, {{2100, 2048}}), seed + 1), 0, true, CooWay::kRowBuckets});
  cases.push_back(
      {"a bucket over its cap", rows_of(4000, lengths_at(20000, {{2100, 2049}}), seed + 2), 0, true, CooWay::kRadixSort});
  cases.push_back(
      {"uniform 150000 x 20", sd::generate_uniform(150000, 150000, 20, seed + 3), 1000, true, CooWay::kRowBuckets});
  // Columns of 26 bits leave 6 for the row in a bucket (buckets of 64 rows); 28 bits leave 4, too
  // few rows for 2^19 rows in 16384 buckets.
  cases.push_back({"columns of 26 bits", sd::generate_uniform(100000, int64_t(1) << 26, 3, seed + 8), 100, true,
                   CooWay::kRowBuckets});
  cases.push_back({"columns of 28 bits", sd::generate_uniform(int64_t(1) << 19, int64_t(1) << 28, 1, seed + 9), 100,
                   true, CooWay::kRadixSort});
  {  // about 5000 entries in 4M rows
    std::mt19937_64 rng(seed + 4);
    std::vector<std::pair<int64_t, int64_t>> lengths;
    for (int k = 0; k < 5000; ++k) {
      const int64_t r = std::uniform_int_distribution<int64_t>(0, (int64_t(1) << 22) - 1)(rng);
      lengths.push_back({r, 1 + r % 7});
    }
    cases.push_back({"4M rows, 5000 entries", rows_of(7, lengths_at(int64_t(1) << 22, lengths), seed + 5), 20, true,
                     CooWay::kRowBuckets});
  }
  for (const Case& c : cases)
    for (auto v : {SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_BF16}) {
      const CooEntries e = shuffled_coo(c.matrix, c.repeats, seed + 7);
      const std::string where = c.name + layout(SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ONE, v) + " COO";
      const UserArrays coo(SPARSETC_FORMAT_COO, c.matrix.rows, c.matrix.cols, e.rows, e.cols, e.values,
                           SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ONE, v, ctx);
      for (auto dup : {SPARSETC_DUPLICATES_SUM, SPARSETC_DUPLICATES_ERROR}) {
        CooWay way_double = CooWay(-1), way_float = CooWay(-1);
        check_normalize<double>(coo, dup, where + (dup ? " SUM" : " ERROR"), ctx, {&way_double, c.buckets});
        check_normalize<float>(coo, dup, where + (dup ? " SUM" : " ERROR"), ctx, {&way_float, c.buckets});
        if (dup == SPARSETC_DUPLICATES_SUM || c.repeats == 0) {  // an error leaves the way unset
          EXPECT_EQ(way_double, c.way) << where;
          EXPECT_EQ(way_float, c.way) << where;
        }
      }
    }
}

TEST(GpuConvert, NormalizeReportsDoublesBeyondFloatLikeTheHost) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  CsrMatrix<double> A = sd::generate_band(40, 1, 3);
  A.values[17] = 1e300;
  A.values[50] = -1e39;
  for (auto format : {SPARSETC_FORMAT_CSR, SPARSETC_FORMAT_COO}) {
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < A.rows; ++r)
      for (int64_t k = A.row_ptr[size_t(r)]; k < A.row_ptr[size_t(r + 1)]; ++k) rows.push_back(r);
    const UserArrays a(format, A.rows, A.cols, format == SPARSETC_FORMAT_CSR ? A.row_ptr : rows, A.col_idx, A.values,
                       SPARSETC_INDEX_64, SPARSETC_INDEX_64, SPARSETC_BASE_ONE, SPARSETC_VALUE_F64, ctx);
    check_normalize<float>(a, SPARSETC_DUPLICATES_ERROR, "out of range", ctx);
    check_normalize<double>(a, SPARSETC_DUPLICATES_ERROR, "double keeps it", ctx);
  }
}

// ---- values

double bits_to_double(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

template <typename T>
auto bits_of(T x) {
  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t> bits;
  std::memcpy(&bits, &x, sizeof x);
  return bits;
}

// Doubles at the edges of every target's rounding and range, and random ones of all magnitudes.
std::vector<double> edge_values(uint64_t seed) {
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 65504.0, -65504.0, 65519.99, 65520.0, -65520.0,
                           std::nextafter(65520.0, 0.0), 65536.0, 1e5, 6e-8, 5.96e-8, 2.98e-8, 0x1p-25, 0x1p-24,
                           0x1.8p-24, 0x1p-14, 0x1.ff8p-15, 1.0 + 0x1p-11, 1.0 + 0x1.8p-11, 1.0 + 0x1p-8,
                           1.0 + 0x1.8p-8, 1.0 + 0x1p-8 + 0x1p-40, 3.3895313892515355e38, 0x1.ffp127,
                           std::nextafter(0x1.ffp127, 0.0), -0x1.ffp127, 0x1.fep127, 3.4028234663852886e38,
                           0x1.ffffffp127, std::nextafter(0x1.ffffffp127, 0.0), 1e300, -1e300, 1e-300, 0x1p-133,
                           0x1p-134, 0x1.8p-134, 0x1p-149, 0x1p-150, 0x1.0000000001p-150,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max()};
  // NaNs with payloads and both signs.
  for (uint64_t bits : {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull, 0x7ff4000000000000ull,
                        0x7ffabcdef0123456ull, 0xfff123456789abcdull}) {
    v.push_back(bits_to_double(bits));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0), unit(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-160, 140);
  for (int k = 0; k < 200000; ++k) {
    double x;
    if (k % 4 == 0) x = std::ldexp(mantissa(rng), exponent(rng));
    else if (k % 4 == 1) x = 65504.0 + (unit(rng) - 0.5) * 64.0;                       // around the f16 limit
    else if (k % 4 == 2) x = std::ldexp(1.0 + std::ldexp(double(int(unit(rng) * 512)), -9) +  // near bf16 ties
                                            std::ldexp(double(int(unit(rng) * 3) - 1), -40),
                                        exponent(rng));
    else x = bits_to_double(rng());  // any bits
    v.push_back(unit(rng) < 0.5 ? -x : x);
  }
  return v;
}

// offset: elements before the arrays on the device (1 makes them unaligned: the scalar path).
template <typename Out, typename V>
void check_values(const std::vector<V>& src, sparsetc_value_type_t type, const GpuContext& ctx, size_t offset = 0) {
  const std::string where = std::string(sizeof(V) == 4 ? "float" : "double") + " -> " + std::to_string(int(type)) +
                            " offset " + std::to_string(offset);
  // Host: element by element, so an out-of-range value only marks itself.
  std::vector<Out> want(src.size());
  std::vector<bool> bad(src.size(), false);
  int64_t bad_count = 0, first_bad = -1;
  for (size_t i = 0; i < src.size(); ++i) {
    try {
      sd::store_values(&src[i], 1, type, &want[i]);
    } catch (const sd::Error& e) {
      ASSERT_EQ(e.status(), SPARSETC_STATUS_VALUE_OUT_OF_RANGE);
      bad[i] = true;
      if (bad_count++ == 0) first_bad = int64_t(i);
    }
  }
  DeviceBuffer src_buffer((src.size() + offset) * sizeof(V), ctx), dst_buffer((src.size() + offset) * sizeof(Out), ctx);
  const V* d_src = src_buffer.as<const V>() + offset;
  Out* d_dst = dst_buffer.as<Out>() + offset;
  sd::copy_host_to_device(src_buffer.as<V>() + offset, src.data(), src.size() * sizeof(V), ctx.stream);
  const sd::ValueConversion r = sd::gpu_convert_values(d_src, int64_t(src.size()), type, d_dst, ctx);
  std::vector<Out> got(src.size());
  sd::copy_device_to_host(got.data(), d_dst, got.size() * sizeof(Out), ctx.stream);
  EXPECT_EQ(r.out_of_range, bad_count) << where;
  EXPECT_EQ(r.first_out_of_range, first_bad) << where;
  int64_t shown = 0;
  for (size_t i = 0; i < src.size() && shown < 10; ++i)
    if (!bad[i] && std::memcmp(&got[i], &want[i], sizeof(Out)) != 0) {
      ++shown;
      ADD_FAILURE() << where << ": element " << i << " = " << src[i] << " (bits " << std::hex
                    << bits_of(src[i]) << ") gives "
                    << +got[i] << ", the host " << +want[i] << std::dec;
    }
  if (bad_count > 0) {  // the caller's error, as the host words it
    try {
      sd::value_out_of_range_error(d_src, first_bad, type, ctx.stream);
    } catch (const sd::Error& e) {
      try {
        sd::store_values(src.data(), int64_t(src.size()), type, want.data());
        ADD_FAILURE() << "the host did not fail";
      } catch (const sd::Error& host) {
        EXPECT_EQ(std::string(e.what()), std::string(host.what())) << where;
      }
    }
  }
}

TEST(GpuConvert, ValuesRoundLikeTheHost) {
  SKIP_WITHOUT_DEVICE();
  Stream s;
  const GpuContext ctx = s.context();
  const std::vector<double> d = edge_values(sparsetc_test::fresh_seed());
  std::vector<float> f;
  for (double x : d) {  // floats: the exactly representable ones, and float's own NaNs and edges
    float y;
    if (std::isnan(x)) {
      uint64_t b;
      std::memcpy(&b, &x, 8);
      const uint32_t fb = uint32_t(b >> 32) | 0x7f800000u | uint32_t(b & 1);
      std::memcpy(&y, &fb, 4);
    } else {
      y = std::fabs(x) > 3.4028234663852886e38 ? float(x > 0 ? 3.4028234663852886e38 : -3.4028234663852886e38)
                                               : float(x);
    }
    f.push_back(y);
  }
  for (auto type : kValueTypes) {
    if (type == SPARSETC_VALUE_F64) {
      check_values<double>(d, type, ctx);
      check_values<double>(f, type, ctx);
    } else if (type == SPARSETC_VALUE_F32) {
      check_values<float>(d, type, ctx);
      check_values<float>(f, type, ctx);
    } else {
      check_values<uint16_t>(d, type, ctx);
      check_values<uint16_t>(f, type, ctx);
    }
  }
  // Unaligned and short arrays take the scalar path.
  check_values<uint16_t>(d, SPARSETC_VALUE_BF16, ctx, 1);
  check_values<float>(d, SPARSETC_VALUE_F32, ctx, 3);
  const std::vector<double> tail(d.begin() + 1, d.begin() + 12);
  check_values<uint16_t>(tail, SPARSETC_VALUE_F16, ctx);
  const sd::ValueConversion none = sd::gpu_convert_values<double>(nullptr, 0, SPARSETC_VALUE_F16, nullptr, ctx);
  EXPECT_EQ(none.out_of_range, 0);
  EXPECT_EQ(none.first_out_of_range, -1);
}

}  // namespace

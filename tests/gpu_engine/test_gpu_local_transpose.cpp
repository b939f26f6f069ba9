// The local transpose (src/gpu/convert/local_transpose.cuh) against the host's CSR -> CSC and back,
// bit for bit, with poisoned allocations (an element it fails to write cannot pass): bands, a band
// with empty tiles, one whose automatic tiles overflow a CTA (the retry with narrower tiles),
// stencils, rectangular structures, empty rows and columns, a dense row and a dense column, and
// tiles of fixed widths. Each case also checks which engine ran: the local transpose where the
// structure is a narrow band, the sort where it is scattered or wide.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu_engine_support.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;

// rows x cols: row i holds the columns (sorted, distinct) that columns_of(i, row) puts in `row`,
// with random values.
CsrMatrix<double> csr_of_rows(int64_t rows, int64_t cols, uint64_t seed,
                              const std::function<void(int64_t, std::vector<int64_t>&)>& columns_of) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> A;
  A.rows = rows;
  A.cols = cols;
  A.row_ptr.assign(1, 0);
  std::vector<int64_t> row;
  for (int64_t i = 0; i < rows; ++i) {
    row.clear();
    columns_of(i, row);
    for (int64_t j : row) {
      A.col_idx.push_back(j);
      A.values.push_back(value(rng));
    }
    A.row_ptr.push_back(int64_t(A.col_idx.size()));
  }
  return A;
}

// rows x cols; row i holds the columns i * cols / rows + s for each shift s (those in range);
// every `empty_every`-th row is empty (0: none). dense_row / dense_col >= 0 add a full row / column.
CsrMatrix<double> near_diagonals(int64_t rows, int64_t cols, const std::vector<int64_t>& shifts, uint64_t seed,
                                 int64_t empty_every = 0, int64_t dense_row = -1, int64_t dense_col = -1) {
  return csr_of_rows(rows, cols, seed, [&](int64_t i, std::vector<int64_t>& row) {
    if (i == dense_row) {
      for (int64_t j = 0; j < cols; ++j) row.push_back(j);
    } else if (empty_every == 0 || i % empty_every != 0) {
      const int64_t centre = i * cols / rows;
      for (int64_t s : shifts)
        if (centre + s >= 0 && centre + s < cols) row.push_back(centre + s);
      if (dense_col >= 0) row.push_back(dense_col);
    }
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
  });
}

// A band of n x n: row i holds columns i - h .. i + h (those in range) for h = half_width(i), no
// entries where h < 0.
CsrMatrix<double> band_of(int64_t n, const std::function<int64_t(int64_t)>& half_width, uint64_t seed) {
  return csr_of_rows(n, n, seed, [&](int64_t i, std::vector<int64_t>& row) {
    const int64_t h = half_width(i);
    for (int64_t j = std::max<int64_t>(0, i - h); h >= 0 && j <= std::min(n - 1, i + h); ++j) row.push_back(j);
  });
}

// Half-width 2, except no entries in rows [empty_from, empty_to) (so the columns there form empty
// tiles) and half-width 6 in rows [wide_from, wide_to) (13 entries a list: tiles chosen for the mean
// of about 5 hold more than a CTA's 2048 entries there, and the transpose retries narrower).
CsrMatrix<double> band_with_gap_and_bulge(int64_t n, int64_t empty_from, int64_t empty_to, int64_t wide_from,
                                          int64_t wide_to, uint64_t seed) {
  return band_of(
      n,
      [=](int64_t i) -> int64_t {
        if (i >= empty_from && i < empty_to) return -1;
        return i >= wide_from && i < wide_to ? 6 : 2;
      },
      seed);
}

enum class Expect { kLocal, kSort, kEither };  // what the library's own choice must be

struct Case {
  std::string name;
  CsrMatrix<double> A;
  Expect expect;
};

template <typename V>
void check_case(const CsrMatrix<V>& A, const std::string& name, Expect expect, const sd::GpuContext& ctx) {
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  const sd::CscMatrix<V> want_csc = sd::csr_to_csc(A);
  // The library's choice (the local transpose where the structure is a narrow band), then tiles of
  // fixed widths (where those overflow a CTA or read too many entries, the sort runs instead).
  for (const int tile_lists : {0, 32, 128, 2048}) {
    const std::string where = name + " tile " + std::to_string(tile_lists);
    sd::gpuconv::TransposeOptions options;
    options.mirror = false;  // (symmetric bands take the mirror transpose first: its own test)
    options.local_options.min_entries = 0;
    options.local_options.tile_lists = tile_lists;
    bool took = false;
    options.took_local = &took;
    sd::DeviceCsc<V> csc;
    csc.rows = A.rows;
    csc.cols = A.cols;
    csc.nnz = A.nnz();
    sd::gpuconv::transpose_compressed(A.rows, A.cols, A.nnz(), d.view().row_ptr, d.view().col_idx, d.view().values,
                                      csc.col_ptr, csc.row_idx, csc.values, ctx, options);
    if (tile_lists == 0 && expect == Expect::kLocal) {
      EXPECT_TRUE(took) << where;
    } else if (expect == Expect::kSort) {
      EXPECT_FALSE(took) << where;
    }
    {
      const sd::CscMatrix<V> got = csc.to_host(ctx.stream);
      const sd::CscMatrix<V>& want = want_csc;
      EXPECT_SAME(col_ptr);
      EXPECT_SAME(row_idx);
      EXPECT_SAME(values);
    }
    // and back: CSC -> CSR is the same transpose over the columns
    took = false;
    sd::DeviceCsr<V> back;
    back.rows = A.rows;
    back.cols = A.cols;
    back.nnz = A.nnz();
    sd::gpuconv::transpose_compressed(A.cols, A.rows, A.nnz(), csc.view().col_ptr, csc.view().row_idx,
                                      csc.view().values, back.row_ptr, back.col_idx, back.values, ctx, options);
    // (the library's choice going back is not checked: the transposed structure of a wide matrix
    // has other list lengths, and so other tiles)
    const CsrMatrix<V> got = sd::csr_to_host(back.view(), ctx.stream);
    const CsrMatrix<V>& want = A;
    EXPECT_SAME(row_ptr) << " (back)";
    EXPECT_SAME(col_idx) << " (back)";
    EXPECT_SAME(values) << " (back)";
  }
}

class GpuLocalTranspose : public sparsetc_test::PoisonedGpuTest {};

TEST_F(GpuLocalTranspose, MatchesTheHostWhereTakenAndSortsTheRest) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  std::vector<Case> cases;
  cases.push_back({"band 5003 +-3", near_diagonals(5003, 5003, {-3, -2, -1, 0, 1, 2, 3}, seed), Expect::kLocal});
  cases.push_back({"band 6007 +-2, rows 2000-2999 empty, rows 4000-4399 +-6",
                   band_with_gap_and_bulge(6007, 2000, 3000, 4000, 4400, seed + 7), Expect::kLocal});
  cases.push_back({"poisson3d27:13", sd::generate("poisson3d27:13", seed + 1), Expect::kSort});
  cases.push_back({"poisson2d5:67", sd::generate("poisson2d5:67", seed + 2), Expect::kEither});
  cases.push_back({"3001 x 9001, 3 diagonals, every 7th row empty",
                   near_diagonals(3001, 9001, {-40, 0, 1, 2, 500}, seed + 3, 7), Expect::kEither});
  cases.push_back({"9001 x 3001, every 5th row empty", near_diagonals(9001, 3001, {-9, 0, 13}, seed + 4, 5), Expect::kEither});
  cases.push_back({"band 4099 + dense row 17 + dense column 2500",
                   near_diagonals(4099, 4099, {-1, 0, 1}, seed + 5, 0, 17, 2500), Expect::kSort});
  cases.push_back({"uniform:6007:5 (scattered)", sd::generate("uniform:6007:5", seed + 6), Expect::kSort});
  for (const Case& c : cases) {
    check_case(c.A, c.name + " (double)", c.expect, context());
    check_case(sd::cast_values<float>(c.A), c.name + " (float)", c.expect, context());
  }
}

// One small case for compute-sanitizer (memcheck in scripts/device-check.sh): empty
// tiles, a retry with narrower tiles, the look-back over 19 tiles.
TEST_F(GpuLocalTranspose, SmallCaseForTheSanitizers) {
  const CsrMatrix<double> A = band_with_gap_and_bulge(2311, 500, 700, 1500, 1700, sparsetc_test::fresh_seed());
  check_case(A, "band 2311 +-2, rows 500-699 empty, rows 1500-1699 +-6", Expect::kLocal, context());
}

// The default options (but the mirror transpose) on a structure past min_entries: the local
// transpose runs on its own.
TEST_F(GpuLocalTranspose, TakenByDefaultOnLargeLocalStructures) {
  const CsrMatrix<double> A =
      near_diagonals(120000, 120000, {-4, -3, -2, -1, 0, 1, 2, 3, 4}, sparsetc_test::fresh_seed());  // 1.08M entries
  ASSERT_GE(A.nnz(), sd::gpuconv::LocalTransposeOptions{}.min_entries);
  const sd::GpuContext ctx = context();
  const sd::DeviceCsr<double> d = sd::csr_to_device(A, ctx);
  sd::gpuconv::TransposeOptions options;
  options.mirror = false;
  bool took = false;
  options.took_local = &took;
  sd::DeviceCsc<double> csc;
  sd::gpuconv::transpose_compressed(A.rows, A.cols, A.nnz(), d.view().row_ptr, d.view().col_idx, d.view().values,
                                    csc.col_ptr, csc.row_idx, csc.values, ctx, options);
  EXPECT_TRUE(took);
  csc.rows = A.rows;
  csc.cols = A.cols;
  csc.nnz = A.nnz();
  const sd::CscMatrix<double> got = csc.to_host(ctx.stream), want = sd::csr_to_csc(A);
  const std::string where = "band 120000 +-4";
  EXPECT_SAME(col_ptr);
  EXPECT_SAME(row_idx);
  EXPECT_SAME(values);
}

}  // namespace

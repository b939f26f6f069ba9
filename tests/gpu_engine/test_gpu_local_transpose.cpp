// The local transpose (src/gpu/convert/local_transpose.cuh) against the host's CSR -> CSC and back,
// bit for bit, with poisoned allocations (an element it fails to write cannot pass): banded,
// stencil and rectangular structures, empty rows and columns, a dense row and a dense column,
// narrow tiles, and a staging area too small for most tiles (those stage in the output). Each case
// also checks which engine ran: the local transpose where the structure is local, the sort where
// it is scattered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
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

// rows x cols; row i holds the columns i * cols / rows + s for each shift s (those in range),
// random values; every `empty_every`-th row is empty (0: none). dense_row / dense_col >= 0 add a
// full row / column.
CsrMatrix<double> near_diagonals(int64_t rows, int64_t cols, const std::vector<int64_t>& shifts, uint64_t seed,
                                 int64_t empty_every = 0, int64_t dense_row = -1, int64_t dense_col = -1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> A;
  A.rows = rows;
  A.cols = cols;
  A.row_ptr.assign(1, 0);
  std::vector<int64_t> row;
  for (int64_t i = 0; i < rows; ++i) {
    row.clear();
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
    for (int64_t j : row) {
      A.col_idx.push_back(j);
      A.values.push_back(value(rng));
    }
    A.row_ptr.push_back(int64_t(A.col_idx.size()));
  }
  return A;
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
  // The library's choices (the local transpose where the structure is local), then forced narrow
  // and wide tiles and a staging area that most tiles overflow, on any structure.
  struct Setting {
    int tile_lists;
    int64_t staging_entries;
    bool any_structure;
  };
  for (const Setting setting :
       {Setting{0, 0, false}, Setting{32, 0, true}, Setting{64, 40, true}, Setting{2048, 0, true}}) {
    const std::string where = name + " tile " + std::to_string(setting.tile_lists) + " staging " +
                              std::to_string(setting.staging_entries);
    sd::gpuconv::TransposeOptions options;
    options.local_options.min_entries = 0;
    options.local_options.tile_lists = setting.tile_lists;
    options.local_options.staging_entries = setting.staging_entries;
    options.local_options.any_structure = setting.any_structure;
    bool took = false;
    options.took_local = &took;
    sd::DeviceCsc<V> csc;
    csc.rows = A.rows;
    csc.cols = A.cols;
    csc.nnz = A.nnz();
    sd::gpuconv::transpose_compressed(A.rows, A.cols, A.nnz(), d.view().row_ptr, d.view().col_idx, d.view().values,
                                      csc.col_ptr, csc.row_idx, csc.values, ctx, options);
    if (setting.any_structure || expect == Expect::kLocal) {
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
    // has fewer entries per list, which the plan may find not local enough)
    if (setting.any_structure) {
      EXPECT_TRUE(took) << where << " (back)";
    }
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
  cases.push_back({"poisson3d27:13", sd::generate("poisson3d27:13", seed + 1), Expect::kLocal});
  cases.push_back({"poisson2d5:67", sd::generate("poisson2d5:67", seed + 2), Expect::kLocal});
  cases.push_back({"3001 x 9001, 3 diagonals, every 7th row empty",
                   near_diagonals(3001, 9001, {-40, 0, 1, 2, 500}, seed + 3, 7), Expect::kEither});
  cases.push_back({"9001 x 3001, every 5th row empty", near_diagonals(9001, 3001, {-9, 0, 13}, seed + 4, 5), Expect::kEither});
  cases.push_back({"band 4099 + dense row 17 + dense column 2500",
                   near_diagonals(4099, 4099, {-1, 0, 1}, seed + 5, 0, 17, 2500), Expect::kEither});
  cases.push_back({"uniform:6007:5 (scattered)", sd::generate("uniform:6007:5", seed + 6), Expect::kSort});
  for (const Case& c : cases) {
    check_case(c.A, c.name + " (double)", c.expect, context());
    check_case(sd::cast_values<float>(c.A), c.name + " (float)", c.expect, context());
  }
}

// One small case for compute-sanitizer (memcheck and racecheck in scripts/device-check.sh).
TEST_F(GpuLocalTranspose, SmallCaseForTheSanitizers) {
  const CsrMatrix<double> A =
      near_diagonals(2311, 2311, {-5, -1, 0, 3}, sparsetc_test::fresh_seed(), 9, 4, 1200);
  check_case(A, "band 2311 + dense row 4 + dense column 1200", Expect::kEither, context());
}

// The default options on a structure past min_entries: the local transpose runs on its own.
TEST_F(GpuLocalTranspose, TakenByDefaultOnLargeLocalStructures) {
  const CsrMatrix<double> A = sd::generate("poisson3d27:40", sparsetc_test::fresh_seed());  // 1.7M entries
  ASSERT_GE(A.nnz(), sd::gpuconv::LocalTransposeOptions{}.min_entries);
  const sd::GpuContext ctx = context();
  const sd::DeviceCsr<double> d = sd::csr_to_device(A, ctx);
  sd::gpuconv::TransposeOptions options;
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
  const std::string where = "poisson3d27:40";
  EXPECT_SAME(col_ptr);
  EXPECT_SAME(row_idx);
  EXPECT_SAME(values);
}

}  // namespace

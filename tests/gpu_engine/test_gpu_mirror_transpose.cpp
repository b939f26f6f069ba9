// The mirror transpose (src/gpu/convert/mirror_transpose.cuh) against the host's CSR -> CSC and
// back, bit for bit, with poisoned allocations: it must run on symmetric structures (stencils,
// bands, an undirected random graph, empty rows and columns, values that are not symmetric) and
// be refused wherever one entry breaks the rule (a missing mirror, a list out of order, a repeated
// entry, a scattered structure), where the sort's result must come out all the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "io/matrix_market.hpp"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu_engine_support.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using sd::CsrMatrix;

// The n x n structure of entries (i, j) (sorted and made distinct here), with random values.
CsrMatrix<double> csr_of_entries(int64_t n, std::vector<std::pair<int64_t, int64_t>> entries, uint64_t seed) {
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  CsrMatrix<double> A;
  A.rows = A.cols = n;
  A.row_ptr.assign(size_t(n + 1), 0);
  for (const auto& [i, j] : entries) {
    ++A.row_ptr[size_t(i + 1)];
    A.col_idx.push_back(j);
    A.values.push_back(value(rng));
  }
  for (int64_t i = 0; i < n; ++i) A.row_ptr[size_t(i + 1)] += A.row_ptr[size_t(i)];
  return A;
}

// An undirected random graph on n vertices with about `degree` neighbours each, vertices that are
// multiples of `isolated_every` left without any (empty rows and columns), and the diagonal.
CsrMatrix<double> undirected_graph(int64_t n, int degree, int64_t isolated_every, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> vertex(0, n - 1);
  std::vector<std::pair<int64_t, int64_t>> e;
  for (int64_t i = 0; i < n; ++i) {
    if (i % isolated_every == 0) continue;
    e.emplace_back(i, i);
    for (int k = 0; k < degree / 2; ++k) {
      const int64_t j = vertex(rng);
      if (j % isolated_every == 0) continue;
      e.emplace_back(i, j);
      e.emplace_back(j, i);
    }
  }
  return csr_of_entries(n, std::move(e), seed + 1);
}

// Transposes A on the device (CSR -> CSC, then CSC -> CSR) with `options`, compares both with the
// host's, and returns whether the mirror transpose ran each way.
template <typename V>
std::pair<bool, bool> transpose_both_ways(const CsrMatrix<V>& A, const std::string& name,
                                          sd::gpuconv::TransposeOptions options, const sd::GpuContext& ctx) {
  bool took_there = false, took_back = false;
  const sd::DeviceCsr<V> d = sd::csr_to_device(A, ctx);
  sd::DeviceCsc<V> csc;
  csc.rows = A.rows;
  csc.cols = A.cols;
  csc.nnz = A.nnz();
  options.took_mirror = &took_there;
  sd::gpuconv::transpose_compressed(A.rows, A.cols, A.nnz(), d.view().row_ptr, d.view().col_idx, d.view().values,
                                    csc.col_ptr, csc.row_idx, csc.values, ctx, options);
  {
    const std::string where = name + " (CSR -> CSC)";
    const sd::CscMatrix<V> got = csc.to_host(ctx.stream), want = sd::csr_to_csc(A);
    EXPECT_SAME(col_ptr);
    EXPECT_SAME(row_idx);
    EXPECT_SAME(values);
  }
  sd::DeviceCsr<V> back;
  back.rows = A.rows;
  back.cols = A.cols;
  back.nnz = A.nnz();
  options.took_mirror = &took_back;
  sd::gpuconv::transpose_compressed(A.cols, A.rows, A.nnz(), csc.view().col_ptr, csc.view().row_idx,
                                    csc.view().values, back.row_ptr, back.col_idx, back.values, ctx, options);
  {
    const std::string where = name + " (CSC -> CSR)";
    const CsrMatrix<V> got = sd::csr_to_host(back.view(), ctx.stream);
    const CsrMatrix<V> want = sd::csc_to_csr(sd::csr_to_csc(A));  // sorted lists, as the device gives them
    EXPECT_SAME(row_ptr);
    EXPECT_SAME(col_idx);
    EXPECT_SAME(values);
  }
  return {took_there, took_back};
}

sd::gpuconv::TransposeOptions every_size() {
  sd::gpuconv::TransposeOptions options;
  options.mirror_options.min_entries = 0;
  return options;
}

class GpuMirrorTranspose : public sparsetc_test::PoisonedGpuTest {};

TEST_F(GpuMirrorTranspose, RunsOnSymmetricStructures) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const std::vector<std::pair<std::string, CsrMatrix<double>>> cases = {
      {"poisson3d27:14", sd::generate("poisson3d27:14", seed)},
      {"poisson2d5:67", sd::generate("poisson2d5:67", seed + 1)},
      {"band:5003:9", sd::generate("band:5003:9", seed + 2)},
      {"undirected graph 20011, degree 12, every 7th vertex isolated", undirected_graph(20011, 12, 7, seed + 3)},
  };
  for (const auto& [name, A] : cases) {
    const auto [there, back] = transpose_both_ways(A, name + " (double)", every_size(), context());
    EXPECT_TRUE(there && back) << name;
    const auto [there32, back32] = transpose_both_ways(sd::cast_values<float>(A), name + " (float)", every_size(),
                                                       context());
    EXPECT_TRUE(there32 && back32) << name;
  }
}

// Each structure is symmetric but for one entry, which must turn the mirror transpose away.
TEST_F(GpuMirrorTranspose, RefusedWhereOneEntryBreaksTheRule) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const CsrMatrix<double> base = sd::generate("poisson2d5:61", seed);  // 3721 lists
  const int64_t row = base.rows / 2;                                   // a row of five entries
  ASSERT_EQ(base.row_ptr[size_t(row + 1)] - base.row_ptr[size_t(row)], 5);
  const int64_t first = base.row_ptr[size_t(row)];

  CsrMatrix<double> missing = base;  // (row, its first column) kept, its mirror (above the diagonal) dropped
  {
    const int64_t col = base.col_idx[size_t(first)];
    const int64_t mirror = std::find(base.col_idx.begin() + base.row_ptr[size_t(col)],
                                     base.col_idx.begin() + base.row_ptr[size_t(col + 1)], row) -
                           base.col_idx.begin();
    missing.col_idx.erase(missing.col_idx.begin() + mirror);
    missing.values.erase(missing.values.begin() + mirror);
    for (int64_t i = col + 1; i <= base.rows; ++i) --missing.row_ptr[size_t(i)];
  }
  CsrMatrix<double> lonely_above = base;  // (row, its first column) dropped, its mirror above the diagonal kept
  lonely_above.col_idx.erase(lonely_above.col_idx.begin() + first);
  lonely_above.values.erase(lonely_above.values.begin() + first);
  for (int64_t i = row + 1; i <= base.rows; ++i) --lonely_above.row_ptr[size_t(i)];
  CsrMatrix<double> out_of_order = base;  // two entries of one list swapped (both mirrors exist)
  std::swap(out_of_order.col_idx[size_t(first + 1)], out_of_order.col_idx[size_t(first + 2)]);
  std::swap(out_of_order.values[size_t(first + 1)], out_of_order.values[size_t(first + 2)]);
  CsrMatrix<double> repeated = base;  // one entry twice
  repeated.col_idx.insert(repeated.col_idx.begin() + first + 2, base.col_idx[size_t(first + 2)]);
  repeated.values.insert(repeated.values.begin() + first + 2, 0.5);
  for (int64_t i = row + 1; i <= base.rows; ++i) ++repeated.row_ptr[size_t(i)];

  const std::vector<std::pair<std::string, CsrMatrix<double>>> cases = {
      {"one mirror missing", missing},
      {"one entry above the diagonal without its mirror", lonely_above},
      {"one list out of order", out_of_order},
      {"one entry repeated", repeated},
      {"uniform:6007:5 (scattered)", sd::generate("uniform:6007:5", seed + 1)},
  };
  for (const auto& [name, A] : cases) {
    const auto [there, back] = transpose_both_ways(A, name, every_size(), context());
    EXPECT_FALSE(there) << name;
    (void)back;  // (the transpose of a refused structure may be symmetric: a list out of order comes back sorted)
    // the local transpose after the refusal, over what the mirror pass left in the outputs
    sd::gpuconv::TransposeOptions local = every_size();
    local.local_options.min_entries = 0;
    EXPECT_FALSE(transpose_both_ways(A, name + " (local transpose tried)", local, context()).first) << name;
  }
  // (and the same structure unbroken runs)
  const auto [there, back] = transpose_both_ways(base, "poisson2d5:61", every_size(), context());
  EXPECT_TRUE(there && back);
}

// The C API's direct path: int32 offsets, base one in and base zero out, f32 values as raw words.
TEST_F(GpuMirrorTranspose, CallersArraysWithBaseOne) {
  const CsrMatrix<double> A = sd::generate("poisson3d27:13", sparsetc_test::fresh_seed());  // 2197 lists
  const sd::GpuContext ctx = context();
  std::vector<int32_t> ptr(A.row_ptr.size()), idx(A.col_idx.size());
  std::vector<float> val(A.values.begin(), A.values.end());
  for (size_t i = 0; i < ptr.size(); ++i) ptr[i] = int32_t(A.row_ptr[i] + 1);
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = int32_t(A.col_idx[k] + 1);
  sd::DeviceBuffer d_ptr(ptr.size() * 4, ctx), d_idx(idx.size() * 4, ctx), d_val(val.size() * 4, ctx);
  sd::copy_host_to_device(d_ptr.data(), ptr.data(), ptr.size() * 4, ctx.stream);
  sd::copy_host_to_device(d_idx.data(), idx.data(), idx.size() * 4, ctx.stream);
  sd::copy_host_to_device(d_val.data(), val.data(), val.size() * 4, ctx.stream);
  sd::DeviceBuffer out_ptr, out_idx, out_val;
  sd::gpuconv::transpose_user_arrays(A.rows, A.cols, A.nnz(), d_ptr.data(), SPARSETC_INDEX_32,
                                     d_idx.as<const int32_t>(), 1, d_val.data(), 4, SPARSETC_INDEX_64, 0, out_ptr,
                                     out_idx, out_val, ctx);
  const sd::CscMatrix<float> want = sd::csr_to_csc(sd::cast_values<float>(A));
  std::vector<int64_t> got_ptr(want.col_ptr.size());
  std::vector<int32_t> got_idx(want.row_idx.size());
  std::vector<float> got_val(want.values.size());
  sd::copy_device_to_host(got_ptr.data(), out_ptr.data(), got_ptr.size() * 8, ctx.stream);
  sd::copy_device_to_host(got_idx.data(), out_idx.data(), got_idx.size() * 4, ctx.stream);
  sd::copy_device_to_host(got_val.data(), out_val.data(), got_val.size() * 4, ctx.stream);
  EXPECT_EQ(got_ptr, want.col_ptr);
  EXPECT_EQ(std::vector<int64_t>(got_idx.begin(), got_idx.end()), want.row_idx);
  EXPECT_TRUE(sparsetc_test::same("values", got_val, want.values));
}

// The real matrices (when present): the mirror transpose runs exactly on those whose structure is
// symmetric, and every one comes out as the host's.
TEST_F(GpuMirrorTranspose, RealMatrices) {
  int symmetric = 0, present = 0;
  for (const char* name : {"1138_bus", "Erdos971", "USpowerGrid", "add32", "Trefethen_2000", "PGPgiantcompo",
                           "adder_dcop_32", "as-22july06", "EX5", "bayer10", "Dubcova1", "airfoil1", "bcsstk17",
                           "cage11", "ca-AstroPh", "delaunay_n16", "rgg_n_2_15_s0", "usroads-48", "vt2010",
                           "wiki-Vote"}) {
    const std::string path = sparsetc_test::matrix_path(name);
    if (path.empty()) continue;
    const CsrMatrix<double> A = sd::coo_to_csr(sd::read_matrix_market(path), SPARSETC_DUPLICATES_SUM);
    if (A.rows != A.cols || A.rows <= 2048) continue;  // (the mirror is tried on square structures of > 2048 lists)
    ++present;
    const CsrMatrix<double> T = sd::transpose(A);
    const bool pattern_symmetric = T.row_ptr == A.row_ptr && T.col_idx == A.col_idx;
    symmetric += pattern_symmetric;
    const auto [there, back] = transpose_both_ways(A, name, every_size(), context());
    EXPECT_EQ(there, pattern_symmetric) << name;
    EXPECT_EQ(back, pattern_symmetric) << name;
  }
  if (present == 0) GTEST_SKIP() << "no real matrices of more than 2048 rows in " << sparsetc_test::matrix_dir();
  std::printf("%d of %d square real matrices symmetric in structure\n", symmetric, present);
}

// The default options on a structure past min_entries: the mirror transpose runs on its own.
TEST_F(GpuMirrorTranspose, TakenByDefaultOnLargeSymmetricStructures) {
  const CsrMatrix<double> A = sd::generate("poisson3d27:20", sparsetc_test::fresh_seed());  // 8000 lists, 195k entries
  ASSERT_GE(A.nnz(), sd::gpuconv::MirrorTransposeOptions{}.min_entries);
  const auto [there, back] = transpose_both_ways(A, "poisson3d27:20", {}, context());
  EXPECT_TRUE(there && back);
}

// One small case each way for compute-sanitizer (memcheck in scripts/device-check.sh).
TEST_F(GpuMirrorTranspose, SmallCasesForTheSanitizers) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  const auto [there, back] = transpose_both_ways(undirected_graph(2503, 6, 5, seed), "graph 2503", every_size(),
                                                 context());
  EXPECT_TRUE(there && back);
  const auto [scattered, unused] =
      transpose_both_ways(sd::generate("uniform:2503:4", seed + 1), "uniform:2503:4", every_size(), context());
  EXPECT_FALSE(scattered);
  (void)unused;
}

}  // namespace

// sparsetc_analyze through the C API on host matrices: every field of generated matrices against a
// brute-force recomputation from the matrix's own arrays, strip_width as an input, and the
// struct_size convention (an older, shorter struct gets only its prefix written and its missing
// strip_width is not read; a newer, longer one keeps its tail). Where a GPU is present, device
// matrices on a GPU handle (analysed on the device) against the same matrices on the host.
#include <gtest/gtest.h>
#include <sparsetc/sparsetc.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "capi_support.hpp"
#include "test_support.hpp"

namespace {

class CapiAnalysis : public sparsetc_test::CapiTest {
 protected:
  sparsetc_matrix_t generate(const char* spec) {
    sparsetc_matrix_t m = nullptr;
    EXPECT_OK(h_, sparsetc_matrix_generate(h_, spec, sparsetc_test::fresh_seed(), SPARSETC_VALUE_F64, &m));
    return m;
  }
};

struct Entries {
  int64_t rows = 0, cols = 0;
  std::vector<std::pair<int64_t, int64_t>> rc;
};

// The entries of a generated matrix (CSR, int64 offsets, int32 indices, zero-based, host).
Entries entries_of(sparsetc_matrix_t m) {
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(sparsetc_matrix_get_info(m, &info), SPARSETC_STATUS_SUCCESS);
  EXPECT_EQ(info.format, SPARSETC_FORMAT_CSR);
  EXPECT_EQ(info.offset_type, SPARSETC_INDEX_64);
  EXPECT_EQ(info.index_type, SPARSETC_INDEX_32);
  void *offsets = nullptr, *indices = nullptr;
  EXPECT_EQ(sparsetc_matrix_get_arrays(m, &offsets, &indices, nullptr), SPARSETC_STATUS_SUCCESS);
  const auto* ptr = static_cast<const int64_t*>(offsets);
  const auto* col = static_cast<const int32_t*>(indices);
  Entries e{info.rows, info.cols, {}};
  for (int64_t i = 0; i < info.rows; ++i)
    for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) e.rc.push_back({i, col[k]});
  return e;
}

// Brute force from the definitions (sparsetc_types.h; the papers' Eq. 1-2 for the DCSR fields), in
// long double; products of A·A for a square A.
sparsetc_analysis_t brute_force(const Entries& e, int64_t strip_width) {
  sparsetc_analysis_t r{};
  r.rows = e.rows;
  r.cols = e.cols;
  r.nnz = int64_t(e.rc.size());
  std::vector<int64_t> length(size_t(e.rows), 0);
  for (const auto& [i, j] : e.rc) {
    length[size_t(i)]++;
    r.bandwidth = std::max(r.bandwidth, std::abs(i - j));
  }
  r.row_length_min = *std::min_element(length.begin(), length.end());
  r.row_length_max = *std::max_element(length.begin(), length.end());
  r.empty_rows = std::count(length.begin(), length.end(), 0);
  long double mean = (long double)r.nnz / e.rows, var = 0;
  for (int64_t l : length) var += (l - mean) * (l - mean) / e.rows;
  r.row_length_mean = double(mean);
  r.row_length_std = double(std::sqrt(var));
  r.density = double((long double)r.nnz / e.rows / e.cols);
  r.products = -1;
  if (e.rows == e.cols) {
    r.products = 0;
    for (const auto& [i, j] : e.rc) r.products += length[size_t(j)];
  }
  auto blocks = [&](int64_t h, int64_t w) {
    std::map<std::pair<int64_t, int64_t>, int64_t> count;
    for (const auto& [i, j] : e.rc) count[{i / h, j / w}]++;
    return count;
  };
  r.blocks_16x8 = int64_t(blocks(16, 8).size());
  r.blocks_16x16 = int64_t(blocks(16, 16).size());
  const auto tiles = blocks(8, 8);
  r.blocks_8x8 = int64_t(tiles.size());
  r.fill_16x8 = double(r.nnz) / double(r.blocks_16x8 * 128);
  r.fill_16x16 = double(r.nnz) / double(r.blocks_16x16 * 256);
  r.fill_8x8 = double(r.nnz) / double(r.blocks_8x8 * 64);
  std::vector<long double> d;
  for (const auto& [t, c] : tiles) d.push_back(c / 64.0L);
  std::sort(d.begin(), d.end());
  const size_t n = d.size();
  r.tile_density_median = double(n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2);
  long double tmean = 0, tvar = 0;
  for (long double x : d) tmean += x / n;
  for (long double x : d) tvar += (x - tmean) * (x - tmean) / n;
  r.tile_density_mean = double(tmean);
  r.tile_density_std = double(std::sqrt(tvar));

  r.strip_width = strip_width;
  const int64_t strips = (e.cols + strip_width - 1) / strip_width;
  std::map<std::pair<int64_t, int64_t>, int64_t> segment;
  std::set<int64_t> nonempty;
  for (const auto& [i, j] : e.rc) {
    segment[{i, j / strip_width}]++;
    nonempty.insert(i);
  }
  r.nonempty_rows = int64_t(nonempty.size());
  std::vector<int64_t> rows_in_strip(size_t(strips), 0);
  for (const auto& [rs, c] : segment) rows_in_strip[size_t(rs.second)]++;
  long double strip_mean = 0, scaled_mean = 0;
  for (int64_t k : rows_in_strip) {
    strip_mean += (long double)k / strips;
    scaled_mean += (long double)k / e.rows / strips;
  }
  r.nonempty_rows_per_strip_mean = double(strip_mean);
  long double h = 0, one_minus_h = 0;  // 1 - H_norm = sum p ln c / ln nnz
  for (const auto& [rs, c] : segment) {
    const long double p = (long double)c / r.nnz;
    h -= p * std::log(p);
    one_minus_h += p * std::log((long double)c);
  }
  h /= std::log((long double)r.nnz);
  one_minus_h /= std::log((long double)r.nnz);
  r.h_norm = double(h);
  r.ssf = double(((long double)r.nonempty_rows / e.rows) / scaled_mean * ((long double)r.nnz / e.rows) * one_minus_h);
  return r;
}

::testing::AssertionResult close(double got, double want) {
  if (std::abs(got - want) <= 1e-12 * std::abs(want) + 1e-15) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

// The fields up to and including bandwidth (the struct before the blocked, tiled and DCSR fields).
void expect_prefix(const sparsetc_analysis_t& r, const sparsetc_analysis_t& want) {
  EXPECT_EQ(r.rows, want.rows);
  EXPECT_EQ(r.cols, want.cols);
  EXPECT_EQ(r.nnz, want.nnz);
  EXPECT_EQ(r.empty_rows, want.empty_rows);
  EXPECT_EQ(r.row_length_min, want.row_length_min);
  EXPECT_EQ(r.row_length_max, want.row_length_max);
  EXPECT_TRUE(close(r.row_length_mean, want.row_length_mean)) << "row_length_mean";
  EXPECT_TRUE(close(r.row_length_std, want.row_length_std)) << "row_length_std";
  EXPECT_TRUE(close(r.density, want.density)) << "density";
  EXPECT_EQ(r.products, want.products);
  EXPECT_EQ(r.bandwidth, want.bandwidth);
}

void expect_blocks_and_tiles(const sparsetc_analysis_t& r, const sparsetc_analysis_t& want) {
  EXPECT_EQ(r.blocks_16x8, want.blocks_16x8);
  EXPECT_EQ(r.blocks_16x16, want.blocks_16x16);
  EXPECT_EQ(r.blocks_8x8, want.blocks_8x8);
  EXPECT_TRUE(close(r.fill_16x8, want.fill_16x8)) << "fill_16x8";
  EXPECT_TRUE(close(r.fill_16x16, want.fill_16x16)) << "fill_16x16";
  EXPECT_TRUE(close(r.fill_8x8, want.fill_8x8)) << "fill_8x8";
  EXPECT_EQ(r.tile_density_median, want.tile_density_median);
  EXPECT_TRUE(close(r.tile_density_mean, want.tile_density_mean)) << "tile_density_mean";
  EXPECT_TRUE(close(r.tile_density_std, want.tile_density_std)) << "tile_density_std";
}

void expect_strips(const sparsetc_analysis_t& r, const sparsetc_analysis_t& want) {
  EXPECT_EQ(r.strip_width, want.strip_width);
  EXPECT_EQ(r.nonempty_rows, want.nonempty_rows);
  EXPECT_TRUE(close(r.nonempty_rows_per_strip_mean, want.nonempty_rows_per_strip_mean))
      << "nonempty_rows_per_strip_mean";
  EXPECT_TRUE(close(r.h_norm, want.h_norm)) << "h_norm";
  EXPECT_TRUE(close(r.ssf, want.ssf)) << "ssf";
}

TEST_F(CapiAnalysis, GeneratedMatchesBruteForce) {
  for (const char* spec : {"band:100:3", "poisson2d5:16", "uniform:333:5:1001"}) {
    SCOPED_TRACE(spec);
    sparsetc_matrix_t A = generate(spec);
    ASSERT_NE(A, nullptr);
    const Entries e = entries_of(A);
    for (int64_t strip : {0, 1, 7, 16, 100000}) {
      SCOPED_TRACE(testing::Message() << "strip_width " << strip);
      sparsetc_analysis_t r{};
      r.struct_size = sizeof r;
      r.strip_width = strip;
      ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &r));
      const sparsetc_analysis_t want = brute_force(e, strip > 0 ? strip : 256);
      EXPECT_EQ(r.struct_size, sizeof r);
      expect_prefix(r, want);
      expect_blocks_and_tiles(r, want);
      expect_strips(r, want);
    }
    sparsetc_matrix_destroy(A);
  }
}

TEST_F(CapiAnalysis, BandByHand) {
  // band:100:3: rows of 4..7 entries; every 8x8 tile on the diagonal band is known in closed form,
  // so check a few fields directly too: 100 rows, 7*100 - 2*(1+2+3) entries, bandwidth 3.
  sparsetc_matrix_t A = generate("band:100:3");
  sparsetc_analysis_t r{};
  r.struct_size = sizeof r;
  ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &r));
  EXPECT_EQ(r.nnz, 688);
  EXPECT_EQ(r.bandwidth, 3);
  EXPECT_EQ(r.nonempty_rows, 100);
  EXPECT_EQ(r.strip_width, 256);
  EXPECT_EQ(r.nonempty_rows_per_strip_mean, 100.0);  // one strip, every row in it
  // 8x8 tiles: 13 diagonal ones (the last 4x4) and 12 + 12 off-diagonal corners of 6 entries.
  EXPECT_EQ(r.blocks_8x8, 13 + 24);
  sparsetc_matrix_destroy(A);
}

TEST_F(CapiAnalysis, OlderShorterStructGetsOnlyItsPrefix) {
  sparsetc_matrix_t A = generate("poisson2d5:16");
  const sparsetc_analysis_t want = brute_force(entries_of(A), 256);
  // The struct as it was before the blocked, tiled and DCSR fields (it ended at bandwidth).
  for (size_t old_size : {offsetof(sparsetc_analysis_t, blocks_16x8), offsetof(sparsetc_analysis_t, strip_width),
                          offsetof(sparsetc_analysis_t, rows) + sizeof(int64_t)}) {
    SCOPED_TRACE(testing::Message() << "struct_size " << old_size);
    sparsetc_analysis_t r;
    std::memset(&r, 0xA5, sizeof r);
    r.struct_size = old_size;
    // Past the caller's struct: a strip_width that would be refused if it were read.
    r.strip_width = -5;
    sparsetc_analysis_t before;
    std::memcpy(&before, &r, sizeof r);
    ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &r));
    EXPECT_EQ(r.struct_size, old_size);
    EXPECT_EQ(r.rows, want.rows);
    EXPECT_EQ(0, std::memcmp(reinterpret_cast<const char*>(&r) + old_size,
                             reinterpret_cast<const char*>(&before) + old_size, sizeof r - old_size))
        << "bytes past struct_size were written";
    if (old_size >= offsetof(sparsetc_analysis_t, blocks_16x8)) expect_prefix(r, want);
    if (old_size >= offsetof(sparsetc_analysis_t, strip_width)) expect_blocks_and_tiles(r, want);
  }
  sparsetc_matrix_destroy(A);
}

TEST_F(CapiAnalysis, StripWidthIsReadWhenTheStructHasIt) {
  sparsetc_matrix_t A = generate("band:100:3");
  const Entries e = entries_of(A);
  // A struct that ends right after strip_width: the width is read, and the width used written back.
  for (int64_t strip : {0, 9}) {
    sparsetc_analysis_t r;
    std::memset(&r, 0xA5, sizeof r);
    const size_t size = offsetof(sparsetc_analysis_t, strip_width) + sizeof(int64_t);
    r.struct_size = size;
    r.strip_width = strip;
    const double untouched = r.ssf;
    ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &r));
    EXPECT_EQ(r.strip_width, strip > 0 ? strip : 256);
    EXPECT_EQ(0, std::memcmp(&r.ssf, &untouched, sizeof(double)));
  }
  // The full struct: the DCSR fields follow the width.
  sparsetc_analysis_t r{};
  r.struct_size = sizeof r;
  r.strip_width = 9;
  ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &r));
  expect_strips(r, brute_force(e, 9));
  EXPECT_GT(r.nonempty_rows_per_strip_mean, 0.0);
  EXPECT_LT(r.nonempty_rows_per_strip_mean, 100.0);
  // Refused widths name the field.
  r.strip_width = -1;
  expect_failure(sparsetc_analyze(h_, A, nullptr, &r), SPARSETC_STATUS_INVALID_VALUE, "strip_width");
  sparsetc_matrix_destroy(A);
}

TEST_F(CapiAnalysis, NewerLongerStructKeepsItsTail) {
  sparsetc_matrix_t A = generate("poisson2d5:16");
  struct Newer {
    sparsetc_analysis_t known;
    int64_t future[4];
  } n;
  std::memset(&n, 0x5A, sizeof n);
  n.known.struct_size = sizeof n;
  n.known.strip_width = 0;
  Newer before;
  std::memcpy(&before, &n, sizeof n);
  ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &n.known));
  EXPECT_EQ(n.known.struct_size, sizeof n);
  EXPECT_EQ(0, std::memcmp(n.future, before.future, sizeof n.future));
  const sparsetc_analysis_t want = brute_force(entries_of(A), 256);
  expect_prefix(n.known, want);
  expect_blocks_and_tiles(n.known, want);
  expect_strips(n.known, want);
  sparsetc_matrix_destroy(A);
}

TEST_F(CapiAnalysis, StructSizeTooSmall) {
  sparsetc_matrix_t A = generate("band:10:1");
  sparsetc_analysis_t r{};
  r.struct_size = 3;
  expect_failure(sparsetc_analyze(h_, A, nullptr, &r), SPARSETC_STATUS_INVALID_VALUE, "struct_size");
  sparsetc_matrix_destroy(A);
}

// Device matrices on a GPU handle take the device engine: the same results as the host's
// (integer fields and the doubles derived from them exactly, the entropy-based two to 1e-12).
TEST_F(CapiAnalysis, DeviceMatricesOnTheGpuMatchTheHost) {
  int32_t devices = 0;
  if (sparsetc_get_device_count(&devices) != SPARSETC_STATUS_SUCCESS || devices == 0) GTEST_SKIP() << "no CUDA device";
  sparsetc_handle_t g = nullptr;
  ASSERT_OK(h_, sparsetc_create_with_backend(&g, SPARSETC_BACKEND_GPU, 0));
  auto on_device = [&](sparsetc_matrix_t host) {
    sparsetc_matrix_t d = nullptr;
    EXPECT_OK(g, sparsetc_matrix_copy_to(g, host, SPARSETC_MEMORY_DEVICE, &d));
    return d;
  };
  auto expect_same = [](const sparsetc_analysis_t& got, const sparsetc_analysis_t& want) {
    expect_prefix(got, want);
    expect_blocks_and_tiles(got, want);
    expect_strips(got, want);
    EXPECT_EQ(got.row_length_std, want.row_length_std);  // exact on both engines
    EXPECT_EQ(got.tile_density_std, want.tile_density_std);
    EXPECT_EQ(got.nonempty_rows_per_strip_mean, want.nonempty_rows_per_strip_mean);
  };
  for (const char* spec : {"band:100:3", "poisson2d5:16", "rmat:10:20", "uniform:333:5:1001"}) {
    SCOPED_TRACE(spec);
    sparsetc_matrix_t A = generate(spec);
    // The same matrix as one-based COO with 32-bit indices and float values: normalised on the device.
    sparsetc_matrix_t coo = nullptr;
    ASSERT_OK(h_, sparsetc_matrix_convert(h_, A, SPARSETC_FORMAT_COO, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                          SPARSETC_BASE_ONE, SPARSETC_VALUE_F32, &coo));
    sparsetc_matrix_t dA = on_device(A), dcoo = on_device(coo);
    for (int64_t strip : {0, 7}) {
      sparsetc_analysis_t want{}, got{}, got_coo{};
      want.struct_size = got.struct_size = got_coo.struct_size = sizeof want;
      want.strip_width = got.strip_width = got_coo.strip_width = strip;
      ASSERT_OK(h_, sparsetc_analyze(h_, A, nullptr, &want));
      ASSERT_OK(g, sparsetc_analyze(g, dA, nullptr, &got));
      ASSERT_OK(g, sparsetc_analyze(g, dcoo, nullptr, &got_coo));
      expect_same(got, want);
      expect_same(got_coo, want);
    }
    sparsetc_matrix_destroy(dcoo);
    sparsetc_matrix_destroy(dA);
    sparsetc_matrix_destroy(coo);
    sparsetc_matrix_destroy(A);
  }
  // With another B: the product count.
  sparsetc_matrix_t A = generate("uniform:300:6:200"), B = generate("uniform:200:9:50");
  sparsetc_matrix_t dA = on_device(A), dB = on_device(B);
  sparsetc_analysis_t want{}, got{};
  want.struct_size = got.struct_size = sizeof want;
  ASSERT_OK(h_, sparsetc_analyze(h_, A, B, &want));
  ASSERT_OK(g, sparsetc_analyze(g, dA, dB, &got));
  EXPECT_EQ(want.products, 300 * 6 * 9);
  expect_same(got, want);
  EXPECT_EQ(sparsetc_analyze(g, dB, dB, &got), SPARSETC_STATUS_DIMENSION_MISMATCH);
  for (sparsetc_matrix_t m : {dA, dB, A, B}) sparsetc_matrix_destroy(m);
  sparsetc_destroy(g);
}

}  // namespace

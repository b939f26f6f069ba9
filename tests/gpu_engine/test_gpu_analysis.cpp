// GPU structure analysis against the CPU engine: generated matrices (banded, stencils, power-law
// R-MAT, uniform rectangular, scrambled blocks) and random ones (odd sizes, empty rows and
// columns, dense tiles, several CTAs, long rows over many windows), several strip widths, with and
// without B, through both kernels (light and heavy block rows, forced either way). Integer fields
// and every double derived from integers only must be bitwise equal; h_norm and ssf (double sums
// in another order, device libm) within 1e-12 relative. Skips without a device, except the
// argument checks, which happen before any CUDA call.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "gpu_engine_support.hpp"
#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "gen/generators.hpp"
#include "gpu/analysis/gpu_analysis.hpp"
#include "gpu/device_memory.hpp"
#include "engine_triplets.hpp"
#include "test_support.hpp"

namespace {

using sparsetc::detail::Analysis;
using sparsetc::detail::CsrMatrix;
using sparsetc::detail::DeviceBuffer;
using sparsetc::detail::DeviceCsrView;
using sparsetc::detail::GpuContext;
using sparsetc_test::csr_of;

// A host CSR copied to the device (canonical view: int64 offsets, int32 indices).
template <typename V>
struct DeviceCopy {
  DeviceBuffer row_ptr, col_idx, values;
  DeviceCsrView<V> view;
  DeviceCopy(const CsrMatrix<double>& A, const GpuContext& context)
      : row_ptr(size_t(A.rows + 1) * sizeof(int64_t), context),
        col_idx(std::max<size_t>(size_t(A.nnz()), 1) * sizeof(int32_t), context),
        values(std::max<size_t>(size_t(A.nnz()), 1) * sizeof(V), context) {
    const std::vector<int32_t> col(A.col_idx.begin(), A.col_idx.end());
    const std::vector<V> val(A.values.begin(), A.values.end());
    sparsetc::detail::copy_host_to_device(row_ptr.data(), A.row_ptr.data(), A.row_ptr.size() * sizeof(int64_t),
                                          context.stream);
    sparsetc::detail::copy_host_to_device(col_idx.data(), col.data(), col.size() * sizeof(int32_t), context.stream);
    sparsetc::detail::copy_host_to_device(values.data(), val.data(), val.size() * sizeof(V), context.stream);
    // The host vectors die here: wait for the copies.
    EXPECT_EQ(cudaStreamSynchronize(context.stream), cudaSuccess);
    view = {A.rows, A.cols, A.nnz(), row_ptr.as<const int64_t>(), col_idx.as<const int32_t>(), values.as<const V>()};
  }
};

::testing::AssertionResult close(double got, double want) {
  if (std::abs(got - want) <= 1e-12 * std::abs(want) + 1e-15) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (relative difference "
                                       << (got - want) / want << ")";
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_gpu_matches_cpu(const Analysis& g, const Analysis& c) {
  EXPECT_EQ(g.rows, c.rows);
  EXPECT_EQ(g.cols, c.cols);
  EXPECT_EQ(g.nnz, c.nnz);
  EXPECT_EQ(g.empty_rows, c.empty_rows);
  EXPECT_EQ(g.row_length_min, c.row_length_min);
  EXPECT_EQ(g.row_length_max, c.row_length_max);
  EXPECT_EQ(g.products, c.products);
  EXPECT_EQ(g.bandwidth, c.bandwidth);
  EXPECT_EQ(g.blocks_16x8, c.blocks_16x8);
  EXPECT_EQ(g.blocks_16x16, c.blocks_16x16);
  EXPECT_EQ(g.blocks_8x8, c.blocks_8x8);
  EXPECT_EQ(g.strip_width, c.strip_width);
  EXPECT_EQ(g.nonempty_rows, c.nonempty_rows);
  // Derived from integers only, through the shared analysis_from_sums: bitwise equal.
  EXPECT_TRUE(same_bits(g.row_length_mean, c.row_length_mean)) << g.row_length_mean << " " << c.row_length_mean;
  EXPECT_TRUE(same_bits(g.row_length_std, c.row_length_std)) << g.row_length_std << " " << c.row_length_std;
  EXPECT_TRUE(same_bits(g.density, c.density));
  EXPECT_TRUE(same_bits(g.fill_16x8, c.fill_16x8));
  EXPECT_TRUE(same_bits(g.fill_16x16, c.fill_16x16));
  EXPECT_TRUE(same_bits(g.fill_8x8, c.fill_8x8));
  EXPECT_TRUE(same_bits(g.tile_density_median, c.tile_density_median));
  EXPECT_TRUE(same_bits(g.tile_density_mean, c.tile_density_mean));
  EXPECT_TRUE(same_bits(g.tile_density_std, c.tile_density_std));
  EXPECT_TRUE(same_bits(g.nonempty_rows_per_strip_mean, c.nonempty_rows_per_strip_mean));
  // Entropy sums: another summation order and the device's log.
  EXPECT_TRUE(close(g.h_norm, c.h_norm)) << "h_norm";
  EXPECT_TRUE(close(g.ssf, c.ssf)) << "ssf";
}

class GpuAnalysis : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_DEVICE();
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  GpuContext context() const { return {stream_, nullptr}; }

  // GPU (with B = A when square) against the CPU, for several strip widths, through either path
  // (all block rows heavy, none heavy, the default split); the default twice, to check that it is
  // reproducible bit for bit.
  void check(const CsrMatrix<double>& A) {
    const DeviceCopy<double> dA(A, context());
    const bool square = A.rows == A.cols;
    for (int64_t strip : std::initializer_list<int64_t>{0, 1, 5, 64, 1000, int64_t(1) << 40}) {
      SCOPED_TRACE(testing::Message() << "strip_width " << strip);
      const Analysis want = sparsetc::detail::cpu_analyze<double>(A, square ? &A : nullptr, 3, strip);
      const Analysis got =
          sparsetc::detail::gpu_analyze<double>(dA.view, square ? &dA.view : nullptr, strip, context());
      expect_gpu_matches_cpu(got, want);
      const Analysis again =
          sparsetc::detail::gpu_analyze<double>(dA.view, square ? &dA.view : nullptr, strip, context());
      EXPECT_EQ(0, std::memcmp(&got, &again, sizeof got)) << "not reproducible";
      for (int64_t heavy : {int64_t(0), std::numeric_limits<int64_t>::max()}) {
        SCOPED_TRACE(testing::Message() << "heavy_entries " << heavy);
        const Analysis path = sparsetc::detail::analysis_from_sums(sparsetc::detail::gpu_analysis_sums(
            A.rows, A.cols, A.nnz(), dA.view.row_ptr, dA.view.col_idx, square ? dA.view.row_ptr : nullptr, strip,
            context(), heavy));
        expect_gpu_matches_cpu(path, want);
      }
    }
  }
  cudaStream_t stream_ = nullptr;
};

TEST_F(GpuAnalysis, GeneratedMatchCpu) {
  for (const char* spec : {"band:1000:5", "band:77:0", "poisson2d5:40", "poisson3d27:12", "rmat:12:16",
                           "rmat:10:40:0.7:0.1:0.1", "uniform:5000:7:3001", "uniform:300:40:90",
                           "uniform:100:900:20000", "blocks:512:16:0.1:0.8"}) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE(testing::Message() << spec << " seed " << seed);
    check(sparsetc::detail::generate(spec, seed));
  }
}

TEST_F(GpuAnalysis, RandomMatchCpu) {
  struct Case {
    int64_t rows, cols;
    double density;
  };
  for (const Case& c : {Case{1, 1, 1.0}, Case{37, 45, 1.0}, Case{16, 16, 0.5}, Case{300, 200, 0.02},
                        Case{9001, 129, 0.01}, Case{5, 3001, 0.01}, Case{1000, 10, 0.0}, Case{257, 257, 0.3},
                        Case{2000, 2000, 0.002}, Case{40, 5000, 0.3}, Case{100, 70000, 0.05}}) {
    const uint64_t seed = sparsetc_test::fresh_seed();
    SCOPED_TRACE(testing::Message() << c.rows << "x" << c.cols << " density " << c.density << " seed " << seed);
    check(csr_of(sparsetc_test::random_triplets(c.rows, c.cols, c.density, seed)));
  }
}

TEST_F(GpuAnalysis, EmptyShapes) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{0, 0}, {0, 5}, {7, 0}, {33, 40}}) {
    SCOPED_TRACE(testing::Message() << rows << "x" << cols);
    check(csr_of(sparsetc_test::Triplets{rows, cols, {}}));
  }
}

TEST_F(GpuAnalysis, ProductsWithAnotherB) {
  const uint64_t seed = sparsetc_test::fresh_seed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  const CsrMatrix<double> A = csr_of(sparsetc_test::random_triplets(300, 170, 0.05, seed));
  const CsrMatrix<double> B = csr_of(sparsetc_test::random_triplets(170, 61, 0.2, seed + 1));
  const DeviceCopy<double> dA(A, context()), dB(B, context());
  const Analysis got = sparsetc::detail::gpu_analyze<double>(dA.view, &dB.view, 0, context());
  expect_gpu_matches_cpu(got, sparsetc::detail::cpu_analyze<double>(A, &B, 2));
  const Analysis none = sparsetc::detail::gpu_analyze<double>(dA.view, nullptr, 0, context());
  EXPECT_EQ(none.products, -1);
  // A float view gives the same (values are not read).
  const DeviceCopy<float> fA(A, context()), fB(B, context());
  const Analysis f = sparsetc::detail::gpu_analyze<float>(fA.view, &fB.view, 0, context());
  EXPECT_EQ(0, std::memcmp(&f, &got, sizeof f));
}

TEST(GpuAnalysisArguments, Refused) {
  // Checked before any CUDA call: runs without a device too.
  DeviceCsrView<double> A{3, 4, 0, nullptr, nullptr, nullptr}, B{5, 2, 0, nullptr, nullptr, nullptr};
  try {
    sparsetc::detail::gpu_analyze<double>(A, &B, 0, GpuContext{});
    ADD_FAILURE() << "no error";
  } catch (const sparsetc::detail::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_DIMENSION_MISMATCH);
    EXPECT_NE(std::string(e.what()).find("A is 3x4 but B is 5x2"), std::string::npos) << e.what();
  }
  try {
    sparsetc::detail::gpu_analyze<double>(A, nullptr, -2, GpuContext{});
    ADD_FAILURE() << "no error";
  } catch (const sparsetc::detail::Error& e) {
    EXPECT_EQ(e.status(), SPARSETC_STATUS_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("strip_width"), std::string::npos) << e.what();
  }
}

}  // namespace

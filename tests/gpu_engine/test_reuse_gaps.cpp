// The column reuse gaps on the device (column_reuse_gaps) against a count on the host, and the
// C-stationary kernel's column tiles chosen from them (make_row_schedule): narrow where B outgrows
// L2 and its rows are reused far apart (uniform random columns), full where a few columns take
// most entries (R-MAT) or neighbouring rows share columns (a stencil), and full where the gaps' device
// memory is refused; and a multiply with the narrow tiles checked against the float64 reference on
// sampled rows.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gen/generators.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "gpu/spmm/cuda_core/reuse_gaps.hpp"
#include "test_cuda_core_spmm_support.hpp"
#include "test_support.hpp"

namespace {

using namespace cuda_core_test;

// The gaps of the first min(nnz, kReuseGapMaxEntries) entries, counted on the host.
sd::ReuseGaps host_gaps(const std::vector<int64_t>& col_idx, int64_t cols) {
  sd::ReuseGaps g;
  const int64_t n = std::min<int64_t>(int64_t(col_idx.size()), sd::kReuseGapMaxEntries);
  g.entries = n;
  std::vector<int64_t> last(size_t(cols), -1);
  for (int64_t e = 0; e < n; ++e) {
    int64_t& l = last[size_t(col_idx[size_t(e)])];
    if (l >= 0) {
      const int64_t gap = e - l;
      int b = 0;
      while ((int64_t(2) << b) <= gap) ++b;
      ++g.bins[size_t(b)];
    }
    l = e;
  }
  return g;
}

struct DevicePattern {
  sd::DeviceBuffer row_ptr, col_idx;
  sd::CoreRows rows;
};

DevicePattern upload_pattern(GpuHandle& g, const sd::CsrMatrix<double>& a) {
  DevicePattern d;
  const std::vector<int32_t> cols(a.col_idx.begin(), a.col_idx.end());
  d.row_ptr = sd::DeviceBuffer(a.row_ptr.size() * 8, g.gpu());
  d.col_idx = sd::DeviceBuffer(std::max<size_t>(cols.size(), 1) * 4, g.gpu());
  sd::copy_host_to_device(d.row_ptr.data(), a.row_ptr.data(), a.row_ptr.size() * 8, g.stream);
  sd::copy_host_to_device(d.col_idx.data(), cols.data(), cols.size() * 4, g.stream);
  d.rows = sd::CoreRows{a.rows, a.cols, a.rows, a.nnz(), nullptr, d.row_ptr.as<const int64_t>(),
                        d.col_idx.as<const int32_t>(), nullptr};
  return d;
}

TEST(ColumnReuseGaps, MatchTheHostCount) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  // Short and long rows, columns drawn from a small range (short gaps) and a wide one (long gaps),
  // an empty matrix and one entry.
  for (const std::string spec : {"uniform:3000:7:40000", "uniform:5000:30:300", "rmat:12:9", "band:2000:5"}) {
    const sd::CsrMatrix<double> a = sd::generate(spec, seed);
    const DevicePattern d = upload_pattern(g, a);
    const sd::ReuseGaps got = sd::column_reuse_gaps(d.rows.col_idx, a.nnz(), a.cols, g.gpu());
    const sd::ReuseGaps want = host_gaps(a.col_idx, a.cols);
    EXPECT_EQ(got.entries, want.entries) << spec;
    int64_t counted = 0;
    for (int b = 0; b < sd::ReuseGaps::kBins; ++b) {
      EXPECT_EQ(got.bins[size_t(b)], want.bins[size_t(b)]) << spec << " bin " << b << ", seed " << seed;
      counted += got.bins[size_t(b)];
    }
    EXPECT_GT(counted, 0) << spec;  // every one of these reuses columns
  }
  EXPECT_EQ(sd::column_reuse_gaps(nullptr, 0, 10, g.gpu()).entries, 0);
  const int32_t one = 3;
  sd::DeviceBuffer single(4, g.gpu());
  sd::copy_host_to_device(single.data(), &one, 4, g.stream);
  const sd::ReuseGaps g1 = sd::column_reuse_gaps(single.as<const int32_t>(), 1, 10, g.gpu());
  EXPECT_EQ(g1.entries, 1);
  EXPECT_EQ(g1.bins[0], 0);
}

// Bytes of L2 of the current device.
double device_l2_bytes() {
  int device = 0, l2 = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), cudaSuccess);
  return double(l2);
}

// make_row_schedule's default tiles for f16 at N = 512 (tiles of 32 lanes, 512-byte rows of B),
// against the rule worked out here from the host's gaps and the device's L2.
int expected_lanes(const sd::CsrMatrix<double>& a) {
  const double cache = 0.5 * device_l2_bytes();
  if (double(a.cols) * 512.0 <= cache || double(a.nnz()) > 32.0 * double(a.rows)) return 32;
  const sd::ReuseGaps gaps = host_gaps(a.col_idx, a.cols);
  return gaps.reused_within(cache / 128.0) - gaps.reused_within(cache / 512.0) >= 0.33 ? 8 : 32;
}

TEST(CudaCoreSpmm, NarrowColumnTilesWhereBOutgrowsL2) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const double l2 = device_l2_bytes();
  const uint64_t seed = sparsetc_test::fresh_seed();
  struct Input {
    const char* spec;
    int lanes_at_most_64mb_l2;  // what an L2 of up to 64 MB (H100, H200) gives
  };
  // uniform: B's rows reused about every 120k entries; R-MAT: its hub columns take most entries;
  // the stencil: rows share columns with their neighbours; the band: B (8000 rows) fits.
  for (const Input& in : {Input{"uniform:120000:16", 8}, Input{"rmat:17:16", 32}, Input{"poisson2d5:700", 32},
                          Input{"band:8000:3", 32}}) {
    const sd::CsrMatrix<double> a = sd::generate(in.spec, seed);
    const DevicePattern d = upload_pattern(g, a);
    const auto start = std::chrono::steady_clock::now();
    const sd::RowSchedule s = sd::make_row_schedule(d.rows, sd::CorePrecision::f16, 512, nullptr, g.gpu());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const int lanes = 1 << s.tiling.lanes_n_log;
    EXPECT_EQ(lanes, expected_lanes(a)) << in.spec << ": " << s.note;
    if (l2 <= double(64 << 20)) {
      EXPECT_EQ(lanes, in.lanes_at_most_64mb_l2) << in.spec << ": " << s.note;
    }
    EXPECT_EQ(s.tiling.tiles, 512 / (lanes * 8));
    EXPECT_EQ(s.note.empty(), double(a.cols) * 512.0 <= 0.5 * l2) << in.spec << ": " << s.note;
    // Asked for: the cap, whatever the rule says; and what weighing the rule cost at plan time.
    sd::RowScheduleOptions full;
    full.tile_lanes = 32;
    const auto start_full = std::chrono::steady_clock::now();
    EXPECT_EQ(sd::make_row_schedule(d.rows, sd::CorePrecision::f16, 512, nullptr, g.gpu(), full).tiling.lanes_n_log, 5);
    const double full_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_full).count();
    std::printf("%s (%lld entries): %d lanes, schedule %.2f ms (%.2f ms with the tiles fixed); %s\n", in.spec,
                static_cast<long long>(a.nnz()), lanes, ms, full_ms, s.note.c_str());
  }
  // Caps that are not a power of two up to 32.
  const sd::CsrMatrix<double> small = sd::generate("band:100:2", seed);
  const DevicePattern d = upload_pattern(g, small);
  for (int bad : {3, 64, -1}) {
    sd::RowScheduleOptions o;
    o.tile_lanes = bad;
    EXPECT_THROW(sd::make_row_schedule(d.rows, sd::CorePrecision::f32, 64, nullptr, g.gpu(), o), sd::Error) << bad;
  }
}

// Device memory that refuses allocations from `limit` bytes on (the others from cudaMallocAsync),
// counting what is live.
class RefusingAllocator final : public sd::DeviceAllocator {
 public:
  explicit RefusingAllocator(size_t limit) : limit_(limit) {}
  void* allocate(size_t bytes, cudaStream_t stream) override {
    if (bytes >= limit_) {
      ++refused;
      throw sd::Error(SPARSETC_STATUS_ALLOC_FAILED, "refused " + std::to_string(bytes) + " bytes");
    }
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, stream) != cudaSuccess) throw sd::Error(SPARSETC_STATUS_ALLOC_FAILED, "cudaMallocAsync");
    live += bytes;
    return p;
  }
  void deallocate(void* p, size_t bytes, cudaStream_t stream) noexcept override {
    cudaFreeAsync(p, stream);
    live -= bytes;
  }
  int refused = 0;
  size_t live = 0;

 private:
  size_t limit_;
};

// Without the device memory the reuse gaps take (about 24 bytes an entry), the schedule keeps full
// tiles and says why, instead of failing the plan; nothing is left allocated.
TEST(CudaCoreSpmm, ColumnTilesStayFullWithoutMemoryForTheGaps) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const double l2 = device_l2_bytes();
  const sd::CsrMatrix<double> a = sd::generate("uniform:120000:16", sparsetc_test::fresh_seed());
  if (double(a.cols) * 512.0 <= 0.5 * l2) GTEST_SKIP() << "B fits this device's L2: the gaps are not sought";
  const DevicePattern d = upload_pattern(g, a);
  RefusingAllocator refusing(size_t(4) << 20);  // the gaps' buffers are 7.7 MB; the schedule's own under 1 MB
  sd::GpuContext context = g.gpu();
  context.allocator = &refusing;
  {
    const sd::RowSchedule s = sd::make_row_schedule(d.rows, sd::CorePrecision::f16, 512, nullptr, context);
    EXPECT_GT(refusing.refused, 0);
    EXPECT_EQ(s.tiling.lanes_n_log, 5);
    EXPECT_NE(s.note.find("not weighed"), std::string::npos) << s.note;
    EXPECT_NE(s.note.find("refused"), std::string::npos) << s.note;
  }
  ASSERT_EQ(cudaStreamSynchronize(g.stream), cudaSuccess);
  EXPECT_EQ(refusing.live, 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // With the memory, the same pattern gets the rule's tiles.
  EXPECT_EQ(1 << sd::make_row_schedule(d.rows, sd::CorePrecision::f16, 512, nullptr, g.gpu()).tiling.lanes_n_log,
            expected_lanes(a));
}

// The narrow tiles' multiply (f16, C f32, N = 512: 8 tiles of 64 columns, B 123 MB), every element
// of 400 sampled rows against the float64 reference, and every element written.
TEST(CudaCoreSpmm, NarrowColumnTilesMultiply) {
  SKIP_WITHOUT_DEVICE();
  GpuHandle g;
  const uint64_t seed = sparsetc_test::fresh_seed();
  const sd::CsrMatrix<double> a = sd::generate("uniform:120000:16", seed);
  const int64_t n = 512;
  std::mt19937_64 rng(seed + 1);
  std::vector<unsigned char> vals(a.values.size() * 2);
  std::vector<double> a_rounded(a.values.size());
  for (size_t e = 0; e < a.values.size(); ++e) a_rounded[e] = store_value(SPARSETC_VALUE_F16, a.values[e], vals.data() + e * 2);
  DevicePattern d = upload_pattern(g, a);
  sd::DeviceBuffer values(vals.size(), g.gpu());
  sd::copy_host_to_device(values.data(), vals.data(), vals.size(), g.stream);
  d.rows.values = values.data();
  sd::RowSchedule s = sd::make_row_schedule(d.rows, sd::CorePrecision::f16, n, nullptr, g.gpu());
  if (expected_lanes(a) != 8) GTEST_SKIP() << "this device's L2 keeps full tiles here: " << s.note;
  ASSERT_EQ(s.tiling.tiles, 8) << s.note;
  Dense B(a.cols, n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F16, 0, 0), C(a.rows, n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
  for (int64_t r = 0; r < B.rows; ++r)
    for (int64_t c = 0; c < n; ++c) B.set(r, c, random_entry(rng));
  B.to_device(g);
  C.to_device(g);  // NaN everywhere: an element not written stays NaN
  sd::CoreDenseArgs args;
  args.n = n;
  args.B = B.desc().values;
  args.ldb = n;
  args.C = C.desc().values;
  args.ldc = n;
  args.alpha = 1.5;
  sd::DeviceBuffer workspace(std::max<size_t>(s.workspace_bytes, 16), g.gpu());
  sd::row_spmm(d.rows, sd::CorePrecision::f16, s, args, workspace.data(), g.stream);
  C.to_host(g);
  int64_t nan = 0;
  for (int64_t r = 0; r < C.rows; ++r)
    for (int64_t c = 0; c < n; ++c) nan += std::isnan(C.get(r, c)) ? 1 : 0;
  EXPECT_EQ(nan, 0);
  double worst = 0;
  for (int i = 0; i < 400; ++i) {
    const int64_t r = int64_t(rng() % uint64_t(a.rows));
    for (int64_t c = 0; c < n; ++c) {
      double want = 0, scale = 0;
      for (int64_t e = a.row_ptr[size_t(r)]; e < a.row_ptr[size_t(r + 1)]; ++e) {
        const double p = a_rounded[size_t(e)] * B.get(a.col_idx[size_t(e)], c);
        want += p;
        scale += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(C.get(r, c) - 1.5 * want) / std::max(1.5 * scale, 1e-30));
    }
  }
  // f16 x f16 products are exact in fp32; 15 fp32 additions and the scaling by alpha round.
  EXPECT_LT(worst, 2e-6) << "seed " << seed;
}

}  // namespace

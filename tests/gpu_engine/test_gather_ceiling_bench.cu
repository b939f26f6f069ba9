// The ceiling an SpMM's gathers of B rows run against (not a correctness test): runs only with
// SPARSETC_BENCH=1 on a device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='GatherCeilingBench.*'
// Every nonzero of A makes a C-stationary SpMM read one row of B (N values) at a column that the
// kernel learns from memory. This kernel does only that: each group of lanes reads rows of an fp32
// B at random row indices (16 bytes a lane, 4 rows in flight) and sums them, so its bytes per
// second are what gathering B can reach at best, from L2 when B fits there and from DRAM when it
// does not. Row widths of 32, 128 and 512 fp32 columns (N of the SpMM), B of 8 MB to 1 GB.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpu_engine_support.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kInFlight = 4;

// Group of `lanes` lanes per gathered row (lanes * 4 floats = the row); `rows` gathers per group.
__global__ void gather_rows(const float4* __restrict__ b, int64_t b_rows, int lanes, int64_t rows_per_group,
                            float* __restrict__ out) {
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t group = thread / lanes;
  const int lane = int(thread % lanes);
  float4 acc = make_float4(0, 0, 0, 0);
  uint32_t state = uint32_t(group * 2654435761ull + 12345);
  for (int64_t r = 0; r < rows_per_group; r += kInFlight) {
    float4 v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      state = state * 1664525u + 1013904223u;  // the same row for every lane of the group
      const int64_t row = int64_t(state >> 4) % b_rows;
      v[u] = __ldg(b + row * lanes + lane);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      acc.x += v[u].x;
      acc.y += v[u].y;
      acc.z += v[u].z;
      acc.w += v[u].w;
    }
  }
  out[thread] = acc.x + acc.y + acc.z + acc.w;
}

TEST(GatherCeilingBench, RowsOfB) {
  SKIP_WITHOUT_DEVICE();
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the gathers";
  cudaDeviceProp prop{};
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  std::printf("device: %s (%d SMs, L2 %d MB)\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  std::printf("%6s %8s %10s %10s\n", "N", "B MB", "ms", "GB/s");
  const int64_t b_bytes_max = int64_t(1) << 30;
  float4* b = nullptr;
  float* out = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, size_t(b_bytes_max)), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(b, 0x3c, size_t(b_bytes_max), stream), cudaSuccess);
  const int64_t ctas = int64_t(prop.multiProcessorCount) * 8;
  const int64_t threads = ctas * kThreads;
  ASSERT_EQ(cudaMalloc(&out, size_t(threads) * sizeof(float)), cudaSuccess);
  for (const int n : {32, 128, 512}) {
    const int lanes = n / 4;
    for (const int64_t b_mb : {8, 32, 1024}) {
      const int64_t b_rows = (b_mb << 20) / (int64_t(n) * 4);
      const int64_t groups = threads / lanes;
      const int64_t rows_per_group = std::max<int64_t>(kInFlight, (int64_t(2) << 30) / (groups * n * 4));
      const double bytes = double(groups) * double(rows_per_group) * n * 4.0;
      const double ms = sparsetc_test::median_event_ms(stream, 2, 10, [&] {
        gather_rows<<<unsigned(ctas), kThreads, 0, stream>>>(b, b_rows, lanes, rows_per_group, out);
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      });
      std::printf("%6d %8lld %10.4f %10.0f\n", n, (long long)b_mb, ms, bytes / (ms * 1e6));
    }
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaFree(out), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace

// Shared by the engine-level GPU tests: skipping without a device, a non-blocking stream of the
// test's own (so work is checked off the legacy default stream), bit-exact array comparison, and
// the benchmarks' event timer and environment lists.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "formats/sparse.hpp"
#include "gpu/allocators.hpp"
#include "gpu/gpu_context.hpp"

#define SKIP_WITHOUT_DEVICE()                              \
  do {                                                     \
    int n = 0;                                             \
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) { \
      cudaGetLastError();                                  \
      GTEST_SKIP() << "no CUDA device";                    \
    }                                                      \
  } while (0)

namespace sparsetc_test {

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { cudaStreamDestroy(stream); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  sparsetc::detail::GpuContext context() const { return sparsetc::detail::GpuContext{stream, nullptr}; }
};

// Every allocation filled with 0xFF bytes: NaN in float and double, -1 in indices, so a result
// element nobody wrote cannot pass for a right one.
class PoisonAllocator final : public sparsetc::detail::DeviceAllocator {
 public:
  void* allocate(size_t bytes, cudaStream_t stream) override {
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, stream) != cudaSuccess)
      sparsetc::detail::fail(SPARSETC_STATUS_ALLOC_FAILED, "test allocation");
    cudaMemsetAsync(p, 0xFF, bytes, stream);
    return p;
  }
  void deallocate(void* ptr, size_t, cudaStream_t stream) noexcept override { cudaFreeAsync(ptr, stream); }
};

// A fixture with a stream of its own and poisoned allocations; skips without a device.
class PoisonedGpuTest : public ::testing::Test {
 public:
  sparsetc::detail::GpuContext context() { return {stream_, &poison_}; }

 protected:
  void SetUp() override {
    SKIP_WITHOUT_DEVICE();
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) {
      EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      cudaStreamDestroy(stream_);
    }
  }
  cudaStream_t stream_ = nullptr;
  PoisonAllocator poison_;
};

// Arrays equal bit for bit (values compared as bytes: NaN payloads and signed zeros count).
template <typename T>
::testing::AssertionResult same(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << what << ": " << got.size() << " elements, want " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << what << "[" << i << "] = " << +got[i] << ", want " << +want[i]
                                           << " (of " << got.size() << ")";
  return ::testing::AssertionSuccess();
}

// Median of `runs` event-timed calls of f on `stream` after `warmup` untimed ones, in ms.
template <typename F>
double median_event_ms(cudaStream_t stream, int warmup, int runs, F&& f) {
  for (int i = 0; i < warmup; ++i) f();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaEvent_t start, stop;
  EXPECT_EQ(cudaEventCreate(&start), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&stop), cudaSuccess);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    cudaEventRecord(start, stream);
    f();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The comma-separated list in environment variable `name`, or `fallback` when it is not set.
inline std::vector<std::string> env_list(const char* name, std::vector<std::string> fallback) {
  const char* env = std::getenv(name);
  if (!env) return fallback;
  std::vector<std::string> out;
  std::stringstream in(env);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// A float64 host matrix with its values converted to V (float or double).
template <typename V>
sparsetc::detail::CsrMatrix<V> values_as(const sparsetc::detail::CsrMatrix<double>& m) {
  sparsetc::detail::CsrMatrix<V> out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.row_ptr = m.row_ptr;
  out.col_idx = m.col_idx;
  out.values.assign(m.values.begin(), m.values.end());
  return out;
}

// |m| entry by entry: the product |A||B| bounds the rounding error of A B.
inline sparsetc::detail::CsrMatrix<double> absolute(sparsetc::detail::CsrMatrix<double> m) {
  for (double& x : m.values) x = std::fabs(x);
  return m;
}

}  // namespace sparsetc_test

// Compares member `field` of the structs `got` and `want` with same(); `where` names the case.
#define EXPECT_SAME(field) EXPECT_TRUE(::sparsetc_test::same(#field, got.field, want.field)) << where

// Shared by the engine-level GPU tests: skipping without a device, a non-blocking stream of the
// test's own (so work is checked off the legacy default stream), and bit-exact array comparison.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

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

}  // namespace sparsetc_test

// Compares member `field` of the structs `got` and `want` with same(); `where` names the case.
#define EXPECT_SAME(field) EXPECT_TRUE(::sparsetc_test::same(#field, got.field, want.field)) << where

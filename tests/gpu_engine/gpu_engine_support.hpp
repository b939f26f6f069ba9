// Shared by the engine-level GPU tests: skipping without a device, and a non-blocking stream of
// the test's own (so work is checked off the legacy default stream).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

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

}  // namespace sparsetc_test

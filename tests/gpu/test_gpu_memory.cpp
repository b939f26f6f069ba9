// The GPU runtime's memory and stream contract: allocations accounted per handle, the caller's
// allocator honoured, and work ordered on the handle's stream only (never the default stream).
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "gpu_support.hpp"
#include "test_support.hpp"

using namespace sparsetc_test;

namespace {

class GpuMemory : public GpuTest {
 protected:
  sparsetc_memory_stats_t stats() {
    sparsetc_memory_stats_t s{};
    s.struct_size = sizeof s;
    EXPECT_EQ(sparsetc_get_memory_stats(gpu_, &s), SPARSETC_STATUS_SUCCESS);
    return s;
  }
  sparsetc_matrix_t device_matrix(const char* spec) {
    sparsetc_matrix_t host = nullptr, converted = nullptr, dev = nullptr;
    EXPECT_EQ(sparsetc_matrix_generate(cpu_, spec, fresh_seed(), SPARSETC_VALUE_F32, &host), SPARSETC_STATUS_SUCCESS);
    EXPECT_EQ(sparsetc_matrix_convert(cpu_, host, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                      SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32, &converted),
              SPARSETC_STATUS_SUCCESS);
    EXPECT_EQ(sparsetc_matrix_copy_to(gpu_, converted, SPARSETC_MEMORY_DEVICE, &dev), SPARSETC_STATUS_SUCCESS)
        << last_error(gpu_);
    sparsetc_matrix_destroy(converted);
    sparsetc_matrix_destroy(host);
    return dev;
  }
};

TEST_F(GpuMemory, MatricesAreAccountedAndReleased) {
  const auto before = stats();
  EXPECT_EQ(before.current_bytes, 0);
  sparsetc_matrix_t A = device_matrix("poisson2d5:100");  // 10000 rows, 49600 entries
  const int64_t expected = (10000 + 1) * 4 + 49600 * 4 + 49600 * 4;
  auto during = stats();
  EXPECT_EQ(during.current_bytes, expected);
  EXPECT_EQ(during.live_allocations, 3);
  EXPECT_GE(during.pool_reserved_bytes, expected);
  sparsetc_matrix_destroy(A);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  auto after = stats();
  EXPECT_EQ(after.current_bytes, 0);
  EXPECT_EQ(after.live_allocations, 0);
  EXPECT_EQ(after.peak_bytes, expected);
  ASSERT_OK(gpu_, sparsetc_reset_peak_memory(gpu_));
  EXPECT_EQ(stats().peak_bytes, 0);
}

struct CountingAllocator {
  std::atomic<int> allocations{0}, frees{0};
  std::atomic<int64_t> live_bytes{0};
  static int32_t allocate(void* self, void** ptr, size_t bytes, void* stream) {
    auto* me = static_cast<CountingAllocator*>(self);
    if (cudaMallocAsync(ptr, bytes, static_cast<cudaStream_t>(stream)) != cudaSuccess) return 1;
    me->allocations++;
    me->live_bytes += int64_t(bytes);
    return 0;
  }
  static void deallocate(void* self, void* ptr, size_t bytes, void* stream) {
    auto* me = static_cast<CountingAllocator*>(self);
    cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
    me->frees++;
    me->live_bytes -= int64_t(bytes);
  }
};

TEST_F(GpuMemory, CallersAllocatorServesEveryAllocation) {
  CountingAllocator counter;
  sparsetc_allocator_t callbacks{sizeof(sparsetc_allocator_t), &counter, CountingAllocator::allocate,
                                 CountingAllocator::deallocate};
  ASSERT_OK(gpu_, sparsetc_set_allocator(gpu_, &callbacks));
  sparsetc_matrix_t A = device_matrix("band:1000:3");
  EXPECT_EQ(counter.allocations.load(), 3);
  // Swapping allocators while memory is held would free memory through the wrong one.
  EXPECT_EQ(sparsetc_set_allocator(gpu_, nullptr), SPARSETC_STATUS_INVALID_STATE);
  EXPECT_EQ(stats().pool_reserved_bytes, 0);
  sparsetc_matrix_destroy(A);
  EXPECT_EQ(counter.frees.load(), 3);
  EXPECT_EQ(counter.live_bytes.load(), 0);
  ASSERT_OK(gpu_, sparsetc_set_allocator(gpu_, nullptr));
}

TEST_F(GpuMemory, FailingAllocatorGivesAllocFailedAndLeavesNothing) {
  sparsetc_allocator_t refusing{sizeof(sparsetc_allocator_t), nullptr,
                                [](void*, void**, size_t, void*) -> int32_t { return 7; },
                                [](void*, void*, size_t, void*) {}};
  sparsetc_matrix_t host = nullptr, dev = nullptr;
  ASSERT_OK(cpu_, sparsetc_matrix_generate(cpu_, "band:100:2", 1, SPARSETC_VALUE_F64, &host));
  ASSERT_OK(gpu_, sparsetc_set_allocator(gpu_, &refusing));
  EXPECT_EQ(sparsetc_matrix_copy_to(gpu_, host, SPARSETC_MEMORY_DEVICE, &dev), SPARSETC_STATUS_ALLOC_FAILED);
  EXPECT_EQ(dev, nullptr);
  EXPECT_EQ(stats().live_allocations, 0);
  ASSERT_OK(gpu_, sparsetc_set_allocator(gpu_, nullptr));
  sparsetc_matrix_destroy(host);
}

TEST_F(GpuMemory, CallsRestoreTheCallersDevice) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  sparsetc_matrix_t A = device_matrix("band:64:1");
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
  sparsetc_matrix_destroy(A);
}

// A host function blocks the legacy default stream; SpMM on the handle's non-blocking stream
// must still complete. If the library used the default stream, or synchronised the device, it
// would wait behind the blocked stream: the test then releases it after a timeout and fails.
TEST_F(GpuMemory, WorkRunsOnTheHandlesStreamOnly) {
  cudaStream_t own = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_OK(gpu_, sparsetc_set_stream(gpu_, own));
  sparsetc_matrix_t A = device_matrix("poisson2d5:64");
  const int64_t n = 16, rows = 64 * 64;
  float *b = nullptr, *c = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&b), sizeof(float) * rows * n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&c), sizeof(float) * rows * n), cudaSuccess);
  ASSERT_EQ(cudaMemset(b, 0, sizeof(float) * rows * n), cudaSuccess);
  sparsetc_dense_t B = nullptr, C = nullptr;
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &B, rows, n, n, b, SPARSETC_VALUE_F32, SPARSETC_ORDER_ROW,
                                        SPARSETC_MEMORY_DEVICE));
  ASSERT_OK(gpu_, sparsetc_dense_create(gpu_, &C, rows, n, n, c, SPARSETC_VALUE_F32, SPARSETC_ORDER_ROW,
                                        SPARSETC_MEMORY_DEVICE));
  sparsetc_spmm_plan_t plan = nullptr;
  ASSERT_OK(gpu_, sparsetc_spmm_plan_create(gpu_, &plan, SPARSETC_OP_NON_TRANSPOSE, A, B, C,
                                            SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPMM_ALG_AUTO));
  size_t bytes = 0;
  ASSERT_OK(gpu_, sparsetc_spmm_workspace_size(plan, &bytes));
  void* workspace = nullptr;
  ASSERT_EQ(cudaMalloc(&workspace, bytes ? bytes : 1), cudaSuccess);
  // One execution first: the driver loads kernels lazily at their first launch, and loading may
  // synchronise the device; that is the driver's, not a use of the default stream.
  ASSERT_OK(gpu_, sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, workspace, bytes));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::atomic<bool> release{false};
  ASSERT_EQ(cudaLaunchHostFunc(
                cudaStreamLegacy,
                [](void* flag) {
                  while (!static_cast<std::atomic<bool>*>(flag)->load())
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                },
                &release),
            cudaSuccess);
  auto done = std::async(std::launch::async, [&] {
    sparsetc_status_t s = sparsetc_spmm_execute(plan, 1.0, B, 0.0, C, workspace, bytes);
    if (s != SPARSETC_STATUS_SUCCESS) return false;
    while (cudaStreamQuery(own) == cudaErrorNotReady) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return cudaStreamQuery(own) == cudaSuccess;
  });
  const bool finished = done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  release = true;
  EXPECT_TRUE(finished) << "SpMM waited for the blocked default stream";
  EXPECT_TRUE(done.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  sparsetc_spmm_plan_destroy(plan);
  sparsetc_dense_destroy(B);
  sparsetc_dense_destroy(C);
  sparsetc_matrix_destroy(A);
  cudaFree(workspace);
  cudaFree(b);
  cudaFree(c);
  ASSERT_OK(gpu_, sparsetc_set_stream(gpu_, stream_));
  cudaStreamDestroy(own);
}

}  // namespace

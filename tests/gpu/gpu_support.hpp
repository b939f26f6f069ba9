// GPU test helpers: skip without a device, device buffers, and a GPU-backend handle.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sparsetc/sparsetc.h>

#include <string>
#include <vector>

namespace sparsetc_test {

inline bool gpu_present() {
  int32_t count = 0;
  return sparsetc_get_device_count(&count) == SPARSETC_STATUS_SUCCESS && count > 0;
}

#define SKIP_WITHOUT_GPU() \
  if (!::sparsetc_test::gpu_present()) GTEST_SKIP() << "no CUDA device"

inline std::string last_error(sparsetc_handle_t h) {
  char message[1024];
  sparsetc_get_last_error(h, message, sizeof message);
  return message;
}

#define ASSERT_OK(handle, call) \
  ASSERT_EQ((call), SPARSETC_STATUS_SUCCESS) << #call << ": " << ::sparsetc_test::last_error(handle)

// Owns device memory holding a copy of a host vector.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host) : size_(host.size()) {
    EXPECT_EQ(cudaMalloc(&data_, bytes() ? bytes() : 1), cudaSuccess);
    if (bytes()) {
      EXPECT_EQ(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return static_cast<T*>(data_); }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (bytes()) {
      EXPECT_EQ(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return host;
  }

 private:
  size_t bytes() const { return size_ * sizeof(T); }
  void* data_ = nullptr;
  size_t size_ = 0;
};

// A caller's allocator that fills every allocation with 0xFF (NaN values, -1 indices), to prove
// that every output element is written.
inline int32_t poison_allocate(void*, void** ptr, size_t bytes, void* stream) {
  if (cudaMallocAsync(ptr, bytes, static_cast<cudaStream_t>(stream)) != cudaSuccess) return 1;
  return cudaMemsetAsync(*ptr, 0xFF, bytes, static_cast<cudaStream_t>(stream)) == cudaSuccess ? 0 : 1;
}
inline void poison_deallocate(void*, void* ptr, size_t, void* stream) {
  cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
}
inline sparsetc_allocator_t poisoning_allocator() {
  return sparsetc_allocator_t{sizeof(sparsetc_allocator_t), nullptr, poison_allocate, poison_deallocate};
}

// A sparse matrix's entries on the host in row order: zero-based, float64, read through a host
// copy (on `owner`, the handle that holds it) and the CPU backend's conversion to COO. `type` is
// the value type the matrix stores; m and n its shape.
struct Entries {
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  int64_t m = 0, n = 0;
  sparsetc_value_type_t type = SPARSETC_VALUE_F32;
};
inline Entries read_entries(sparsetc_handle_t owner, sparsetc_handle_t cpu, sparsetc_matrix_t M) {
  Entries e;
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(sparsetc_matrix_get_info(M, &info), SPARSETC_STATUS_SUCCESS);
  e.type = info.value_type;
  e.m = info.rows;
  e.n = info.cols;
  sparsetc_matrix_t host = nullptr, coo = nullptr;
  EXPECT_EQ(sparsetc_matrix_copy_to(owner, M, SPARSETC_MEMORY_HOST, &host), SPARSETC_STATUS_SUCCESS)
      << last_error(owner);
  EXPECT_EQ(sparsetc_matrix_convert(cpu, host, SPARSETC_FORMAT_COO, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                    SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &coo),
            SPARSETC_STATUS_SUCCESS)
      << last_error(cpu);
  void *r = nullptr, *c = nullptr, *v = nullptr;
  if (coo && sparsetc_matrix_get_info(coo, &info) == SPARSETC_STATUS_SUCCESS &&
      sparsetc_matrix_get_arrays(coo, &r, &c, &v) == SPARSETC_STATUS_SUCCESS && info.nnz > 0) {
    e.rows.assign(static_cast<int64_t*>(r), static_cast<int64_t*>(r) + info.nnz);
    e.cols.assign(static_cast<int64_t*>(c), static_cast<int64_t*>(c) + info.nnz);
    e.vals.assign(static_cast<double*>(v), static_cast<double*>(v) + info.nnz);
  }
  sparsetc_matrix_destroy(host);
  sparsetc_matrix_destroy(coo);
  return e;
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    ASSERT_EQ(sparsetc_create_with_backend(&gpu_, SPARSETC_BACKEND_GPU, 0), SPARSETC_STATUS_SUCCESS);
    ASSERT_EQ(sparsetc_create_with_backend(&cpu_, SPARSETC_BACKEND_CPU, 0), SPARSETC_STATUS_SUCCESS);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_OK(gpu_, sparsetc_set_stream(gpu_, stream_));
  }
  void TearDown() override {
    if (gpu_) sparsetc_destroy(gpu_);
    if (cpu_) sparsetc_destroy(cpu_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  sparsetc_handle_t gpu_ = nullptr;
  sparsetc_handle_t cpu_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace sparsetc_test

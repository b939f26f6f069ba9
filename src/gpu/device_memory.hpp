// Device memory of the GPU backend: owning buffers and explicit host/device copies. Allocation
// failures are ALLOC_FAILED (a distinct status, so callers such as Julia's can free and retry).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {

// Number of usable CUDA devices; 0 without a GPU or driver (never throws).
int cuda_device_count();

// Owns `bytes` of device memory, allocated ordered on the context's stream (from its allocator,
// or cudaMallocAsync) and released the same way.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t bytes, const GpuContext& context);
  DeviceBuffer(size_t bytes, cudaStream_t stream) : DeviceBuffer(bytes, GpuContext{stream, nullptr}) {}
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Memory someone else owns (a caller's array, read in place): never freed here.
  static DeviceBuffer borrow(const void* data, size_t bytes) {
    DeviceBuffer view;
    view.data_ = const_cast<void*>(data);
    view.bytes_ = bytes;
    view.owned_ = false;
    return view;
  }

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    std::swap(stream_, other.stream_);
    std::swap(allocator_, other.allocator_);
    std::swap(owned_, other.owned_);
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  DeviceAllocator* allocator_ = nullptr;
  bool owned_ = true;
};

void copy_host_to_device(void* device, const void* host, size_t bytes, cudaStream_t stream);
// Waits for the copy: the host data is needed now (a documented synchronisation point).
void copy_device_to_host(void* host, const void* device, size_t bytes, cudaStream_t stream);
void copy_device_to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream);
// True when ptr is device (or managed) memory that kernels can read.
bool is_device_pointer(const void* ptr);

}  // namespace sparsetc::detail

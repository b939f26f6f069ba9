// What every GPU routine needs: the stream that orders its work and where device memory comes
// from (the stream-ordered pool by default, or the caller's allocator).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace sparsetc::detail {

// Source of device memory. The default (no allocator) is cudaMallocAsync/cudaFreeAsync on the
// context's stream; a handle may install the caller's callbacks (PyTorch, CuPy, RMM pools).
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  virtual void* allocate(size_t bytes, cudaStream_t stream) = 0;  // throws Error(ALLOC_FAILED) on failure
  virtual void deallocate(void* ptr, size_t bytes, cudaStream_t stream) noexcept = 0;
};

struct GpuContext {
  cudaStream_t stream = nullptr;
  DeviceAllocator* allocator = nullptr;  // nullptr: cudaMallocAsync on `stream`
};

}  // namespace sparsetc::detail

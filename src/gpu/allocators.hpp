// Device memory sources of a handle: its own stream-ordered pool (memory stays cached between
// calls, isolated from the application's default pool), or the caller's callbacks; and the
// accounting (current, peak, count) wrapped around either.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

#include "gpu/gpu_context.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

class PoolAllocator final : public DeviceAllocator {
 public:
  explicit PoolAllocator(int device);
  ~PoolAllocator() override;
  void* allocate(size_t bytes, cudaStream_t stream) override;
  void deallocate(void* ptr, size_t bytes, cudaStream_t stream) noexcept override;
  size_t reserved_bytes() const;  // memory the pool holds from the device, in use or cached

 private:
  cudaMemPool_t pool_ = nullptr;
};

class CallbackAllocator final : public DeviceAllocator {
 public:
  explicit CallbackAllocator(const sparsetc_allocator_t& callbacks) : callbacks_(callbacks) {}
  void* allocate(size_t bytes, cudaStream_t stream) override;
  void deallocate(void* ptr, size_t bytes, cudaStream_t stream) noexcept override;

 private:
  sparsetc_allocator_t callbacks_;
};

// Counts what passes through to `source` (which can be swapped while nothing is allocated).
class TrackingAllocator final : public DeviceAllocator {
 public:
  void set_source(DeviceAllocator* source) { source_ = source; }
  void* allocate(size_t bytes, cudaStream_t stream) override;
  void deallocate(void* ptr, size_t bytes, cudaStream_t stream) noexcept override;
  int64_t current_bytes() const { return current_.load(); }
  int64_t peak_bytes() const { return peak_.load(); }
  int64_t allocations() const { return allocations_.load(); }
  int64_t live_allocations() const { return live_.load(); }
  void reset_peak() { peak_.store(current_.load()); }

 private:
  DeviceAllocator* source_ = nullptr;
  std::atomic<int64_t> current_{0}, peak_{0}, allocations_{0}, live_{0};
};

}  // namespace sparsetc::detail

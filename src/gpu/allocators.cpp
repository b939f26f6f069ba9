#include "gpu/allocators.hpp"

#include <cstdint>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {

PoolAllocator::PoolAllocator(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  SPARSETC_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  // Keep freed memory cached in the pool: repeated multiplies then allocate at no cost.
  uint64_t keep = UINT64_MAX;
  SPARSETC_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
}

PoolAllocator::~PoolAllocator() {
  if (pool_) cudaMemPoolDestroy(pool_);
}

void* PoolAllocator::allocate(size_t bytes, cudaStream_t stream) {
  void* ptr = nullptr;
  cudaError_t e = cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    // Give cached memory back to the device and try once more before failing.
    SPARSETC_CUDA_CHECK(cudaStreamSynchronize(stream));
    SPARSETC_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
    e = cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream);
  }
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(SPARSETC_STATUS_ALLOC_FAILED, "out of device memory allocating ", bytes, " bytes");
  }
  SPARSETC_CUDA_CHECK(e);
  return ptr;
}

void PoolAllocator::deallocate(void* ptr, size_t, cudaStream_t stream) noexcept { cudaFreeAsync(ptr, stream); }

size_t PoolAllocator::reserved_bytes() const {
  uint64_t reserved = 0;
  cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved);
  return size_t(reserved);
}

void* CallbackAllocator::allocate(size_t bytes, cudaStream_t stream) {
  void* ptr = nullptr;
  const int code = callbacks_.allocate(callbacks_.user_data, &ptr, bytes, stream);
  require(code == 0 && (ptr != nullptr || bytes == 0), SPARSETC_STATUS_ALLOC_FAILED,
          "the caller's allocator failed to allocate ", bytes, " bytes (returned ", code, ")");
  return ptr;
}

void CallbackAllocator::deallocate(void* ptr, size_t bytes, cudaStream_t stream) noexcept {
  callbacks_.deallocate(callbacks_.user_data, ptr, bytes, stream);
}

void* TrackingAllocator::allocate(size_t bytes, cudaStream_t stream) {
  void* ptr = source_->allocate(bytes, stream);
  const int64_t now = current_.fetch_add(int64_t(bytes)) + int64_t(bytes);
  int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  allocations_.fetch_add(1);
  live_.fetch_add(1);
  SPARSETC_LOG(trace, "device allocate ", bytes, " bytes at ", ptr, " (current ", now, ")");
  return ptr;
}

void TrackingAllocator::deallocate(void* ptr, size_t bytes, cudaStream_t stream) noexcept {
  source_->deallocate(ptr, bytes, stream);
  current_.fetch_sub(int64_t(bytes));
  live_.fetch_sub(1);
}

}  // namespace sparsetc::detail

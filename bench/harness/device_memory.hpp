// Device memory of the harness. Every allocation is counted, so each variant's peak memory is the
// peak of the bytes it allocated itself (workspace, converted A, its outputs when it creates them).
#pragma once

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace bench {

struct HostCsr;

// Bytes allocated through DeviceBuffer and StreamAllocator: now and the peak since the last mark.
class MemoryTracker {
 public:
  static void allocated(size_t bytes);
  static void freed(size_t bytes);
  static size_t current();
  // Starts a measurement: returns the current bytes and resets the peak to them.
  static size_t mark();
  static size_t peak_since(size_t mark);
};

// Owning cudaMalloc allocation (move-only). Allocation failures throw VariantError.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t size() const { return bytes_; }
  void reset();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// The buffers of one SpGEMM variant: plain cudaMalloc/cudaFree, or stream-ordered allocations from
// a pool of its own whose release threshold is raised, so that after the warm-up runs every
// allocation is served from cached memory.
class StreamAllocator {
 public:
  StreamAllocator(bool pooled, cudaStream_t stream, int device);
  ~StreamAllocator();
  StreamAllocator(const StreamAllocator&) = delete;
  StreamAllocator& operator=(const StreamAllocator&) = delete;

  void* allocate(size_t bytes);  // at least 256 bytes, never nullptr
  void release(void* p);         // nullptr is a no-op
  void release_all();
  bool pooled() const { return pool_ != nullptr; }

 private:
  cudaStream_t stream_;
  cudaMemPool_t pool_ = nullptr;
  std::unordered_map<void*, size_t> live_;
};

// A CSR matrix on the device with 32-bit offsets and indices (what every vendor path takes).
struct DeviceCsr {
  int64_t rows = 0, cols = 0, nnz = 0;
  cudaDataType type = CUDA_R_32F;
  DeviceBuffer row_ptr, col, val;
  size_t bytes() const { return row_ptr.size() + col.size() + val.size(); }
};

// Uploads A with `values` (nnz entries, already rounded as wanted) converted to `type`.
DeviceCsr upload_csr(const HostCsr& a, const std::vector<double>& values, cudaDataType type);

}  // namespace bench

#include "harness/device_memory.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "harness/checked_calls.hpp"
#include "harness/inputs.hpp"
#include "harness/values.hpp"

namespace bench {
namespace {

size_t g_current = 0, g_peak = 0;

template <typename T, typename F>
DeviceBuffer upload_converted(const std::vector<double>& values, F convert) {
  std::vector<T> host(values.size());
  for (size_t i = 0; i < values.size(); ++i) host[i] = convert(values[i]);
  DeviceBuffer d(std::max<size_t>(host.size(), 1) * sizeof(T));
  if (!host.empty()) BENCH_CUDA(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

void MemoryTracker::allocated(size_t bytes) {
  g_current += bytes;
  g_peak = std::max(g_peak, g_current);
}
void MemoryTracker::freed(size_t bytes) { g_current -= std::min(bytes, g_current); }
size_t MemoryTracker::current() { return g_current; }
size_t MemoryTracker::mark() {
  g_peak = g_current;
  return g_current;
}
size_t MemoryTracker::peak_since(size_t mark) { return g_peak > mark ? g_peak - mark : 0; }

DeviceBuffer::DeviceBuffer(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  BENCH_CUDA(cudaMalloc(&data_, bytes));
  bytes_ = bytes;
  MemoryTracker::allocated(bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), bytes_(other.bytes_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (data_) {
    cudaFree(data_);  // no check: also runs while unwinding from an error
    MemoryTracker::freed(bytes_);
  }
  data_ = nullptr;
  bytes_ = 0;
}

StreamAllocator::StreamAllocator(bool pooled, cudaStream_t stream, int device) : stream_(stream) {
  if (!pooled) return;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  BENCH_CUDA(cudaMemPoolCreate(&pool_, &props));
  uint64_t keep_everything = std::numeric_limits<uint64_t>::max();
  BENCH_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_everything));
}

StreamAllocator::~StreamAllocator() {
  release_all();
  if (pool_) {
    cudaStreamSynchronize(stream_);
    cudaMemPoolDestroy(pool_);
  }
}

void* StreamAllocator::allocate(size_t bytes) {
  bytes = std::max<size_t>(bytes, 256);
  void* p = nullptr;
  if (pool_) BENCH_CUDA(cudaMallocFromPoolAsync(&p, bytes, pool_, stream_));
  else BENCH_CUDA(cudaMalloc(&p, bytes));
  live_[p] = bytes;
  MemoryTracker::allocated(bytes);
  return p;
}

void StreamAllocator::release(void* p) {
  if (!p) return;
  auto it = live_.find(p);
  if (it == live_.end()) return;
  MemoryTracker::freed(it->second);
  live_.erase(it);
  if (pool_) BENCH_CUDA(cudaFreeAsync(p, stream_));
  else BENCH_CUDA(cudaFree(p));
}

void StreamAllocator::release_all() {
  for (auto& [p, bytes] : live_) {
    MemoryTracker::freed(bytes);
    if (pool_) cudaFreeAsync(p, stream_);
    else cudaFree(p);
  }
  live_.clear();
}

DeviceCsr upload_csr(const HostCsr& a, const std::vector<double>& values, cudaDataType type) {
  if (a.nnz() > std::numeric_limits<int32_t>::max())
    throw VariantError(Status::skipped, "nnz does not fit the 32-bit offsets of the vendor paths");
  DeviceCsr d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.nnz = a.nnz();
  d.type = type;
  std::vector<int32_t> offsets(a.row_ptr.begin(), a.row_ptr.end());
  d.row_ptr = DeviceBuffer(offsets.size() * sizeof(int32_t));
  BENCH_CUDA(cudaMemcpy(d.row_ptr.data(), offsets.data(), offsets.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  d.col = DeviceBuffer(std::max<size_t>(a.col.size(), 1) * sizeof(int32_t));
  if (!a.col.empty())
    BENCH_CUDA(cudaMemcpy(d.col.data(), a.col.data(), a.col.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  switch (type) {
    case CUDA_R_64F: d.val = upload_converted<double>(values, [](double x) { return x; }); break;
    case CUDA_R_32F: d.val = upload_converted<float>(values, [](double x) { return float(x); }); break;
    case CUDA_R_16F: d.val = upload_converted<__half>(values, [](double x) { return __float2half_rn(float(x)); }); break;
    case CUDA_R_16BF:
      d.val = upload_converted<__nv_bfloat16>(values, [](double x) { return __float2bfloat16_rn(float(x)); });
      break;
    default: throw VariantError(Status::failed, "upload_csr: unsupported value type");
  }
  return d;
}

}  // namespace bench

// Stage 2 (paper, Algorithm 3, moved from the host to the GPU): every row of the panel gets its bin
// from its upper bound; a stable radix sort on the 8-bit sort key (bins.hpp) groups the rows
// (increasing within a key, so neighbouring threads read neighbouring rows of A); one binary search
// per key gives the offsets, the only thing read back (with stage 1's totals when the plan bins all
// rows at once: one synchronisation for both). Bins 0 and 1 get their final count here.
#include <algorithm>
#include <array>

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
constexpr int kKeyBits = 8;
static_assert(kSortKeys <= (1 << kKeyBits), "sort keys must fit the sort's key bits");

__global__ void __launch_bounds__(kThreads)
    bin_keys_kernel(const int64_t* __restrict__ bound, const int64_t* __restrict__ a_row_ptr, int64_t r0, int64_t n,
                    uint8_t* __restrict__ bin, int64_t* __restrict__ count, uint8_t* __restrict__ keys,
                    int32_t* __restrict__ rows) {
  for (int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x; j < n; j += int64_t(gridDim.x) * kThreads) {
    const int64_t i = r0 + j, u = bound[i];
    const int64_t length = a_row_ptr[i + 1] - a_row_ptr[i];
    const int b = bin_of(u, length);
    bin[i] = uint8_t(b);
    if (b <= 1) count[i] = b;  // an empty row, or exactly one product
    keys[j] = uint8_t(sort_key(b, u, length));
    rows[j] = int32_t(j);
  }
}

__global__ void bin_offsets_kernel(const uint8_t* __restrict__ sorted, int64_t n, const int64_t* __restrict__ along,
                                   int64_t* __restrict__ offsets) {
  const int b = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (along != nullptr && b > kSortKeys && b <= kSortKeys + kReadAlong) offsets[b] = along[b - kSortKeys - 1];
  if (b > kSortKeys) return;
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (int(sorted[mid]) < b) lo = mid + 1;
    else hi = mid;
  }
  offsets[b] = lo;
}

}  // namespace

BinnedRows bin_rows(const int64_t* bound, const int64_t* a_row_ptr, int64_t r0, int64_t r1, uint8_t* bin,
                    int64_t* count, const GpuContext& context, const int64_t* read_along) {
  const int64_t n = r1 - r0;
  BinnedRows out;
  out.rows = gpuconv::buffer_of<int32_t>(n, context);
  if (n == 0) {
    if (read_along != nullptr)
      copy_device_to_host(out.read_along.data(), read_along, sizeof(int64_t) * kReadAlong, context.stream);
    return out;
  }
  DeviceBuffer keys = gpuconv::buffer_of<uint8_t>(n, context), sorted = gpuconv::buffer_of<uint8_t>(n, context);
  DeviceBuffer order = gpuconv::buffer_of<int32_t>(n, context);
  const int64_t ctas = (n + kThreads - 1) / kThreads;
  bin_keys_kernel<<<unsigned(ctas < 65536 * 16 ? ctas : 65536 * 16), kThreads, 0, context.stream>>>(
      bound, a_row_ptr, r0, n, bin, count, keys.as<uint8_t>(), order.as<int32_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  gpuconv::run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceRadixSort::SortPairs(temp, bytes, keys.as<const uint8_t>(), sorted.as<uint8_t>(),
                                             order.as<const int32_t>(), out.rows.as<int32_t>(), n, 0, kKeyBits,
                                             context.stream);
  });
  // The offsets and the values read along, one read back.
  constexpr int kRead = kSortKeys + 1 + kReadAlong;
  static_assert(kRead <= 256, "one block of 256 threads fills the read-back buffer");
  DeviceBuffer offsets = gpuconv::buffer_of<int64_t>(kRead, context);
  bin_offsets_kernel<<<1, 256, 0, context.stream>>>(sorted.as<const uint8_t>(), n, read_along, offsets.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  std::array<int64_t, kRead> host{};
  copy_device_to_host(host.data(), offsets.data(), sizeof(int64_t) * size_t(read_along != nullptr ? kRead : kSortKeys + 1),
                      context.stream);
  std::copy(host.begin(), host.begin() + (kSortKeys + 1), out.offsets.begin());
  std::copy(host.begin() + (kSortKeys + 1), host.end(), out.read_along.begin());
  return out;
}

}  // namespace sparsetc::detail::binned

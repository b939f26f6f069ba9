// Stage 2 (paper, Algorithm 3, moved from the host to the GPU): every row of the panel gets its bin
// from its upper bound, and the rows are grouped by their 8-bit sort key (bins.hpp) with a counting
// sort of two kernels: one counts the rows of every key, the other scans the counts (each block
// for itself: 164 of them) and scatters the rows, a block reserving room for each key it holds
// with one atomic. A key's rows of one block stay together, in increasing runs of a warp's
// (neighbouring threads read neighbouring rows of A); the runs' order differs run to run, the
// results do not (every row's place in C~ is fixed by the scan of stage 1). The offsets are the
// only thing read back, with stage 1's totals when the plan bins all rows at once: one
// synchronisation for both. Bins 0 and 1 get their final count here. (It replaced a radix sort,
// a key kernel and a binary search per key: five launches.)
#include <algorithm>
#include <array>

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
static_assert(kSortKeys <= 256, "a sort key is 8 bits");

__device__ __forceinline__ int key_of_row(const int64_t* bound, const int64_t* a_row_ptr, int64_t i, int& bin) {
  const int64_t u = bound[i], length = a_row_ptr[i + 1] - a_row_ptr[i];
  bin = bin_of(u, length);
  return sort_key(bin, u, length);
}

// Each block takes kItems consecutive rows per thread (consecutive threads, consecutive rows).
constexpr int kItems = 8;
constexpr int64_t kBlockRows = int64_t(kThreads) * kItems;
unsigned grid_for(int64_t n) { return unsigned(std::max<int64_t>(1, (n + kBlockRows - 1) / kBlockRows)); }

// Adds `amount` of each lane to counter[key] with one atomic per distinct key of the warp (keys
// of 255 take no part) and returns what the lane's own share starts at: its lower peers' amounts
// after the counter's old value. Every lane of the warp calls it.
template <typename Counter>
__device__ __forceinline__ Counter warp_reserve(Counter* counter, int key) {
  const int lane = threadIdx.x & 31;
  const unsigned peers = __match_any_sync(kFullMask, key);
  const int leader = __ffs(peers) - 1;
  Counter base = 0;
  if (lane == leader && key != 255) base = atomicAdd(counter + key, Counter(__popc(peers)));
  base = __shfl_sync(kFullMask, base, leader);
  return base + Counter(__popc(peers & ((1u << lane) - 1)));
}

// bin[i], count[i] for bins 0 and 1, and the rows of every key (histogram, zeroed by the caller):
// one atomic per key a block holds.
__global__ void __launch_bounds__(kThreads)
    bin_count_kernel(const int64_t* __restrict__ bound, const int64_t* __restrict__ a_row_ptr, int64_t r0, int64_t n,
                     uint8_t* __restrict__ bin, int64_t* __restrict__ count,
                     unsigned long long* __restrict__ histogram) {
  __shared__ unsigned block_counts[kSortKeys];
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads) block_counts[k] = 0;
  __syncthreads();
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t j = int64_t(blockIdx.x) * kBlockRows + it * kThreads + threadIdx.x;
    int key = 255;  // no row
    if (j < n) {
      const int64_t i = r0 + j;
      int b;
      key = key_of_row(bound, a_row_ptr, i, b);
      bin[i] = uint8_t(b);
      if (b <= 1) count[i] = b;  // an empty row, or exactly one product
    }
    warp_reserve(block_counts, key);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads)
    if (block_counts[k] != 0) atomicAdd(histogram + k, static_cast<unsigned long long>(block_counts[k]));
}

// rows[offset[key] + rank] = j for every row j of the panel, a block's rows of one key together:
// ranks within the block from shared atomics (a warp's rows of a key in increasing order), then one global atomic per key
// the block holds reserves its run. Block 0 also writes the offsets (kSortKeys + 1) and the values
// read along into `out`, the read-back buffer.
__global__ void __launch_bounds__(kThreads)
    bin_scatter_kernel(const int64_t* __restrict__ bound, const int64_t* __restrict__ a_row_ptr, int64_t r0, int64_t n,
                       const unsigned long long* __restrict__ histogram, unsigned long long* __restrict__ cursor,
                       int32_t* __restrict__ rows, ReadAlong along, int64_t* __restrict__ out) {
  __shared__ int64_t offset[kSortKeys + 1];
  __shared__ unsigned block_counts[kSortKeys];
  __shared__ unsigned long long block_base[kSortKeys];
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads) block_counts[k] = 0;
  if (threadIdx.x < 32) {  // the offsets: an exclusive scan of the histogram by one warp
    constexpr int kPerLane = (kSortKeys + 31) / 32;
    int64_t mine[kPerLane], lane_total = 0;
#pragma unroll
    for (int q = 0; q < kPerLane; ++q) {
      const int k = threadIdx.x * kPerLane + q;
      mine[q] = k < kSortKeys ? int64_t(histogram[k]) : 0;
      lane_total += mine[q];
    }
    int64_t before = lane_total;
    for (int d = 1; d < 32; d <<= 1) {
      const int64_t up = __shfl_up_sync(kFullMask, before, d);
      if (int(threadIdx.x) >= d) before += up;
    }
    before -= lane_total;
#pragma unroll
    for (int q = 0; q < kPerLane; ++q) {
      const int k = threadIdx.x * kPerLane + q;
      if (k <= kSortKeys) offset[k] = before;
      before += mine[q];
    }
  }
  __syncthreads();
  if (blockIdx.x == 0) {
    for (int k = threadIdx.x; k <= kSortKeys; k += kThreads) out[k] = offset[k];
    if (threadIdx.x < kReadAlong && along.at[threadIdx.x] != nullptr)
      out[kSortKeys + 1 + threadIdx.x] = *along.at[threadIdx.x];
  }
  int key[kItems];
  unsigned rank[kItems];
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t j = int64_t(blockIdx.x) * kBlockRows + it * kThreads + threadIdx.x;
    int b;
    key[it] = j < n ? key_of_row(bound, a_row_ptr, r0 + j, b) : 255;
    rank[it] = warp_reserve(block_counts, key[it]);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads)
    if (block_counts[k] != 0) block_base[k] = atomicAdd(cursor + k, static_cast<unsigned long long>(block_counts[k]));
  __syncthreads();
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t j = int64_t(blockIdx.x) * kBlockRows + it * kThreads + threadIdx.x;
    if (key[it] != 255) rows[offset[key[it]] + int64_t(block_base[key[it]]) + rank[it]] = int32_t(j);
  }
}

}  // namespace

BinnedRows bin_rows(const int64_t* bound, const int64_t* a_row_ptr, int64_t r0, int64_t r1, uint8_t* bin,
                    int64_t* count, const GpuContext& context, const ReadAlong& along) {
  const int64_t n = r1 - r0;
  BinnedRows out;
  out.rows = gpuconv::buffer_of<int32_t>(n, context);
  // One buffer, one memset: the histogram and the cursors (zeroed), then what is read back.
  constexpr int kRead = kSortKeys + 1 + kReadAlong;
  DeviceBuffer scratch = gpuconv::buffer_of<int64_t>(2 * kSortKeys + kRead, context);
  auto* histogram = reinterpret_cast<unsigned long long*>(scratch.as<int64_t>());
  int64_t* read = scratch.as<int64_t>() + 2 * kSortKeys;
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(scratch.data(), 0, 2 * kSortKeys * sizeof(int64_t), context.stream));
  bin_count_kernel<<<grid_for(n), kThreads, 0, context.stream>>>(bound, a_row_ptr, r0, n, bin, count, histogram);
  SPARSETC_CUDA_CHECK_LAUNCH();
  bin_scatter_kernel<<<grid_for(n), kThreads, 0, context.stream>>>(bound, a_row_ptr, r0, n, histogram,
                                                                   histogram + kSortKeys, out.rows.as<int32_t>(),
                                                                   along, read);
  SPARSETC_CUDA_CHECK_LAUNCH();
  std::array<int64_t, kRead> host{};
  copy_device_to_host(host.data(), read, sizeof(int64_t) * kRead, context.stream);
  std::copy(host.begin(), host.begin() + (kSortKeys + 1), out.offsets.begin());
  std::copy(host.begin() + (kSortKeys + 1), host.end(), out.read_along.begin());
  return out;
}

}  // namespace sparsetc::detail::binned

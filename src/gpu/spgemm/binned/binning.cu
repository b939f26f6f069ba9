// Stage 2 (paper, Algorithm 3, moved from the host to the GPU): every row of the panel gets its bin
// from its upper bound, and the rows are grouped by their 8-bit sort key (bins.hpp) with a counting
// sort: one kernel counts each block's rows of every key, a scan of those counts (key by key, block
// by block) places every block's rows of a key after the previous blocks', and a second kernel
// scatters them. So a key's rows keep the order of the rows from block to block (neighbouring
// rows, processed side by side, share rows of B in L2: with the blocks in atomic order instead, the
// 27-point stencil ran 2.3x slower), and within a block stay in increasing runs of a warp's. The
// offsets are the only thing read back, with stage 1's totals when the plan bins all rows at
// once: one synchronisation for both. Bins 0 and 1 get their final count here. (It replaced a
// radix sort, a key kernel and a binary search per key.)
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

// A block takes `block_rows` consecutive rows (a multiple of kChunk), kChunk at a time: kItems
// rows per thread, consecutive threads on consecutive rows. Blocks: one chunk each while that keeps
// them at most kTargetBlocks (a 32k-row panel on 16 blocks of 2048 rows spent 9 us a kernel on
// dependent loads, H200), more chunks a block above, so the per-block counts (164 a block) and their
// scan stay small.
constexpr int kItems = 2;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;
constexpr int64_t kTargetBlocks = 1024;
struct BinGrid {
  int64_t blocks, block_rows;
};
BinGrid bin_grid(int64_t n) {
  const int64_t chunks = std::max<int64_t>(1, (n + kChunk - 1) / kChunk);
  const int64_t per_block = (chunks + kTargetBlocks - 1) / kTargetBlocks;
  return {(chunks + per_block - 1) / per_block, per_block * kChunk};
}

// Adds one to counter[key] for each lane, one shared atomic per distinct key of the warp (keys of
// 255 take no part), and returns the lane's place: the counter's old value plus its lower peers.
// Every lane of the warp calls it.
__device__ __forceinline__ unsigned warp_reserve(unsigned* counter, int key) {
  const int lane = threadIdx.x & 31;
  const unsigned peers = __match_any_sync(kFullMask, key);
  const int leader = __ffs(peers) - 1;
  unsigned base = 0;
  if (lane == leader && key != 255) base = atomicAdd(counter + key, unsigned(__popc(peers)));
  base = __shfl_sync(kFullMask, base, leader);
  return base + unsigned(__popc(peers & ((1u << lane) - 1)));
}

// bin[i], count[i] for bins 0 and 1, and the block's rows of every key: counts[key * blocks + block].
__global__ void __launch_bounds__(kThreads)
    bin_count_kernel(const int64_t* __restrict__ bound, const int64_t* __restrict__ a_row_ptr, int64_t r0, int64_t n,
                     int64_t block_rows, uint8_t* __restrict__ bin, int64_t* __restrict__ count,
                     unsigned* __restrict__ counts) {
  __shared__ unsigned block_counts[kSortKeys];
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads) block_counts[k] = 0;
  __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * block_rows, last = std::min(first + block_rows, n);
  for (int64_t chunk = first; chunk < last; chunk += kChunk) {  // uniform over the block
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      const int64_t j = chunk + it * kThreads + threadIdx.x;
      int key = 255;  // no row
      if (j < last) {
        const int64_t i = r0 + j;
        int b;
        key = key_of_row(bound, a_row_ptr, i, b);
        bin[i] = uint8_t(b);
        if (b <= 1) count[i] = b;  // an empty row, or exactly one product
      }
      warp_reserve(block_counts, key);
    }
  }
  __syncthreads();
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads) counts[int64_t(k) * gridDim.x + blockIdx.x] = block_counts[k];
}

// rows[place] = j for every row j of the panel: the block's rows of a key start where the scan of
// the counts puts them (before[key * blocks + block]), ranked within the block by shared atomics.
// Block 0 also writes the offsets of the keys (kSortKeys + 1) and the values read along into
// `out`, the read-back buffer.
__global__ void __launch_bounds__(kThreads)
    bin_scatter_kernel(const int64_t* __restrict__ bound, const int64_t* __restrict__ a_row_ptr, int64_t r0, int64_t n,
                       int64_t block_rows, const int64_t* __restrict__ before, int32_t* __restrict__ rows,
                       ReadAlong along, int64_t* __restrict__ out) {
  __shared__ int64_t base[kSortKeys];
  __shared__ unsigned block_counts[kSortKeys];
  for (int k = threadIdx.x; k < kSortKeys; k += kThreads) {
    base[k] = before[int64_t(k) * gridDim.x + blockIdx.x];
    block_counts[k] = 0;
  }
  if (blockIdx.x == 0) {
    for (int k = threadIdx.x; k <= kSortKeys; k += kThreads) out[k] = before[int64_t(k) * gridDim.x];
    if (threadIdx.x < kReadAlong && along.at[threadIdx.x] != nullptr)
      out[kSortKeys + 1 + threadIdx.x] = *along.at[threadIdx.x];
  }
  __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * block_rows, last = std::min(first + block_rows, n);
  for (int64_t chunk = first; chunk < last; chunk += kChunk) {
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      const int64_t j = chunk + it * kThreads + threadIdx.x;
      int b;
      const int key = j < last ? key_of_row(bound, a_row_ptr, r0 + j, b) : 255;
      const unsigned rank = warp_reserve(block_counts, key);
      if (key != 255) rows[base[key] + rank] = int32_t(j);
    }
  }
}

}  // namespace

BinnedRows bin_rows(const int64_t* bound, const int64_t* a_row_ptr, int64_t r0, int64_t r1, uint8_t* bin,
                    int64_t* count, const GpuContext& context, const ReadAlong& along) {
  const int64_t n = r1 - r0;
  BinnedRows out;
  out.rows = gpuconv::buffer_of<int32_t>(n, context);
  const BinGrid grid = bin_grid(n);
  const int64_t cells = kSortKeys * grid.blocks;
  DeviceBuffer counts = gpuconv::buffer_of<unsigned>(cells, context);
  DeviceBuffer before = gpuconv::buffer_of<int64_t>(cells + 1, context);
  constexpr int kRead = kSortKeys + 1 + kReadAlong;
  DeviceBuffer read = gpuconv::buffer_of<int64_t>(kRead, context);
  bin_count_kernel<<<unsigned(grid.blocks), kThreads, 0, context.stream>>>(bound, a_row_ptr, r0, n, grid.block_rows,
                                                                           bin, count, counts.as<unsigned>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  gpuconv::exclusive_scan_total(counts.as<const unsigned>(), before.as<int64_t>(), cells, context);
  bin_scatter_kernel<<<unsigned(grid.blocks), kThreads, 0, context.stream>>>(
      bound, a_row_ptr, r0, n, grid.block_rows, before.as<const int64_t>(), out.rows.as<int32_t>(), along,
      read.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  std::array<int64_t, kRead> host{};
  copy_device_to_host(host.data(), read.data(), sizeof(int64_t) * kRead, context.stream);
  std::copy(host.begin(), host.begin() + (kSortKeys + 1), out.offsets.begin());
  std::copy(host.begin() + (kSortKeys + 1), host.end(), out.read_along.begin());
  return out;
}

}  // namespace sparsetc::detail::binned

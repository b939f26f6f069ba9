// CSR -> 8x8 bitmap tiles (tSparse layout) on the device.
//
// find_block_columns gives each tile row's tile columns (and the tile row of each tile). Then one
// warp per task of at most 128 consecutive tiles of a tile row (block_chunks.cuh), as the host
// does it but in shared memory: (1) each entry ORs its bit into its tile's bitmap; (2) the tiles'
// popcounts, scanned over the task, give element_offset (from the tile row's first entry, plus,
// for a task that starts inside a tile row, the row's entries left of its first tile); (3) each
// entry lands at its tile's offset + the popcount of the tile's bits below its own. Bitmaps and
// offsets are written once, values once; no global atomics.
// (Measured on an H200: per-entry global 64-bit atomics with a global scan between were 7-12% of
// the bandwidth floor.)
#include <cstdint>

#include "gpu/convert/block_chunks.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;
constexpr int kTile = 8;
constexpr int kTaskTiles = 128;

template <typename V>
__global__ void __launch_bounds__(kThreads)
    bitmap_tiles_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                        const V* __restrict__ values, int64_t rows, int64_t nnz, int64_t tile_rows,
                        const int64_t* __restrict__ tile_ptr, const int32_t* __restrict__ tile_col,
                        const int64_t* __restrict__ task_ptr, const int64_t* __restrict__ task_row, int64_t tiles,
                        ull* __restrict__ bitmap,
                        int64_t* __restrict__ element_offset, V* __restrict__ out) {
  __shared__ ull task_bits[kWarps][kTaskTiles];
  __shared__ uint32_t task_before[kWarps][kTaskTiles];  // entries of the task's tiles before each
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  ull* bits = task_bits[warp];
  uint32_t* before = task_before[warp];
  constexpr FastDivider tile_width(kTile);
  if (blockIdx.x == 0 && threadIdx.x == 0) element_offset[tiles] = nnz;
  const int64_t tasks = task_ptr[tile_rows];
  for (int64_t t = int64_t(blockIdx.x) * kWarps + warp; t < tasks; t += int64_t(gridDim.x) * kWarps) {
    const BlockTask task = block_task(t, task_row, task_ptr, tile_ptr, kTaskTiles, kTile, rows);
    const int n = int(task.b1 - task.b0);
    for (int k = lane; k < n; k += 32) bits[k] = 0;
    __syncwarp();
    visit_task_entries(
        task, row_ptr, col_idx, tile_col, tile_width, [](int64_t) { return 0; },
        [&](int64_t, int rr, int32_t c, int64_t b, int) {
          // On one 32-bit half: a 64-bit shared atomicOr compiles to a compare-and-swap loop, which
          // the lanes of one tile retry in turn (measured on an H200: the kernel 1.4x slower on a band).
          const int bit = rr * kTile + (c & (kTile - 1));
          atomicOr(reinterpret_cast<uint32_t*>(bits + (b - task.b0)) + (bit >> 5), 1u << (bit & 31));
        });
    __syncwarp();
    // The task's first element: the tile row's first entry, plus its entries left of the task.
    int64_t base = row_ptr[task.r0];
    if (task.b0 > tile_ptr[task.I]) {
      const int64_t c_lo = int64_t(tile_col[task.b0]) * kTile;
      int64_t left = 0;
      if (lane < task.rows) {
        const int64_t r = task.r0 + lane;
        left = lower_bound(col_idx, row_ptr[r], row_ptr[r + 1], c_lo) - row_ptr[r];
      }
#pragma unroll
      for (int offset = 16; offset >= 1; offset >>= 1) left += __shfl_xor_sync(kFullMask, left, offset);
      base += left;
    }
    uint32_t running = 0;
    for (int k0 = 0; k0 < n; k0 += 32) {
      const int k = k0 + lane;
      const ull word = k < n ? bits[k] : 0ull;
      const uint32_t count = uint32_t(__popcll(word));
      uint32_t inclusive = count;
#pragma unroll
      for (int offset = 1; offset < 32; offset <<= 1) {
        const uint32_t v = __shfl_up_sync(kFullMask, inclusive, offset);
        if (lane >= offset) inclusive += v;
      }
      if (k < n) {
        const uint32_t b = running + inclusive - count;
        before[k] = b;
        bitmap[task.b0 + k] = word;
        element_offset[task.b0 + k] = base + b;
      }
      running += __shfl_sync(kFullMask, inclusive, 31);
    }
    __syncwarp();
    visit_task_entries(
        task, row_ptr, col_idx, tile_col, tile_width, [&](int64_t j) { return __ldg(values + j); },
        [&](int64_t, int rr, int32_t c, int64_t b, V value) {
          const int bit = rr * kTile + (c & (kTile - 1));
          const int k = int(b - task.b0);
          out[base + before[k] + __popcll(bits[k] & ((1ull << bit) - 1ull))] = value;
        });
    __syncwarp();
  }
}

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceBitmapTiles<V> gpu_csr_to_bitmap_tiles(const DeviceCsrView<V>& csr, const GpuContext& context) {
  using namespace gpuconv;
  DeviceBitmapTiles<V> tiles;
  tiles.rows = csr.rows;
  tiles.cols = csr.cols;
  tiles.nnz = csr.nnz;
  const int64_t tile_rows = tiles.tile_rows();
  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, kTile, nullptr,
                                      tile_rows, kTile, kTile, BlockListing::kColumnsAndGroups, context);
  tiles.tiles = b.blocks;
  tiles.tile_row_ptr = std::move(b.block_ptr);
  tiles.tile_col = std::move(b.block_col);
  tiles.tile_row = std::move(b.block_group);
  tiles.bitmap = buffer_of<uint64_t>(b.blocks, context);
  tiles.element_offset = buffer_of<int64_t>(b.blocks + 1, context);
  tiles.values = buffer_of<V>(csr.nnz, context);
  zero(tiles.element_offset.template as<int64_t>(), 1, context.stream);  // no tiles: [0]
  if (b.blocks > 0) {
    const BlockTasks tasks =
        make_block_tasks(tiles.tile_row_ptr.template as<const int64_t>(), tile_rows, b.blocks, kTaskTiles, context);
    bitmap_tiles_kernel<V><<<task_grid(tasks.most), kThreads, 0, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, csr.nnz, tile_rows,
        tiles.tile_row_ptr.template as<const int64_t>(), tiles.tile_col.template as<const int32_t>(),
        tasks.task_ptr.as<const int64_t>(), tasks.task_row.as<const int64_t>(), b.blocks,
        tiles.bitmap.template as<ull>(),
        tiles.element_offset.template as<int64_t>(), tiles.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  return tiles;
}

template DeviceBitmapTiles<float> gpu_csr_to_bitmap_tiles<float>(const DeviceCsrView<float>&, const GpuContext&);
template DeviceBitmapTiles<double> gpu_csr_to_bitmap_tiles<double>(const DeviceCsrView<double>&, const GpuContext&);

}  // namespace sparsetc::detail

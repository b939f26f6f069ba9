// CSR -> 8x8 bitmap tiles (tSparse layout) on the device.
//
// find_block_columns gives each tile row's tile columns and leaves each list where it was
// counted. Where every tile row is compact (convert_internal.hpp: at most 256 entries and 32
// tiles; bitmap_takes_quads), one warp per four tile rows does the rest, a lane a row
// (bitmap_quads.cuh). Otherwise one warp per compact tile row (nearly every tile row of banded,
// stencil and scattered matrices) does the rest (compact_block_rows.cuh): its list to tile_col
// and tile_row, its entries read once into the registers, each entry's row and tile found by
// shuffles, its bit ORed into the tile's bitmap in shared memory; the lanes (one tile each) scan
// the bitmaps' popcounts into element offsets, each entry's place is its tile's offset plus the
// popcount of the tile's bits below its own, and the tile row's values (a contiguous range of the
// packed array, as long as its entries) are staged in shared memory and written out coalesced.
//
// The other tile rows (power-law hubs, long rows) are cut into tasks (block_chunks.cuh): one warp
// per task of at most 128 consecutive tiles of a tile row, as the host does it but in shared
// memory: (1) each entry ORs its bit into its tile's bitmap; (2) the tiles' popcounts, scanned
// over the task, give element_offset (from the tile row's first entry, plus, for a task that
// starts inside a tile row, the row's entries left of its first tile); (3) each entry lands at its
// tile's offset + the popcount of the tile's bits below its own. Bitmaps and offsets are written
// once, values once; no global atomics.
// (Measured on an H200: per-entry global 64-bit atomics with a global scan between were 7-12% of
// the bandwidth floor; the task kernel alone on every tile row, 11-19%.)
#include <algorithm>
#include <cstdint>

#include "gpu/convert/bitmap_quads.cuh"
#include "gpu/convert/block_chunks.cuh"
#include "gpu/convert/compact_block_rows.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_properties.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;
constexpr int kTile = 8;
constexpr int kTaskTiles = 128;

template <typename V>
__global__ void __launch_bounds__(kThreads)
    bitmap_tiles_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                        const V* __restrict__ values, int64_t rows, int64_t tile_rows,
                        const int64_t* __restrict__ tile_ptr, const int32_t* __restrict__ tile_col,
                        const int64_t* __restrict__ task_ptr, const int64_t* __restrict__ task_row,
                        ull* __restrict__ bitmap,
                        int64_t* __restrict__ element_offset, V* __restrict__ out) {
  __shared__ ull task_bits[kWarps][kTaskTiles];
  __shared__ uint32_t task_before[kWarps][kTaskTiles];  // entries of the task's tiles before each
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  ull* bits = task_bits[warp];
  uint32_t* before = task_before[warp];
  constexpr FastDivider tile_width(kTile);
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
      const uint32_t inclusive = warp_inclusive_sum(count);
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

// One warp per compact tile row (and, for the others, only their lists: the tasks do the rest).
// (Six CTAs per SM: 80 registers without a spill in both value types; left to itself, ptxas spilled
// the float kernel at 56 registers.)
template <typename V>
__global__ void __launch_bounds__(kCompactThreads, 6)
    bitmap_compact_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                          const V* __restrict__ values, int64_t rows, int64_t nnz, int64_t tile_rows,
                          const int64_t* __restrict__ tile_ptr, const uint32_t* __restrict__ list, int64_t tiles,
                          int32_t* __restrict__ tile_col, int32_t* __restrict__ tile_row, ull* __restrict__ bitmap,
                          int64_t* __restrict__ element_offset, V* __restrict__ out) {
  __shared__ uint32_t tile_halves[kCompactWarps][2 * kCompactBlocks];  // each tile's bitmap as two 32-bit words
  __shared__ V staging[kCompactWarps][kCompactEntries];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  uint32_t* halves = tile_halves[warp];
  V* stage = staging[warp];
  if (blockIdx.x == 0 && threadIdx.x == 0) element_offset[tiles] = nnz;
  const auto wide = [&](int64_t g, int64_t b0, int64_t blocks, const uint32_t* mine) {  // tasks do the rest
    for (int64_t k = lane; k < blocks; k += 32) {
      tile_col[b0 + k] = int32_t(mine[k]);
      tile_row[b0 + k] = int32_t(g);
    }
  };
  const auto compact = [&](const CompactRow& row, const CompactEntries<V>& e, const CompactLocator& at) {
    const int n = row.n, entries = row.entries;
    const int64_t first = row.first, b0 = row.b0;
    halves[lane] = 0;
    halves[lane + 32] = 0;
    if (lane < n) {
      tile_col[b0 + lane] = row.my_block;
      tile_row[b0 + lane] = int32_t(row.g);
    }
    __syncwarp();
    int place[kCompactSlots];  // tile * 64 + bit: an entry's tile among the tile row's and its bit in it
#pragma unroll
    for (int u = 0; u < kCompactSlots; ++u) {
      if (u * 32 >= entries) continue;  // warp-uniform
      const int32_t c = e.c[u];
      const int tile = at.block_of(c >> 3) & (kCompactBlocks - 1);
      const int bit = at.row_of(u * 32 + lane) * kTile + (c & (kTile - 1));
      place[u] = tile * 64 + bit;
      if (c >= 0) atomicOr(halves + 2 * tile + (bit >> 5), 1u << (bit & 31));
    }
    __syncwarp();
    // Lane k holds tile k: its bitmap, and the tile row's elements before it (a warp scan).
    const ull word = lane < n ? ull(halves[2 * lane]) | (ull(halves[2 * lane + 1]) << 32) : 0ull;
    const int count = __popcll(word);
    const int before = warp_inclusive_sum(count) - count;
    if (lane < n) {
      bitmap[b0 + lane] = word;
      element_offset[b0 + lane] = first + before;
    }
#pragma unroll
    for (int u = 0; u < kCompactSlots; ++u) {
      if (u * 32 >= entries) continue;  // warp-uniform
      const int tile = place[u] >> 6;
      const uint32_t low = __shfl_sync(kFullMask, uint32_t(word), tile);
      const uint32_t high = __shfl_sync(kFullMask, uint32_t(word >> 32), tile);
      const int tile_before = __shfl_sync(kFullMask, before, tile);
      const ull below = (ull(low) | (ull(high) << 32)) & ((1ull << (place[u] & 63)) - 1ull);
      if (e.c[u] >= 0) stage[tile_before + __popcll(below)] = e.v[u];
    }
    __syncwarp();
    for (int i = lane; i < entries; i += 32) out[first + i] = stage[i];
    __syncwarp();
  };
  for_each_block_row(row_ptr, col_idx, values, tile_ptr, list, tile_rows, FixedHeightRows{kTile, rows}, compact,
                     wide);
}

// As many CTAs as fit the device at once (each warp takes its quads in turn).
template <typename V>
void launch_quads(const DeviceCsrView<V>& csr, int64_t tile_rows, const int64_t* tile_ptr, const BlockColumns& b,
                  DeviceBitmapTiles<V>& tiles, const GpuContext& context) {
  namespace quads = bitmap_quads;
  const auto kernel = quads::quads_kernel<V>;
  const size_t shared = sizeof(quads::Space<V>) * quads::kWarps;
  allow_dynamic_shared(kernel, shared);
  int per_sm = 0;
  SPARSETC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, quads::kThreads, shared));
  const int64_t resident = int64_t(std::max(per_sm, 1)) * current_device_sm_count();
  const int64_t count = (tile_rows + quads::kTileRows - 1) / quads::kTileRows;
  const unsigned ctas = unsigned(std::clamp<int64_t>((count + quads::kWarps - 1) / quads::kWarps, 1, resident));
  kernel<<<ctas, quads::kThreads, shared, context.stream>>>(
      csr.row_ptr, csr.col_idx, csr.values, csr.rows, csr.nnz, tile_rows, tile_ptr,
      b.list.template as<const uint32_t>(), b.blocks, tiles.tile_col.template as<int32_t>(),
      tiles.tile_row.template as<int32_t>(), tiles.bitmap.template as<ull>(),
      tiles.element_offset.template as<int64_t>(), tiles.values.template as<V>());
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceBitmapTiles<V> gpu_csr_to_bitmap_tiles(const DeviceCsrView<V>& csr, const GpuContext& context,
                                             BitmapWay way) {
  using namespace gpuconv;
  DeviceBitmapTiles<V> tiles;
  tiles.rows = csr.rows;
  tiles.cols = csr.cols;
  tiles.nnz = csr.nnz;
  const int64_t tile_rows = tiles.tile_rows();
  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, kTile, nullptr,
                                      tile_rows, kTile, kTile, BlockListing::kInPlace, context);
  tiles.tiles = b.blocks;
  tiles.tile_row_ptr = std::move(b.block_ptr);
  tiles.tile_col = buffer_of<int32_t>(b.blocks, context);
  tiles.tile_row = buffer_of<int32_t>(b.blocks, context);
  tiles.bitmap = buffer_of<uint64_t>(b.blocks, context);
  tiles.element_offset = buffer_of<int64_t>(b.blocks + 1, context);
  tiles.values = buffer_of<V>(csr.nnz, context);
  zero(tiles.element_offset.template as<int64_t>(), 1, context.stream);  // no tiles: [0]
  if (b.blocks == 0) return tiles;
  const int64_t* tile_ptr = tiles.tile_row_ptr.template as<const int64_t>();
  const bool quads = way != BitmapWay::kTileRows && bitmap_takes_quads(b.wide_groups);
  if (quads) {
    launch_quads(csr, tile_rows, tile_ptr, b, tiles, context);
    return tiles;
  }
  bitmap_compact_kernel<V><<<compact_grid(tile_rows), kCompactThreads, 0, context.stream>>>(
      csr.row_ptr, csr.col_idx, csr.values, csr.rows, csr.nnz, tile_rows, tile_ptr,
      b.list.template as<const uint32_t>(), b.blocks, tiles.tile_col.template as<int32_t>(),
      tiles.tile_row.template as<int32_t>(), tiles.bitmap.template as<ull>(),
      tiles.element_offset.template as<int64_t>(), tiles.values.template as<V>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  if (b.wide_groups > 0) {  // the tile rows that are not compact: tasks
    const BlockTasks tasks = make_block_tasks(TaskCount{tile_ptr, kTaskTiles, csr.row_ptr, kTile, csr.rows},
                                              tile_rows, b.wide_groups, b.blocks, context);
    bitmap_tiles_kernel<V><<<task_grid(tasks.most), kThreads, 0, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, tile_rows, tile_ptr,
        tiles.tile_col.template as<const int32_t>(), tasks.task_ptr.as<const int64_t>(),
        tasks.task_row.as<const int64_t>(), tiles.bitmap.template as<ull>(),
        tiles.element_offset.template as<int64_t>(), tiles.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  return tiles;
}

template DeviceBitmapTiles<float> gpu_csr_to_bitmap_tiles<float>(const DeviceCsrView<float>&, const GpuContext&,
                                                                  BitmapWay);
template DeviceBitmapTiles<double> gpu_csr_to_bitmap_tiles<double>(const DeviceCsrView<double>&, const GpuContext&,
                                                                    BitmapWay);

}  // namespace sparsetc::detail

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
// Tile rows of at most 256 entries that are not compact (scattered rows: about as many tiles as
// entries) are sorted by one warp each (sorted_tile_rows.cuh: one 32-bit key an entry, a bitonic
// network in the registers; the sorted order is the packed order); where most tile rows are not
// compact, every tile row is sorted that way and the compact kernel does not run.
//
// The other tile rows (power-law hubs, long rows, tiles spanning 2^18 tile columns) are cut into
// tasks (block_chunks.cuh): one warp per task of at most 128 consecutive tiles of a tile row, as
// the host does it but in shared memory: (1) each entry ORs its bit into its tile's bitmap; (2)
// the tiles' popcounts, scanned over the task, give element_offset (from the tile row's first
// entry, plus, for a task that starts inside a tile row, the row's entries left of its first
// tile); (3) each entry lands at its tile's offset + the popcount of the tile's bits below its own.
// Bitmaps and offsets are written once, values once; no global atomics.
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
#include "gpu/convert/sorted_tile_rows.cuh"
#include "gpu/convert/staged_block_rows.cuh"
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
  __shared__ int32_t task_cols[kWarps][kTaskTiles];     // the task's tile columns, searched per entry
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  ull* bits = task_bits[warp];
  uint32_t* before = task_before[warp];
  int32_t* cols = task_cols[warp];
  constexpr FastDivider tile_width(kTile);
  const int64_t tasks = task_ptr[tile_rows];
  for (int64_t t = int64_t(blockIdx.x) * kWarps + warp; t < tasks; t += int64_t(gridDim.x) * kWarps) {
    const BlockTask task = block_task(t, task_row, task_ptr, tile_ptr, kTaskTiles, kTile, rows);
    const int n = int(task.b1 - task.b0);
    for (int k = lane; k < n; k += 32) bits[k] = 0;
    __syncwarp();
    // Each row's slice searched once for both visits and the entries left of the task.
    const TaskSlices slices = task_slices(task, row_ptr, col_idx, tile_col, tile_width);
    visit_task_slices(
        task, slices, col_idx, tile_col, tile_width, [](int64_t) { return 0; },
        [&](int64_t, int rr, int32_t c, int64_t b, int) {
          // On one 32-bit half: a 64-bit shared atomicOr compiles to a compare-and-swap loop, which
          // the lanes of one tile retry in turn (measured on an H200: the kernel 1.4x slower on a band).
          const int bit = rr * kTile + (c & (kTile - 1));
          atomicOr(reinterpret_cast<uint32_t*>(bits + (b - task.b0)) + (bit >> 5), 1u << (bit & 31));
        },
        cols);
    __syncwarp();
    // The task's first element: the tile row's first entry, plus its entries left of the task (in
    // each row, those before its slice).
    int64_t base = row_ptr[task.r0];
    if (task.b0 > tile_ptr[task.I]) {
      int64_t left = lane < task.rows ? slices.first - row_ptr[task.r0 + lane] : 0;
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
    visit_task_slices(
        task, slices, col_idx, tile_col, tile_width, [&](int64_t j) { return __ldg(values + j); },
        [&](int64_t, int rr, int32_t c, int64_t b, V value) {
          const int bit = rr * kTile + (c & (kTile - 1));
          const int k = int(b - task.b0);
          out[base + before[k] + __popcll(bits[k] & ((1ull << bit) - 1ull))] = value;
        },
        cols);
    __syncwarp();
  }
}

// One warp per compact tile row (and, for the others, only their lists where `lists`: the tasks do
// the rest; otherwise bitmap_sorted_kernel takes them).
// (Six CTAs per SM: 80 registers without a spill in both value types; left to itself, ptxas spilled
// the float kernel at 56 registers.)
template <typename V>
__global__ void __launch_bounds__(kCompactThreads, 6)
    bitmap_compact_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                          const V* __restrict__ values, int64_t rows, int64_t nnz, int64_t tile_rows,
                          const int64_t* __restrict__ tile_ptr, const uint32_t* __restrict__ list, int64_t tiles,
                          int32_t* __restrict__ tile_col, int32_t* __restrict__ tile_row, ull* __restrict__ bitmap,
                          int64_t* __restrict__ element_offset, bool lists, V* __restrict__ out) {
  __shared__ uint32_t tile_halves[kCompactWarps][2 * kCompactBlocks];  // each tile's bitmap as two 32-bit words
  __shared__ V staging[kCompactWarps][kCompactEntries];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  uint32_t* halves = tile_halves[warp];
  V* stage = staging[warp];
  if (blockIdx.x == 0 && threadIdx.x == 0) element_offset[tiles] = nnz;
  const auto wide = [&](int64_t g, int64_t b0, int64_t blocks, const uint32_t* mine) {
    if (!lists) return;  // (bitmap_sorted_kernel does them)
    for (int64_t k = lane; k < blocks; k += 32) {  // the tasks do the rest
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

// One warp per tile row (grid-stride) that sorts_in_warp (sorted_tile_rows.cuh): every one where
// `all` (most tile rows are not compact), else only those that are not compact
// (bitmap_compact_kernel has done the others): listed[0, visited) where they are listed
// (list_wide_groups), otherwise every tile row. The lists of the tile rows it cannot sort go to
// tile_col and tile_row for the tasks. (Its own kernel: inside bitmap_compact_kernel the sort
// made the compact path spill. Doubles take 80 registers at six CTAs an SM, floats 64 at eight,
// neither spilling.)
template <typename V>
__global__ void __launch_bounds__(kCompactThreads, sizeof(V) == 8 ? 6 : 8)
    bitmap_sorted_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                         const V* __restrict__ values, int64_t rows, int64_t nnz,
                         const int64_t* __restrict__ tile_ptr, const uint32_t* __restrict__ list, int64_t tiles,
                         const int64_t* __restrict__ listed, int64_t visited, BitmapOutputs<V> out, bool all) {
  __shared__ SortedTileStage<V> stages[kCompactWarps];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  SortedTileStage<V>& stage = stages[warp];
  if (all && blockIdx.x == 0 && threadIdx.x == 0) out.element_offset[tiles] = nnz;
  const FixedHeightRows rows_of{kTile, rows};
  const int64_t warps = int64_t(gridDim.x) * kCompactWarps;
  int64_t i = int64_t(blockIdx.x) * kCompactWarps + warp;
  const auto row_at = [&](int64_t at) { return listed != nullptr ? listed[at] : at; };
  BlockRowRange ahead;  // (the next tile row's, loaded while this one is done)
  int64_t ahead_g = 0;
  if (i < visited) ahead.load(row_ptr, tile_ptr, rows_of, ahead_g = row_at(i));
  for (; i < visited; i += warps) {
    const BlockRowRange r = ahead;
    const int64_t g = ahead_g;
    if (i + warps < visited) ahead.load(row_ptr, tile_ptr, rows_of, ahead_g = row_at(i + warps));
    const int64_t entries = r.stop - r.first, n = r.b1 - r.b0;
    if (n == 0 || (!all && is_compact_group(entries, n))) continue;
    const int64_t r0 = g * kTile;
    const int nrows = int(rows - r0 < kTile ? rows - r0 : kTile);
    bool sorted = false;
    if (entries <= 128) {
      sorted = sort_tile_row<4>(row_ptr, col_idx, values, g, r0, nrows, list, r.first, int(entries), r.b0, int(n),
                                stage, out);
    } else if (entries <= kSortedEntries) {
      sorted = sort_tile_row<8>(row_ptr, col_idx, values, g, r0, nrows, list, r.first, int(entries), r.b0, int(n),
                                stage, out);
    }
    if (sorted) continue;
    for (int64_t k = lane; k < n; k += 32) {  // the tasks do the rest
      out.tile_col[r.b0 + k] = int32_t(list[r.first + k]);
      out.tile_row[r.b0 + k] = int32_t(g);
    }
  }
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
  const bool quads = (way == BitmapWay::kChosen || way == BitmapWay::kQuads) && bitmap_takes_quads(b.wide_groups);
  if (quads) {
    launch_quads(csr, tile_rows, tile_ptr, b, tiles, context);
    return tiles;
  }
  // The tile rows that are not compact sorted by a warp each where they can be (kTasks: never); where
  // most are not compact, every tile row is, and bitmap_compact_kernel does not run.
  const bool sort_wide = way != BitmapWay::kTasks && b.wide_groups > 0;
  const bool sort_all = sort_wide && 2 * b.wide_groups > tile_rows;
  const uint32_t* list = b.list.template as<const uint32_t>();
  if (!sort_all) {
    bitmap_compact_kernel<V><<<compact_grid(tile_rows), kCompactThreads, 0, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, csr.nnz, tile_rows, tile_ptr, list, b.blocks,
        tiles.tile_col.template as<int32_t>(), tiles.tile_row.template as<int32_t>(), tiles.bitmap.template as<ull>(),
        tiles.element_offset.template as<int64_t>(), !sort_wide, tiles.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  if (sort_wide) {
    const BitmapOutputs<V> out{tiles.tile_col.template as<int32_t>(), tiles.tile_row.template as<int32_t>(),
                               tiles.bitmap.template as<ull>(), tiles.element_offset.template as<int64_t>(),
                               tiles.values.template as<V>()};
    // (beside the compact kernel, only the wide tile rows, listed)
    const WideGroups wide = sort_all ? WideGroups{}
                                     : list_wide_groups(GroupRows{csr.rows, kTile, nullptr}, csr.row_ptr, tile_ptr,
                                                        tile_rows, b.wide_groups, context);
    const int64_t visited = wide.listed() ? b.wide_groups : tile_rows;
    bitmap_sorted_kernel<V><<<compact_grid(visited), kCompactThreads, 0, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, csr.nnz, tile_ptr, list, b.blocks, wide.listed(), visited, out,
        sort_all);
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  // Tasks for the tile rows left: those of more than kSortedEntries entries, and those whose tiles
  // span too far (none where there are at most kSortedSpan columns of tiles).
  const int64_t tile_cols = (csr.cols + kTile - 1) / kTile;
  const bool all_done = sort_wide && b.long_groups == 0 && tile_cols <= kSortedSpan;
  if (b.wide_groups > 0 && !all_done) {
    TaskCount count{tile_ptr, kTaskTiles, csr.row_ptr, kTile, csr.rows};
    count.sorted_list = sort_wide ? list : nullptr;
    count.compact_done = !sort_all;
    // (where every tile row was sorted, a compact one whose tiles span too far has tasks too)
    const BlockTasks tasks =
        make_block_tasks(count, tile_rows, sort_all ? tile_rows : b.wide_groups, b.blocks, context);
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

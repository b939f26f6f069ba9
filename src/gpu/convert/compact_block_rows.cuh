// One warp per compact block row (convert_internal.hpp: at most kCompactEntries entries and
// kCompactBlocks blocks): the pieces that the one-warp kernels of BCSR, VBR and the bitmap tiles share
// (.cu files only): the walk over the block rows (for_each_block_row: one round trip to memory per
// block row), the entries in the lanes' registers, each entry's row and block from shuffle
// searches over the row ends and block columns held in the lanes, or, where the blocks span fewer
// than 32 (banded rows), from a popcount of their mask, and the dense blocks assembled in the
// warp's shared stage (write_compact_blocks; BCSR and VBR).
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"

namespace sparsetc::detail::gpuconv {

constexpr int kCompactSlots = int(kCompactEntries / 32);
// CTAs of the one-warp kernels: four warps. (At 256 threads ptxas spilled BCSR's kernel at 80
// registers, or, with its loads reordered, took 94-98: 16 warps per SM; at 128 threads it takes 80
// without a spill: 24 warps per SM.)
constexpr int kCompactThreads = 128;
constexpr int kCompactWarps = kCompactThreads / 32;
// Shared staging per warp of the kernels that assemble dense blocks (BCSR, VBR), at least one
// block, and block rows per warp. (Measured on an H200: 6 KB and four block rows were 3-8% faster
// than 4 KB or 3 KB and two, on a band and a stencil.)
constexpr int kCompactStageBytes = 6144;
constexpr int kCompactGroupsPerWarp = 4;

// CTAs of a one-warp kernel over `groups` block rows.
inline unsigned compact_grid(int64_t groups) {
  const int64_t warps = (groups + kCompactGroupsPerWarp - 1) / kCompactGroupsPerWarp;
  const int64_t ctas = (warps + kCompactWarps - 1) / kCompactWarps;
  return unsigned(ctas < 1 ? 1 : ctas < 65536 ? ctas : 65536);
}

// The rows of block row g, [r0, r1): fixed height (BCSR, bitmap tiles; the last block row
// partial) or a partition (VBR's row groups, of at most 32 rows where a warp assembles them).
// Two types, not one with a branch: the fixed-height kernels keep their registers.
struct FixedHeightRows {
  int height;
  int64_t rows;
  __device__ __forceinline__ void bounds(int64_t g, int64_t& r0, int64_t& r1) const {
    r0 = g * height;
    r1 = r0 + height < rows ? r0 + height : rows;
  }
};

struct PartitionRows {
  const int64_t* group_ptr;
  __device__ __forceinline__ void bounds(int64_t g, int64_t& r0, int64_t& r1) const {
    r0 = group_ptr[g];
    r1 = group_ptr[g + 1];
  }
};

// Block row g's entries [first, stop) and blocks [b0, b1), as the one-warp kernels load them one
// block row ahead: everything else of the block row waits on them.
struct BlockRowRange {
  int64_t first = 0, stop = 0, b0 = 0, b1 = 0;
  template <typename Rows>
  __device__ __forceinline__ void load(const int64_t* row_ptr, const int64_t* block_ptr, const Rows& rows_of,
                                       int64_t g) {
    int64_t r0, r1;
    rows_of.bounds(g, r0, r1);
    first = row_ptr[r0];
    stop = row_ptr[r1];
    b0 = block_ptr[g];
    b1 = block_ptr[g + 1];
  }
};

// The same, kept as its entries and how many blocks it has (at most kCompactBlocks + 1: past that
// only "not compact" matters; fewer registers across the visit), so that a block row that is not
// compact loads nothing more.
struct BlockRowEntries {
  int64_t first = 0, stop = 0;
  int blocks = 0;
  template <typename Rows>
  __device__ __forceinline__ void load(const int64_t* row_ptr, const int64_t* block_ptr, const Rows& rows_of,
                                       int64_t g) {
    BlockRowRange range;
    range.load(row_ptr, block_ptr, rows_of, g);
    first = range.first;
    stop = range.stop;
    const int64_t n = range.b1 - range.b0;
    blocks = int(n <= kCompactBlocks ? n : kCompactBlocks + 1);
  }
};

// The end of the lane's row of a block row (rows r0.., nrows of them), from its first entry;
// INT32_MAX past the last row.
__device__ __forceinline__ int32_t compact_row_end(const int64_t* __restrict__ row_ptr, int64_t r0, int nrows,
                                                   int64_t first) {
  const int lane = threadIdx.x & 31;
  return lane < nrows ? int32_t(row_ptr[r0 + lane + 1] - first) : INT32_MAX;
}

// A compact block row's entries in the registers: entry u * 32 + lane in slot u (column -1 and
// value 0 past the end; slots wholly past the end are not loaded: test u * 32 < entries).
template <typename V>
struct CompactEntries {
  int32_t c[kCompactSlots];
  V v[kCompactSlots];
  __device__ __forceinline__ void load(const int32_t* __restrict__ cols, const V* __restrict__ vals, int entries) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int u = 0; u < kCompactSlots; ++u) {
      if (u * 32 >= entries) break;  // warp-uniform
      const int k = u * 32 + lane;
      c[u] = k < entries ? __ldg(cols + k) : -1;
      v[u] = k < entries ? __ldg(vals + k) : V(0);
    }
  }
};

// Where an entry of a compact block row lies: its row among the block row's nrows (their ends,
// from the first entry, in the lanes: compact_row_end) and its block among the n blocks (their
// columns in the lanes: my_block, INT32_MAX past n). Every call is a warp-wide shuffle search: call from all lanes.
struct CompactLocator {
  int32_t my_end, my_block, first_block;
  int nrows, n, row_top, block_top;
  uint32_t block_mask;  // by_mask: one bit per block, from first_block
  bool by_mask;

  __device__ __forceinline__ CompactLocator(int32_t lane_end, int rows_here, int32_t lane_block, int blocks)
      : my_end(lane_end), my_block(lane_block), nrows(rows_here), n(blocks) {
    const int lane = threadIdx.x & 31;
    row_top = search_top(nrows - 1);
    block_top = search_top(n - 1);
    first_block = __shfl_sync(kFullMask, my_block, 0);
    by_mask = __shfl_sync(kFullMask, my_block, n - 1) - first_block < 32;
    block_mask = __reduce_or_sync(kFullMask, lane < n && by_mask ? 1u << ((my_block - first_block) & 31) : 0u);
  }

  // The row (from the block row's first) of the entry at `offset` from the first entry: the rows
  // ending at or before it.
  __device__ __forceinline__ int row_of(int offset) const { return count_below(my_end, nrows, row_top, offset + 1); }

  // The block (from the block row's first) of column block bc.
  __device__ __forceinline__ int block_of(int32_t bc) const {
    return by_mask ? __popc(block_mask & ((1u << ((bc - first_block) & 31)) - 1u))
                   : count_below(my_block, n, block_top, bc);
  }
};

// A compact block row as the one-warp kernels see it: block row g, its first entry, its first
// block b0 and n blocks, nrows rows, `entries` entries, and the lane's block column (INT32_MAX
// past n).
struct CompactRow {
  int64_t g, first, b0;
  int n, nrows, entries;
  int32_t my_block;
};

// Block row g, whose entry range and block count are `range`: compact(row, entries, locator) if it
// is compact and has blocks, wide(g, b0, blocks, its list) if it is not. Everything the compact
// call needs (its first block and list, its entries, its row ends) is loaded before anything waits
// on one, so a block row costs one round trip. Call from all lanes.
template <typename V, typename Rows, typename Compact, typename Wide>
__device__ __forceinline__ void visit_block_row(int64_t g, const BlockRowEntries& range,
                                                const int64_t* __restrict__ row_ptr,
                                                const int32_t* __restrict__ col_idx, const V* __restrict__ values,
                                                const int64_t* __restrict__ block_ptr,
                                                const uint32_t* __restrict__ list, const Rows& rows_of,
                                                Compact& compact, Wide& wide) {
  const int lane = threadIdx.x & 31;
  const int64_t first = range.first, b0 = block_ptr[g];  // (in cache: loaded with the range)
  const uint32_t* mine = list + first;
  if (!is_compact_group(range.stop - first, range.blocks)) {
    wide(g, b0, block_ptr[g + 1] - b0, mine);
    return;
  }
  const int n = range.blocks, entries = int(range.stop - first);
  if (n == 0) return;
  int64_t r0, r1;
  rows_of.bounds(g, r0, r1);  // (in cache: loaded with the range)
  const int nrows = int(r1 - r0);
  const uint32_t listed = lane < n ? mine[lane] : 0u;
  CompactEntries<V> e;
  e.load(col_idx + first, values + first, entries);
  const int32_t my_end = compact_row_end(row_ptr, r0, nrows, first);
  const int32_t my_block = lane < n ? int32_t(listed) : INT32_MAX;
  const CompactLocator at(my_end, nrows, my_block, n);
  compact(CompactRow{g, first, b0, n, nrows, entries, my_block}, e, at);
}

// The block rows of a one-warp kernel, grid-stride, one warp each (block row g is rows
// rows_of.bounds(g); a compact one has at most 32), each visited by visit_block_row. Only the next
// block row's entry range and block count are loaded ahead.
// (Measured on an H200: the list written before the entries were loaded, and the next block
// row's four bounds spilled to local memory at 80 registers, cost each block row three round trips.)
template <typename V, typename Rows, typename Compact, typename Wide>
__device__ __forceinline__ void for_each_block_row(const int64_t* __restrict__ row_ptr,
                                                   const int32_t* __restrict__ col_idx, const V* __restrict__ values,
                                                   const int64_t* __restrict__ block_ptr,
                                                   const uint32_t* __restrict__ list, int64_t groups,
                                                   const Rows& rows_of, Compact compact, Wide wide) {
  const int warps_per_cta = int(blockDim.x >> 5);
  const int64_t warps = int64_t(gridDim.x) * warps_per_cta;
  int64_t g = int64_t(blockIdx.x) * warps_per_cta + (threadIdx.x >> 5);
  BlockRowEntries ahead;
  if (g < groups) ahead.load(row_ptr, block_ptr, rows_of, g);
  for (; g < groups; g += warps) {
    const BlockRowEntries range = ahead;
    if (g + warps < groups) ahead.load(row_ptr, block_ptr, rows_of, g + warps);
    visit_block_row(g, range, row_ptr, col_idx, values, block_ptr, list, rows_of, compact, wide);
  }
}

// Each entry's place among a compact block row's dense blocks (blocks of `width` columns):
// slot[u] = place(block, row, column in block) for the lane's entry u, -1 for none. Call from all
// lanes (the locator's searches are warp-wide).
template <typename V, typename Place>
__device__ __forceinline__ void place_compact_entries(const CompactEntries<V>& e, const CompactLocator& at,
                                                      FastDivider width, int entries, Place place,
                                                      int (&slot)[kCompactSlots]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int u = 0; u < kCompactSlots; ++u) {
    slot[u] = -1;
    if (u * 32 >= entries) continue;  // warp-uniform
    const uint32_t column = uint32_t(e.c[u]);
    const int32_t bc = int32_t(width.divide(column));
    const int rr = at.row_of(u * 32 + lane);
    const int k = at.block_of(bc);
    slot[u] = e.c[u] < 0 ? -1 : place(k, rr, int(column - uint32_t(bc) * width.divisor));
  }
}

// Writes a compact block row's n blocks of `area` values each to out: its entries (slot[u] the
// place of the lane's entry u among the blocks' values, -1 for none) dropped into the warp's
// stage (stage_blocks blocks at a time), each stage-full zeroed first and copied out whole, with
// 16-byte stores when vector_copy (area * sizeof(V) and out 16-byte aligned). Call from all lanes.
template <typename V>
__device__ __forceinline__ void write_compact_blocks(V* __restrict__ stage, int stage_blocks, int n, int area,
                                                     const int (&slot)[kCompactSlots], const CompactEntries<V>& e,
                                                     int entries, bool vector_copy, V* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  for (int k0 = 0; k0 < n; k0 += stage_blocks) {
    const int count = (n - k0 < stage_blocks ? n - k0 : stage_blocks) * area, low = k0 * area;
    V* to = out + low;
    if (vector_copy) {
      uint4* words = reinterpret_cast<uint4*>(stage);
      for (int i = lane; i < count * int(sizeof(V)) / 16; i += 32) words[i] = make_uint4(0, 0, 0, 0);
    } else {
      for (int i = lane; i < count; i += 32) stage[i] = V(0);
    }
    __syncwarp();
#pragma unroll
    for (int u = 0; u < kCompactSlots; ++u)
      if (u * 32 < entries && slot[u] >= low && slot[u] < low + count) stage[slot[u] - low] = e.v[u];
    __syncwarp();
    if (vector_copy) {
      const uint4* words = reinterpret_cast<const uint4*>(stage);
      for (int i = lane; i < count * int(sizeof(V)) / 16; i += 32) reinterpret_cast<uint4*>(to)[i] = words[i];
    } else {
      for (int i = lane; i < count; i += 32) to[i] = stage[i];
    }
    __syncwarp();
  }
}

}  // namespace sparsetc::detail::gpuconv

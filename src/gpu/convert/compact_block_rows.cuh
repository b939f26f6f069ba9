// One warp per compact block row (convert_internal.hpp: at most kCompactEntries entries and
// kCompactBlocks blocks): the pieces that BCSR's and the bitmap tiles' one-warp kernels share
// (.cu files only). The block row's entry range is loaded one block row ahead; everything else
// (its block range and list, its entries, its row ends) is loaded at once before anything waits
// on a load, so a block row costs one round trip to memory; each entry's row and
// block come from shuffle searches over the row ends and block columns held in the lanes, or,
// where the blocks span fewer than 32 (banded rows), from a popcount of their mask.
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"

namespace sparsetc::detail::gpuconv {

constexpr int kCompactSlots = int(kCompactEntries / 32);
// CTAs of the one-warp kernels: four warps, so that occupancy comes in steps of four warps (their
// 90-odd registers allow 20 warps per SM; CTAs of eight allow 16).
constexpr int kCompactThreads = 128;
constexpr int kCompactWarps = kCompactThreads / 32;

// Block row g (rows [g * height, ...)): its entries [first, stop) (loaded one block row ahead:
// everything else of the block row waits on them).
struct BlockRowEntries {
  int64_t first = 0, stop = 0;
  __device__ __forceinline__ void load(const int64_t* row_ptr, int64_t g, int height, int64_t rows) {
    const int64_t r0 = g * height, r1 = r0 + height < rows ? r0 + height : rows;
    first = row_ptr[r0];
    stop = row_ptr[r1];
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

}  // namespace sparsetc::detail::gpuconv

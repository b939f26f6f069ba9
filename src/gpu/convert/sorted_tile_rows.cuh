// One warp per scattered tile row of the bitmap tiles (.cu files only): a tile row of at most
// kSortedEntries entries whose tiles span fewer than kSortedSpan columns of tiles
// (convert_internal.hpp: sorts_in_warp), as nearly every tile row of a uniform or R-MAT matrix is,
// with about as many tiles as entries, far more than the lanes.
//
// Each entry becomes one 32-bit key, (tile from the tile row's first, bit in the tile, entry),
// and the warp sorts the keys in its registers (warp_sort.cuh). Sorted by (tile, bit) is the
// packed element array's order, so the sorted position of an entry is its element's place: a tile
// starts where the tile part of the key changes, its bitmap is the OR of its keys' bits (shared
// atomics on 32-bit halves), and each value, loaded with its column before the sort, is dropped at
// its place in the warp's stage and written out coalesced. One round trip to memory per tile row
// (its columns, values and row ends together); nothing is searched per entry.
// (The tasks, block_chunks.cuh, search each entry's tile among the tile row's by a binary search
// in global memory, twice: on an H200 they took 1.4 of R-MAT's 2.1 ms.)
#pragma once

#include <cstdint>

#include "gpu/convert/block_chunks.cuh"
#include "gpu/convert/compact_block_rows.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/warp_sort.cuh"

namespace sparsetc::detail::gpuconv {

// A warp's shared stage: the tiles' bitmaps as 32-bit halves, their columns and first positions,
// the values by position, and each entry's position.
template <typename V>
struct SortedTileStage {
  uint32_t halves[2 * kSortedEntries];
  uint32_t tile_col[kSortedEntries];
  V values[kSortedEntries];
  uint16_t head_at[kSortedEntries];
  uint8_t position[kSortedEntries];
};

// The outputs of the bitmap tiles (tSparse layout).
template <typename V>
struct BitmapOutputs {
  int32_t* tile_col;
  int32_t* tile_row;
  unsigned long long* bitmap;
  int64_t* element_offset;
  V* values;
};

// Tile row g (rows r0.., nrows of them; entries [first, first + entries), at most 32 * U; tiles
// b0.., n > 0 of them, listed in place in list[first, first + n)): every output of it written, or,
// where it does not sort_in_warp (block_chunks.cuh: TileListEnds), nothing (returns false; the
// list's ends are loaded with the entries, so that either way the tile row costs one round trip).
// Call from all lanes.
template <int U, typename V>
__device__ __forceinline__ bool sort_tile_row(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                                              const V* __restrict__ values, int64_t g, int64_t r0, int nrows,
                                              const uint32_t* __restrict__ list, int64_t first, int entries,
                                              int64_t b0, int n, SortedTileStage<V>& stage,
                                              const BitmapOutputs<V>& out) {
  static_assert(32 * U <= kSortedEntries && kSortedEntries <= 256, "an entry's place fits the key's 8 bits");
  constexpr uint32_t kPadding = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const int32_t my_end = compact_row_end(row_ptr, r0, nrows, first);
  TileListEnds ends;
  ends.load(list, first, n);
  int32_t c[U];
  V v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int k = u * 32 + lane;
    c[u] = k < entries ? __ldg(col_idx + first + k) : -1;
    v[u] = k < entries ? __ldg(values + first + k) : V(0);
  }
  if (!ends.sorts_in_warp(entries)) return false;
  const uint32_t lowest = ends.lowest;
  for (int i = lane; i < 2 * n; i += 32) stage.halves[i] = 0;
  const int row_top = search_top(nrows - 1);
  uint32_t key[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int k = u * 32 + lane;
    const int rr = count_below(my_end, nrows, row_top, k + 1);  // rows ending at or before entry k
    const uint32_t bit = uint32_t(rr) * 8 + (uint32_t(c[u]) & 7);
    key[u] = k < entries ? ((uint32_t(c[u]) >> 3) - lowest) << 14 | bit << 8 | uint32_t(k) : kPadding;
  }
  warp_bitonic_sort(key);
  // Position p = lane * U + u. The first `entries` positions hold the entries (a key equal to the
  // padding sorts among the padding, but every such key is the same value).
  uint32_t before = __shfl_up_sync(kFullMask, key[U - 1], 1);
  uint32_t heads = 0;  // bit u: position lane * U + u starts a tile
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int p = lane * U + u;
    heads |= uint32_t(p < entries && (p == 0 || (key[u] >> 14) != (before >> 14))) << u;
    before = key[u];
  }
  const int mine = __popc(heads);
  int tile = warp_inclusive_sum(mine) - mine - 1;  // the tile of the position before the lane's first
  __syncwarp();  // the halves are zeroed
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int p = lane * U + u;
    if (heads & (1u << u)) {
      ++tile;
      stage.head_at[tile] = uint16_t(p);
      stage.tile_col[tile] = lowest + (key[u] >> 14);
    }
    if (p < entries) {
      const uint32_t bit = (key[u] >> 8) & 63;
      atomicOr(stage.halves + 2 * tile + (bit >> 5), 1u << (bit & 31));
      stage.position[key[u] & 255] = uint8_t(p);
    }
  }
  __syncwarp();
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int k = u * 32 + lane;
    if (k < entries) stage.values[stage.position[k]] = v[u];
  }
  for (int i = lane; i < n; i += 32) {
    const unsigned long long low = stage.halves[2 * i], high = stage.halves[2 * i + 1];
    out.bitmap[b0 + i] = low | high << 32;
    out.element_offset[b0 + i] = first + stage.head_at[i];
    out.tile_col[b0 + i] = int32_t(stage.tile_col[i]);
    out.tile_row[b0 + i] = int32_t(g);
  }
  __syncwarp();  // the values are staged
  for (int i = lane; i < entries; i += 32) out.values[first + i] = stage.values[i];
  __syncwarp();  // the stage is reused
  return true;
}

}  // namespace sparsetc::detail::gpuconv

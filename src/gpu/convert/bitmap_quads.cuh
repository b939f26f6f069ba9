// CSR -> 8x8 bitmap tiles for matrices whose tile rows are all compact (banded, stencil and other
// narrow matrices): one warp per 32 rows, four tile rows ("a quad"), one lane a row, instead of one
// warp per tile row holding its entries and finding each one's row and tile by shuffles (about 760
// warp instructions a tile row of a band's 104 entries, under ncu on an H200).
//
// (1) The quad's column indices and values are copied to shared memory asynchronously, in one
// round trip with the four tile rows' lists (the next quad's bounds are loaded one quad ahead).
// (2) Each lane walks its row and its tile row's list together (both sorted): it stores one byte a
// tile, its row's eight bits of the tile's bitmap (so the eight lanes of a tile row write every byte
// of its bitmaps: no atomics, no clearing), and tags each entry with its tile, row and rank in the
// row's run of the tile. (3) One warp scan of the quad's popcounts gives every tile its element
// offset (the four tile rows' entries are contiguous). (4) Each entry's place is its tile's offset,
// plus the popcount of the tile's bits in the rows above, plus its rank: a pass over the tags, one
// entry a lane, notes which entry goes to each place. (5) The values are written out coalesced.
#pragma once

#include <cstdint>

#include "gpu/convert/compact_block_rows.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace bitmap_quads {

using ull = unsigned long long;
constexpr int kTile = 8;
constexpr int kRows = 32;
constexpr int kTileRows = kRows / kTile;
constexpr int kEntries = int(kTileRows * kCompactEntries);
constexpr int kTiles = int(kTileRows * kCompactBlocks);
constexpr int kWarps = kCompactWarps;
constexpr int kThreads = kCompactThreads;

// An entry's tag: its tile among the quad's (7 bits), its row in the tile (3), its rank among the
// row's entries in the tile (3).
static_assert(kTiles <= 128 && kEntries <= 65536, "tags, places and entries fit 16 bits");

// One warp's shared memory (17.75 KB for double values: three CTAs of four warps an SM).
template <typename V>
struct Space {
  V value[kEntries];  // as read
  int32_t col[kEntries];
  uint16_t tag[kEntries];
  uint16_t from[kEntries];  // the entry that goes to each place
  ull bits[kTiles];
  uint16_t before[kTiles];  // the quad's elements before each tile
  int32_t list[kTiles];
};

// An asynchronous copy of Bytes (4 or 8) from global to shared memory; wait_async_copies waits for
// the calling thread's.
template <int Bytes>
__device__ __forceinline__ void copy_async(void* shared_to, const void* global_from) {
  const uint32_t to = uint32_t(__cvta_generic_to_shared(shared_to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(to), "l"(global_from), "n"(Bytes) : "memory");
}
__device__ __forceinline__ void wait_async_copies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// The bounds of a quad: the lane's row's entries (an empty range past the last row) and, in lanes
// 0-4, where the quad's tile rows start in the tile list.
struct Bounds {
  int64_t row_first, row_stop, tile_first;
  __device__ __forceinline__ void load(const int64_t* __restrict__ row_ptr, const int64_t* __restrict__ tile_ptr,
                                       int64_t rows, int64_t tile_rows, int64_t quad) {
    const int lane = threadIdx.x & 31;
    const int64_t r = quad * kRows + lane;
    row_first = row_ptr[r < rows ? r : rows];
    row_stop = row_ptr[r + 1 < rows ? r + 1 : rows];
    const int64_t g = quad * kTileRows + (lane < kTileRows ? lane : kTileRows);
    tile_first = tile_ptr[g < tile_rows ? g : tile_rows];
  }
};

// Where a quad's tiles lie: b0 its first in the tile list, `tiles` of them, start[t] the first of
// its tile row t (t = 0..4, from b0), list_at[t] where tile row t's list lies (its first entry).
struct Tiles {
  int64_t b0;
  int tiles;
  int start[kTileRows + 1];
  int64_t list_at[kTileRows];

  __device__ __forceinline__ explicit Tiles(const Bounds& q) {
    b0 = __shfl_sync(kFullMask, q.tile_first, 0);
#pragma unroll
    for (int t = 0; t <= kTileRows; ++t) start[t] = int(__shfl_sync(kFullMask, q.tile_first, t) - b0);
#pragma unroll
    for (int t = 0; t < kTileRows; ++t) list_at[t] = __shfl_sync(kFullMask, q.row_first, t * kTile);
    tiles = start[kTileRows];
  }
};

// tile_col and tile_row of the quad's tiles from their lists, and the list into shared memory by
// each tile's place in the quad. Call from all lanes.
__device__ __forceinline__ void write_tile_lists(const Tiles& at, int64_t quad, const uint32_t* __restrict__ list,
                                                 int32_t* shared_list, int32_t* __restrict__ tile_col,
                                                 int32_t* __restrict__ tile_row) {
  for (int k = threadIdx.x & 31; k < at.tiles; k += 32) {
    int t = 0;
    int64_t from = at.list_at[0] + k;
#pragma unroll
    for (int i = 1; i < kTileRows; ++i)
      if (k >= at.start[i]) {
        t = i;
        from = at.list_at[i] + (k - at.start[i]);
      }
    const int32_t column = int32_t(list[from]);
    shared_list[k] = column;
    tile_col[at.b0 + k] = column;
    tile_row[at.b0 + k] = int32_t(quad * kTileRows + t);
  }
}

// Steps (1)-(5) for one quad. Call from all lanes.
template <typename V>
__device__ __forceinline__ void convert_quad(const Bounds& q, int64_t quad, const int32_t* __restrict__ col_idx,
                                             const V* __restrict__ values, const uint32_t* __restrict__ list,
                                             Space<V>& s, int32_t* __restrict__ tile_col,
                                             int32_t* __restrict__ tile_row, ull* __restrict__ bitmap,
                                             int64_t* __restrict__ element_offset, V* __restrict__ out) {
  const int lane = threadIdx.x & 31, row = lane & (kTile - 1);
  const int64_t first = __shfl_sync(kFullMask, q.row_first, 0);
  const int entries = int(__shfl_sync(kFullMask, q.row_stop, 31) - first);
  // (1)
  for (int j = lane; j < entries; j += 32) {
    copy_async<4>(s.col + j, col_idx + first + j);
    copy_async<int(sizeof(V))>(s.value + j, values + first + j);
  }
  const Tiles at(q);
  write_tile_lists(at, quad, list, s.list, tile_col, tile_row);
  wait_async_copies();
  __syncwarp();
  // (2)
  const int mine = lane / kTile;
  int k = at.start[0], k_stop = at.start[1];
#pragma unroll
  for (int i = 1; i < kTileRows; ++i)
    if (mine == i) {
      k = at.start[i];
      k_stop = at.start[i + 1];
    }
  {
    unsigned char* bytes = reinterpret_cast<unsigned char*>(s.bits);
    const int e_stop = int(q.row_stop - first);
    int e = int(q.row_first - first), rank = 0;
    uint32_t byte = 0;
    // (c >> 3 is -1 past the row's end: never a tile.)
    int32_t c = e < e_stop ? s.col[e] : -kTile, tile = k < k_stop ? s.list[k] : 0;
    while (k < k_stop) {
      if ((c >> 3) == tile) {
        byte |= 1u << (c & (kTile - 1));
        s.tag[e] = uint16_t(k | (row << 7) | (rank << 10));
        ++rank;
        ++e;
        c = e < e_stop ? s.col[e] : -kTile;
      } else {
        bytes[k * kTile + row] = uint8_t(byte);
        byte = 0;
        rank = 0;
        ++k;
        tile = k < k_stop ? s.list[k] : 0;
      }
    }
  }
  __syncwarp();
  // (3)
  uint32_t running = 0;
  for (int k0 = 0; k0 < at.tiles; k0 += 32) {
    const int t = k0 + lane;
    const ull word = t < at.tiles ? s.bits[t] : 0ull;
    const uint32_t count = uint32_t(__popcll(word));
    const uint32_t inclusive = warp_inclusive_sum(count);
    if (t < at.tiles) {
      const uint32_t b = running + inclusive - count;
      s.before[t] = uint16_t(b);
      bitmap[at.b0 + t] = word;
      element_offset[at.b0 + t] = first + b;
    }
    running += __shfl_sync(kFullMask, inclusive, 31);
  }
  __syncwarp();
  // (4)
  for (int j = lane; j < entries; j += 32) {
    const uint32_t tag = s.tag[j];
    const int t = int(tag & 127u), above = int((tag >> 7) & 7u) * kTile;
    s.from[s.before[t] + __popcll(s.bits[t] & ((1ull << above) - 1ull)) + int(tag >> 10)] = uint16_t(j);
  }
  __syncwarp();
  // (5)
  for (int p = lane; p < entries; p += 32) out[first + p] = s.value[s.from[p]];
  __syncwarp();
}

// One warp per quad, grid-stride (the host launches as many CTAs as fit the device at once: a grid
// of a few waves left the last one half empty). Only for matrices whose tile rows are all compact:
// a quad's entries and tiles then fit its Space. (Three CTAs per SM, as the shared memory allows;
// measured on an H200, reading the values from global memory in step (5) instead, for five CTAs
// an SM, was no faster: from 2-8% faster on a 7-point stencil to 7% slower on a band of 25 a row.)
template <typename V>
__global__ void __launch_bounds__(kThreads, 3)
    quads_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                 const V* __restrict__ values, int64_t rows, int64_t nnz, int64_t tile_rows,
                 const int64_t* __restrict__ tile_ptr, const uint32_t* __restrict__ list, int64_t tiles,
                 int32_t* __restrict__ tile_col, int32_t* __restrict__ tile_row, ull* __restrict__ bitmap,
                 int64_t* __restrict__ element_offset, V* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char spaces[];
  const int warp = threadIdx.x >> 5;
  Space<V>& space = reinterpret_cast<Space<V>*>(spaces)[warp];
  if (blockIdx.x == 0 && threadIdx.x == 0) element_offset[tiles] = nnz;
  const int64_t quads = (tile_rows + kTileRows - 1) / kTileRows;
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  int64_t quad = int64_t(blockIdx.x) * kWarps + warp;
  Bounds ahead;
  if (quad < quads) ahead.load(row_ptr, tile_ptr, rows, tile_rows, quad);
  for (; quad < quads; quad += warps) {
    const Bounds q = ahead;
    if (quad + warps < quads) ahead.load(row_ptr, tile_ptr, rows, tile_rows, quad + warps);
    convert_quad(q, quad, col_idx, values, list, space, tile_col, tile_row, bitmap, element_offset, out);
  }
}

}  // namespace bitmap_quads
}  // namespace gpuconv
}  // namespace sparsetc::detail

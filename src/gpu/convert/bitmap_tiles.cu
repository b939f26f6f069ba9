// CSR -> 8x8 bitmap tiles (tSparse layout) on the device.
//
// find_block_columns gives each tile row's tile columns (and the tile row of each tile). Then, as
// the host does: (1) each entry ORs its bit into its tile's bitmap (64-bit atomics, at most 64 per
// tile, spread over the tiles); (2) element_offset is a scan of the bitmaps' popcounts; (3) each
// entry lands at element_offset[tile] + the popcount of its tile's bits below its own. An entry's
// tile is a binary search among its tile row's tile columns; entries are visited by the
// merge-path walk (balanced, coalesced). (Measured on an H200: building the bitmaps run by run in
// shared memory instead, block_chunks.cuh, was 1.5-3x slower.)
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;

struct TileOf {
  const int64_t* tile_ptr;
  const int32_t* tile_col;
  __device__ int64_t operator()(int64_t row, int32_t col) const {
    const int64_t I = row >> 3;
    return lower_bound(tile_col, tile_ptr[I], tile_ptr[I + 1], col >> 3);
  }
};

struct SetBits {
  TileOf tile_of;
  const int32_t* col_idx;
  ull* bitmap;
  __device__ void operator()(int64_t j, int64_t i) const {
    const int32_t c = col_idx[j];
    atomicOr(bitmap + tile_of(i, c), 1ull << ((i & 7) * 8 + (c & 7)));
  }
};

struct PopCounts {
  const ull* bitmap;
  int32_t* counts;
  __device__ void operator()(int64_t t) const { counts[t] = __popcll(bitmap[t]); }
};

template <typename V>
struct PlaceValues {
  TileOf tile_of;
  const int32_t* col_idx;
  const V* values;
  const ull* bitmap;
  const int64_t* element_offset;
  V* out;
  __device__ void operator()(int64_t j, int64_t i) const {
    const int32_t c = col_idx[j];
    const int64_t t = tile_of(i, c);
    const int bit = int((i & 7) * 8 + (c & 7));
    out[element_offset[t] + __popcll(bitmap[t] & ((1ull << bit) - 1))] = values[j];
  }
};

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceBitmapTiles<V> gpu_csr_to_bitmap_tiles(const DeviceCsrView<V>& csr, const GpuContext& context) {
  using namespace gpuconv;
  constexpr int kTile = 8;
  DeviceBitmapTiles<V> tiles;
  tiles.rows = csr.rows;
  tiles.cols = csr.cols;
  tiles.nnz = csr.nnz;
  const int64_t tile_rows = tiles.tile_rows();
  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, kTile, nullptr,
                                      tile_rows, kTile, kTile, true, context);
  tiles.tiles = b.blocks;
  tiles.tile_row_ptr = std::move(b.block_ptr);
  tiles.tile_col = std::move(b.block_col);
  tiles.tile_row = std::move(b.block_group);
  tiles.bitmap = buffer_of<uint64_t>(b.blocks, context);
  tiles.element_offset = buffer_of<int64_t>(b.blocks + 1, context);
  tiles.values = buffer_of<V>(csr.nnz, context);
  ull* bitmap = tiles.bitmap.template as<ull>();
  const TileOf tile_of{tiles.tile_row_ptr.template as<const int64_t>(), tiles.tile_col.template as<const int32_t>()};
  zero(bitmap, b.blocks, context.stream);
  for_each_entry_with_row(csr.row_ptr, csr.rows, csr.nnz, context, SetBits{tile_of, csr.col_idx, bitmap});
  DeviceBuffer counts = buffer_of<int32_t>(b.blocks, context);
  for_each_index(b.blocks, context, PopCounts{bitmap, counts.as<int32_t>()});
  exclusive_scan_total(counts.as<const int32_t>(), tiles.element_offset.template as<int64_t>(), b.blocks, context);
  for_each_entry_with_row(csr.row_ptr, csr.rows, csr.nnz, context,
                          PlaceValues<V>{tile_of, csr.col_idx, csr.values, bitmap,
                                         tiles.element_offset.template as<const int64_t>(), tiles.values.template as<V>()});
  return tiles;
}

template DeviceBitmapTiles<float> gpu_csr_to_bitmap_tiles<float>(const DeviceCsrView<float>&, const GpuContext&);
template DeviceBitmapTiles<double> gpu_csr_to_bitmap_tiles<double>(const DeviceCsrView<double>&, const GpuContext&);

}  // namespace sparsetc::detail

// Host (reference) conversions CSR <-> 8x8 bitmap tiles (the tSparse layout). Two passes over tile
// rows (count the tiles, then fill them at prefix-summed offsets), so the arrays never depend on
// the thread count. Bits are formed with unsigned 64-bit shifts only.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "formats/tiled.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kTile = 8;
constexpr int64_t kTileRowsPerChunk = 256;

inline int popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_popcountll(x);
#else
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
#endif
}

// Bits of the tile elements (r, c) with r < rows_in and c < cols_in.
inline uint64_t inside_mask(int64_t rows_in, int64_t cols_in) {
  const uint64_t row_bits = cols_in >= kTile ? 0xffull : ((1ull << cols_in) - 1);
  uint64_t mask = 0;
  for (int64_t r = 0; r < std::min(rows_in, kTile); ++r) mask |= row_bits << (r * kTile);
  return mask;
}

}  // namespace

template <typename V>
BitmapTiles<V> csr_to_bitmap_tiles(const CsrMatrix<V>& csr) {
  using namespace tiled_internal;
  constexpr const char* op = "csr_to_bitmap_tiles";
  check_csr_arrays(csr.rows, csr.cols, csr.row_ptr, csr.col_idx.size(), csr.values.size(), op);
  BitmapTiles<V> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  const int64_t tile_rows = out.tile_rows();
  require_int32_indices(tile_rows, "tile rows", op);
  require_int32_indices(out.tile_cols(), "tile columns", op);

  const int64_t* rp = csr.row_ptr.data();
  const int64_t* ci = csr.col_idx.data();
  std::vector<int64_t>& ptr = out.tile_row_ptr;
  ptr.assign(size_t(tile_rows + 1), 0);
  parallel_chunks(tile_rows, 0, kTileRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I)
      ptr[size_t(I + 1)] = distinct_column_blocks(rp, ci, I * kTile, std::min(csr.rows, I * kTile + kTile), kTile,
                                                  nullptr);
  });
  for (int64_t I = 0; I < tile_rows; ++I) ptr[size_t(I + 1)] += ptr[size_t(I)];
  const int64_t tiles = ptr.back(), nnz = csr.nnz();
  out.tile_row.resize(size_t(tiles));
  out.tile_col.resize(size_t(tiles));
  out.bitmap.assign(size_t(tiles), 0);
  out.element_offset.resize(size_t(tiles + 1));
  out.element_offset[size_t(tiles)] = nnz;
  out.values.resize(size_t(nnz));

  int32_t* tc = out.tile_col.data();
  uint64_t* bm = out.bitmap.data();
  int64_t* eo = out.element_offset.data();
  parallel_chunks(tile_rows, 0, kTileRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I) {
      const int64_t first = ptr[size_t(I)], last = ptr[size_t(I + 1)];
      const int64_t r0 = I * kTile, r1 = std::min(csr.rows, r0 + kTile);
      distinct_column_blocks(rp, ci, r0, r1, kTile, tc + first);
      std::fill(out.tile_row.begin() + first, out.tile_row.begin() + last, int32_t(I));
      for (int64_t r = r0; r < r1; ++r) {
        int64_t t = first;  // the row's entries and the tile row's tiles are both increasing
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
          const int64_t c = ci[k], ct = c / kTile;
          while (tc[t] < ct) ++t;
          bm[t] |= 1ull << ((r - r0) * kTile + (c - ct * kTile));
        }
      }
      // The tile row's elements are those of its CSR rows, regrouped tile by tile.
      int64_t offset = rp[r0];
      for (int64_t t = first; t < last; ++t) {
        eo[t] = offset;
        offset += popcount64(bm[t]);
      }
      for (int64_t r = r0; r < r1; ++r) {
        int64_t t = first;
        for (int64_t k = rp[r]; k < rp[r + 1]; ++k) {
          const int64_t c = ci[k], ct = c / kTile;
          while (tc[t] < ct) ++t;
          const int bit = int((r - r0) * kTile + (c - ct * kTile));
          out.values[size_t(eo[t] + popcount64(bm[t] & ((1ull << bit) - 1)))] = csr.values[size_t(k)];
        }
      }
    }
  });
  return out;
}

template <typename V>
CsrMatrix<V> bitmap_tiles_to_csr(const BitmapTiles<V>& tiles) {
  constexpr const char* op = "bitmap_tiles_to_csr";
  require(tiles.rows >= 0 && tiles.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, op, ": negative dimension ", tiles.rows,
          "x", tiles.cols);
  const int64_t tile_rows = tiles.tile_rows(), tile_cols = tiles.tile_cols(), count = tiles.tiles();
  const std::vector<int64_t>& ptr = tiles.tile_row_ptr;
  const std::vector<int64_t>& eo = tiles.element_offset;
  require(int64_t(ptr.size()) == tile_rows + 1 && ptr.front() == 0 && ptr.back() == count,
          SPARSETC_STATUS_INVALID_VALUE, op, ": tile_row_ptr has ", ptr.size(), " entries from ", ptr.front(), " to ",
          ptr.back(), " for ", tile_rows, " tile rows and ", count, " tiles");
  require(int64_t(tiles.tile_row.size()) == count && int64_t(tiles.tile_col.size()) == count &&
              int64_t(eo.size()) == count + 1,
          SPARSETC_STATUS_INVALID_VALUE, op, ": ", count, " bitmaps but ", tiles.tile_row.size(), " tile rows, ",
          tiles.tile_col.size(), " tile columns and ", eo.size(), " element offsets (tiles + 1 expected)");
  require(eo.front() == 0 && eo.back() == int64_t(tiles.values.size()), SPARSETC_STATUS_INVALID_VALUE, op,
          ": element offsets span [", eo.front(), ", ", eo.back(), ") but there are ", tiles.values.size(), " values");
  const int64_t bad_row = first_where(tile_rows, [&](int64_t I) { return ptr[size_t(I + 1)] < ptr[size_t(I)]; });
  require(bad_row < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": tile_row_ptr decreases at tile row ", bad_row);
  // What is wrong with tile t, or nullptr.
  const uint64_t full_mask = inside_mask(kTile, kTile);
  auto problem = [&](int64_t t) -> const char* {
    const int64_t I = tiles.tile_row[size_t(t)], J = tiles.tile_col[size_t(t)];
    if (I < 0 || I >= tile_rows || J < 0 || J >= tile_cols) return "has coordinates outside the tile grid";
    if (t < ptr[size_t(I)] || t >= ptr[size_t(I + 1)]) return "is not listed under its tile row in tile_row_ptr";
    if (t > ptr[size_t(I)] && tiles.tile_col[size_t(t - 1)] >= J)
      return "does not follow the previous tile of its tile row in increasing column order";
    const uint64_t b = tiles.bitmap[size_t(t)];
    if (eo[size_t(t + 1)] - eo[size_t(t)] != popcount64(b))
      return "has an element count (from element_offset) different from its bitmap's";
    const bool edge = (I + 1) * kTile > tiles.rows || (J + 1) * kTile > tiles.cols;
    const uint64_t mask = edge ? inside_mask(tiles.rows - I * kTile, tiles.cols - J * kTile) : full_mask;
    if ((b & ~mask) != 0) return "has bitmap bits for elements outside the matrix";
    return nullptr;
  };
  const int64_t bad = first_where(count, [&](int64_t t) { return problem(t) != nullptr; });
  require(bad < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": tile ", bad, " ", bad < 0 ? "" : problem(bad));

  CsrMatrix<V> csr;
  csr.rows = tiles.rows;
  csr.cols = tiles.cols;
  csr.row_ptr.assign(size_t(tiles.rows + 1), 0);
  const uint64_t* bm = tiles.bitmap.data();
  parallel_chunks(tile_rows, 0, kTileRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I)
      for (int64_t t = ptr[size_t(I)]; t < ptr[size_t(I + 1)]; ++t)
        for (int64_t lr = 0; lr < kTile && I * kTile + lr < tiles.rows; ++lr)
          csr.row_ptr[size_t(I * kTile + lr + 1)] += popcount64((bm[t] >> (lr * kTile)) & 0xffull);
  });
  for (int64_t r = 0; r < tiles.rows; ++r) csr.row_ptr[size_t(r + 1)] += csr.row_ptr[size_t(r)];
  const int64_t nnz = csr.row_ptr.back();
  csr.col_idx.resize(size_t(nnz));
  csr.values.resize(size_t(nnz));
  parallel_chunks(tile_rows, 0, kTileRowsPerChunk, [&](int64_t begin, int64_t end) {
    for (int64_t I = begin; I < end; ++I)
      for (int64_t lr = 0; lr < kTile && I * kTile + lr < tiles.rows; ++lr) {
        int64_t pos = csr.row_ptr[size_t(I * kTile + lr)];
        const uint64_t before = (1ull << (lr * kTile)) - 1;  // bits of the tile rows above lr
        for (int64_t t = ptr[size_t(I)]; t < ptr[size_t(I + 1)]; ++t) {
          uint64_t byte = (bm[t] >> (lr * kTile)) & 0xffull;
          int64_t element = eo[size_t(t)] + popcount64(bm[t] & before);
          const int64_t c0 = int64_t(tiles.tile_col[size_t(t)]) * kTile;
          for (int64_t c = 0; byte; ++c, byte >>= 1)
            if (byte & 1ull) {
              csr.col_idx[size_t(pos)] = c0 + c;
              csr.values[size_t(pos++)] = tiles.values[size_t(element++)];
            }
        }
      }
  });
  return csr;
}

#define SPARSETC_INSTANTIATE(V)                                                \
  template BitmapTiles<V> csr_to_bitmap_tiles<V>(const CsrMatrix<V>&);        \
  template CsrMatrix<V> bitmap_tiles_to_csr<V>(const BitmapTiles<V>&);
SPARSETC_INSTANTIATE(float)
SPARSETC_INSTANTIATE(double)
#undef SPARSETC_INSTANTIATE

}  // namespace sparsetc::detail

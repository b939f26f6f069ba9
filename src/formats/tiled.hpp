// Blocked and tiled formats that the multiplication kernels consume, their host (reference)
// conversions from the canonical CSR, and row permutation. The GPU conversions (gpu/convert/)
// produce exactly these arrays: structure bit for bit, values unchanged.
//
// Conventions: block and tile coordinates count from zero; a matrix whose size is not a multiple
// of the block is covered by a last partial block row/column, padded with zeros; entries keep
// their value even when it is zero (explicit zeros are structural).
#pragma once

#include <cstdint>
#include <vector>

#include "formats/sparse.hpp"

namespace sparsetc::detail {

// ---- BCSR: dense h x w blocks (the MMA shapes 16x8, 16x16, 8x8), CSR over blocks.
template <typename V>
struct BcsrMatrix {
  int64_t rows = 0, cols = 0;
  int block_height = 0, block_width = 0;
  std::vector<int64_t> block_row_ptr{0};  // block rows + 1
  std::vector<int32_t> block_col;         // per block, increasing within a block row
  std::vector<V> values;                  // per block h * w values, row-major in the block, zero padded
  int64_t block_rows() const { return (rows + block_height - 1) / block_height; }
  int64_t block_cols() const { return (cols + block_width - 1) / block_width; }
  int64_t blocks() const { return int64_t(block_col.size()); }
};

// ---- 8x8 bitmap tiles in the tSparse layout: tiles in COO order (by tile row, then tile column),
// each with its coordinates, a 64-bit bitmap (bit r * 8 + c set when element (r, c) of the tile
// is stored) and the offset of its first element in the packed element array; a tile's elements
// are consecutive, in bit order (row-major in the tile).
template <typename V>
struct BitmapTiles {
  static constexpr int kTile = 8;
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> tile_row_ptr{0};  // tile rows + 1: tiles of tile row I are [ptr[I], ptr[I+1])
  std::vector<int32_t> tile_row;         // per tile
  std::vector<int32_t> tile_col;         // per tile
  std::vector<uint64_t> bitmap;          // per tile
  std::vector<int64_t> element_offset;   // tiles + 1
  std::vector<V> values;                 // nnz
  int64_t tile_rows() const { return (rows + kTile - 1) / kTile; }
  int64_t tile_cols() const { return (cols + kTile - 1) / kTile; }
  int64_t tiles() const { return int64_t(bitmap.size()); }
};

// ---- DCSR: CSR over the non-empty rows only.
template <typename V>
struct DcsrMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> row_idx;    // the non-empty rows, increasing
  std::vector<int64_t> row_ptr{0}; // non-empty rows + 1
  std::vector<int32_t> col_idx;    // nnz
  std::vector<V> values;           // nnz
};

// ---- Tiled DCSR (the DCSR paper's B-stationary format): vertical strips of `strip_width`
// columns, each strip a DCSR of its columns. Strip s holds the non-empty rows
// row_idx[strip_ptr[s] .. strip_ptr[s+1]); non-empty row r of the whole list has its entries at
// [row_ptr[r], row_ptr[r+1]); columns are global (not relative to the strip).
template <typename V>
struct TiledDcsr {
  int64_t rows = 0, cols = 0;
  int64_t strip_width = 0;
  std::vector<int64_t> strip_ptr{0};  // strips + 1, into row_idx
  std::vector<int32_t> row_idx;       // per (strip, non-empty row)
  std::vector<int64_t> row_ptr{0};    // row_idx.size() + 1, into col_idx/values
  std::vector<int32_t> col_idx;       // nnz, strip-major, then row, then column
  std::vector<V> values;
  int64_t strips() const { return (cols + strip_width - 1) / strip_width; }
};

// ---- VBR (variable block rows, the 1-SA paper's format): rows grouped by a partition into
// groups of consecutive rows, columns into blocks of `block_width`; each non-zero (group, column
// block) pair is stored as a dense height x block_width block, column-major (what cuBLAS takes),
// zero padded at the right edge.
template <typename V>
struct VbrMatrix {
  int64_t rows = 0, cols = 0;
  int64_t block_width = 0;
  std::vector<int64_t> group_ptr{0};     // groups + 1: group g is rows [group_ptr[g], group_ptr[g+1])
  std::vector<int64_t> block_ptr{0};     // groups + 1: blocks of group g
  std::vector<int32_t> block_col;        // per block: its column block, increasing within a group
  std::vector<int64_t> value_offset{0};  // blocks + 1: block b's values start at value_offset[b]
  std::vector<V> values;
  int64_t groups() const { return int64_t(group_ptr.size()) - 1; }
};

template <typename V>
BcsrMatrix<V> csr_to_bcsr(const CsrMatrix<V>& csr, int block_height, int block_width);
template <typename V>
DenseMatrix<V> bcsr_to_dense(const BcsrMatrix<V>& bcsr);

template <typename V>
BitmapTiles<V> csr_to_bitmap_tiles(const CsrMatrix<V>& csr);
template <typename V>
CsrMatrix<V> bitmap_tiles_to_csr(const BitmapTiles<V>& tiles);

template <typename V>
DcsrMatrix<V> csr_to_dcsr(const CsrMatrix<V>& csr);
template <typename V>
CsrMatrix<V> dcsr_to_csr(const DcsrMatrix<V>& dcsr);

template <typename V>
TiledDcsr<V> csr_to_tiled_dcsr(const CsrMatrix<V>& csr, int64_t strip_width);
template <typename V>
CsrMatrix<V> tiled_dcsr_to_csr(const TiledDcsr<V>& tiled);

// group_ptr: a partition of [0, rows) into consecutive groups (first 0, last rows, increasing).
template <typename V>
VbrMatrix<V> csr_to_vbr(const CsrMatrix<V>& csr, const std::vector<int64_t>& group_ptr, int64_t block_width);
template <typename V>
DenseMatrix<V> vbr_to_dense(const VbrMatrix<V>& vbr);

// Row i of the result is row permutation[i] of the input (a gather). Throws INVALID_VALUE when
// permutation is not a permutation of [0, rows).
template <typename V>
CsrMatrix<V> permute_rows(const CsrMatrix<V>& csr, const std::vector<int64_t>& permutation);

// ---- Internal helpers shared by the host conversions above (tiled_*.cpp, permute.cpp).
namespace tiled_internal {

// The distinct column blocks (col_idx[k] / width) of the entries of rows [row_begin, row_end) of
// a CSR structure (columns sorted within each row), in increasing order: written to out[0..count)
// when out is not null, and counted. Merges the rows' sorted lists: O(entries + blocks * rows),
// no memory proportional to the number of columns. Callers have checked that blocks fit int32.
int64_t distinct_column_blocks(const int64_t* row_ptr, const int64_t* col_idx, int64_t row_begin, int64_t row_end,
                               int64_t width, int32_t* out);

// Throws INVALID_VALUE unless the CSR arrays are consistent (O(1): sizes and end offsets only;
// the input of a conversion is a canonical, already validated CSR).
void check_csr_arrays(int64_t rows, int64_t cols, const std::vector<int64_t>& row_ptr, size_t col_count,
                      size_t value_count, const char* operation);

// Throws SIZE_OVERFLOW when the indices [0, count) do not all fit int32.
void require_int32_indices(int64_t count, const char* what, const char* operation);

}  // namespace tiled_internal

}  // namespace sparsetc::detail

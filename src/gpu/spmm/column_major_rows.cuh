// Rows of a column-major dense matrix into a row-major copy: 32 x 32 tiles through shared memory,
// read along the source's columns and written along the copy's rows, so both sides move whole
// sectors. Which source row lands in each row of the copy is the caller's (the identity for the
// row kernel's copy of B, a block's columns for the VBR gather).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {

inline constexpr int kRowsTile = 32, kRowsTileThreadRows = 8;  // a CTA of 32 x 8 threads moves a tile

// Row r of out (r < rows, ld ld_out, n columns) = row source(r) of b (column-major, ld ldb), or
// zeros where source(r) < 0. Tile (blockIdx.x, column tiles from blockIdx.y on); the +1 column
// keeps the transposed reads off one bank.
template <typename T, typename Source>
__global__ void __launch_bounds__(kRowsTile* kRowsTileThreadRows)
    column_major_rows_kernel(const T* __restrict__ b, int64_t ldb, int64_t n, Source source, int64_t rows,
                             T* __restrict__ out, int64_t ld_out) {
  __shared__ T tile[kRowsTile][kRowsTile + 1];
  const int64_t r0 = int64_t(blockIdx.x) * kRowsTile;
  const int64_t r = r0 + threadIdx.x;
  const int64_t s = r < rows ? source(r) : -1;
  for (int64_t c0 = int64_t(blockIdx.y) * kRowsTile; c0 < n; c0 += int64_t(gridDim.y) * kRowsTile) {
#pragma unroll
    for (int j0 = 0; j0 < kRowsTile; j0 += kRowsTileThreadRows) {  // a constant count: fully unrolled
      const int j = j0 + int(threadIdx.y);
      const int64_t c = c0 + j;
      tile[j][threadIdx.x] = s >= 0 && c < n ? b[s + c * ldb] : T{};
    }
    __syncthreads();
#pragma unroll
    for (int j0 = 0; j0 < kRowsTile; j0 += kRowsTileThreadRows) {
      const int j = j0 + int(threadIdx.y);
      const int64_t row = r0 + j, c = c0 + threadIdx.x;
      if (row < rows && c < n) out[row * ld_out + c] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// The grid of tiles over rows x cols: one CTA per row tile, column tiles looped past 65535.
inline dim3 rows_tile_grid(int64_t rows, int64_t cols, const char* what) {
  const int64_t row_tiles = (rows + kRowsTile - 1) / kRowsTile, col_tiles = (cols + kRowsTile - 1) / kRowsTile;
  require(row_tiles <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, what, ": ", rows, " rows exceed one launch");
  return dim3(unsigned(row_tiles), unsigned(std::min<int64_t>(col_tiles, 65535)));
}

template <typename T, typename Source>
void copy_column_major_rows(const void* b, int64_t ldb, int64_t n, Source source, int64_t rows, void* out,
                            int64_t ld_out, cudaStream_t stream, const char* what) {
  if (rows == 0 || n == 0) return;
  column_major_rows_kernel<T, Source><<<rows_tile_grid(rows, n, what), dim3(kRowsTile, kRowsTileThreadRows), 0,
                                       stream>>>(static_cast<const T*>(b), ldb, n, source, rows,
                                                 static_cast<T*>(out), ld_out);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace sparsetc::detail

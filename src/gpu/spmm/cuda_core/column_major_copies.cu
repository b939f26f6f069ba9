// Column-major B and C of a C-stationary SpMM, for the row kernel that reads and writes rows:
// copy_b_row_major (B into a row-major copy) and add_c_column_major (the kernel's row-major result
// into C). Both move 32 x 32 tiles through shared memory, so each side reads and writes whole
// sectors.
#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/cuda_core/core_values.cuh"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"

namespace sparsetc::detail {
namespace {

constexpr int kTile = 32, kTileRows = 8;  // a CTA of 32 x 8 threads moves a 32 x 32 tile

// Tile (blockIdx.x, j-tiles from blockIdx.y on): read along B's columns (k consecutive), write along
// out's rows (j consecutive). The +1 column keeps the transposed reads off one bank.
template <typename T>
__global__ void __launch_bounds__(kTile* kTileRows)
    column_to_row_major_kernel(const T* __restrict__ b, int64_t ldb, int64_t k, int64_t n, T* __restrict__ out,
                               int64_t ld_out) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t k0 = int64_t(blockIdx.x) * kTile;
  for (int64_t j0 = int64_t(blockIdx.y) * kTile; j0 < n; j0 += int64_t(gridDim.y) * kTile) {
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t row = k0 + threadIdx.x, col = j0 + r;
      if (row < k && col < n) tile[r][threadIdx.x] = b[row + col * ldb];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t row = k0 + r, col = j0 + threadIdx.x;
      if (row < k && col < n) out[row * ld_out + col] = tile[threadIdx.x][r];
    }
    __syncthreads();
  }
}

// C (i, j) = t (i, j) + beta * C (i, j) over tile (blockIdx.x: rows of C, blockIdx.y on: columns);
// C is not read where beta = 0. One rounding to Out, as the row kernel's own epilogue.
template <typename Acc, typename Out>
__global__ void __launch_bounds__(kTile* kTileRows)
    add_column_major_kernel(const Acc* __restrict__ t, int64_t ld_t, int64_t m, int64_t n, Acc beta, Out* c,
                            int64_t ldc) {
  __shared__ Acc tile[kTile][kTile + 1];
  const int64_t i0 = int64_t(blockIdx.x) * kTile;
  for (int64_t j0 = int64_t(blockIdx.y) * kTile; j0 < n; j0 += int64_t(gridDim.y) * kTile) {
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t row = i0 + r, col = j0 + threadIdx.x;
      if (row < m && col < n) tile[r][threadIdx.x] = t[row * ld_t + col];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < kTile; r += kTileRows) {
      const int64_t row = i0 + threadIdx.x, col = j0 + r;
      if (row < m && col < n) {
        Out* q = c + row + col * ldc;
        const Acc sum = tile[threadIdx.x][r];
        *q = cudacore::from_acc<Out>(beta != Acc(0) ? sum + beta * cudacore::to_acc(*q) : sum);
      }
    }
    __syncthreads();
  }
}

dim3 tile_grid(int64_t rows, int64_t cols) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_tiles = (cols + kTile - 1) / kTile;
  require(row_tiles <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "column-major copy of ", rows, " rows");
  return dim3(unsigned(row_tiles), unsigned(std::min<int64_t>(col_tiles, 65535)));
}

template <typename Acc, typename Out>
void launch_add(const void* t, int64_t ld_t, int64_t m, int64_t n, double beta, void* c, int64_t ldc,
                cudaStream_t stream) {
  add_column_major_kernel<Acc, Out><<<tile_grid(m, n), dim3(kTile, kTileRows), 0, stream>>>(
      static_cast<const Acc*>(t), ld_t, m, n, Acc(beta), static_cast<Out*>(c), ldc);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch(const void* b, int64_t ldb, int64_t k, int64_t n, void* out, int64_t ld_out, cudaStream_t stream) {
  column_to_row_major_kernel<T><<<tile_grid(k, n), dim3(kTile, kTileRows), 0, stream>>>(static_cast<const T*>(b), ldb, k, n,
                                                                             static_cast<T*>(out), ld_out);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

void copy_b_row_major(const void* b, int64_t ldb, int64_t k, int64_t n, int element_bytes, void* out,
                      int64_t ld_out, cudaStream_t stream) {
  if (k == 0 || n == 0) return;
  switch (element_bytes) {
    case 2: launch<uint16_t>(b, ldb, k, n, out, ld_out, stream); break;
    case 4: launch<uint32_t>(b, ldb, k, n, out, ld_out, stream); break;
    case 8: launch<uint64_t>(b, ldb, k, n, out, ld_out, stream); break;
    default: fail(SPARSETC_STATUS_INTERNAL_ERROR, "copying B row-major: elements of ", element_bytes, " bytes");
  }
}

void add_c_column_major(const void* t, int64_t ld_t, bool double_sums, int64_t m, int64_t n, double beta, void* c,
                        sparsetc_value_type_t c_type, int64_t ldc, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  if (double_sums) {
    require(c_type == SPARSETC_VALUE_F64, SPARSETC_STATUS_INTERNAL_ERROR, "column-major C: f64 sums into ", c_type);
    launch_add<double, double>(t, ld_t, m, n, beta, c, ldc, stream);
    return;
  }
  switch (c_type) {
    case SPARSETC_VALUE_F32: launch_add<float, float>(t, ld_t, m, n, beta, c, ldc, stream); break;
    case SPARSETC_VALUE_F16: launch_add<float, __half>(t, ld_t, m, n, beta, c, ldc, stream); break;
    case SPARSETC_VALUE_BF16: launch_add<float, __nv_bfloat16>(t, ld_t, m, n, beta, c, ldc, stream); break;
    default: fail(SPARSETC_STATUS_INTERNAL_ERROR, "column-major C: f32 sums into ", c_type);
  }
}

}  // namespace sparsetc::detail

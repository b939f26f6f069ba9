// Column-major B and C of a C-stationary SpMM, for the row kernel that reads and writes rows:
// copy_b_row_major (B into a row-major copy) and add_c_column_major (the kernel's row-major result
// into C). Both move 32 x 32 tiles through shared memory (column_major_rows.cuh), so each side
// reads and writes whole sectors.
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/column_major_rows.cuh"
#include "gpu/spmm/cuda_core/core_values.cuh"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"

namespace sparsetc::detail {
namespace {

constexpr int kTile = kRowsTile, kTileRows = kRowsTileThreadRows;

// The row kernel's copy of B: row r of the copy is B's row r.
struct SameRow {
  __device__ int64_t operator()(int64_t r) const { return r; }
};

// C (i, j) = t (i, j) + beta * C (i, j) over tile (blockIdx.x: rows of C, blockIdx.y on: columns);
// C is not read where beta = 0. One rounding to Out, as the row kernel's own epilogue.
template <typename Acc, typename Out>
__global__ void __launch_bounds__(kTile* kTileRows)
    add_column_major_kernel(const Acc* __restrict__ t, int64_t ld_t, int64_t m, int64_t n, Acc beta, Out* c,
                            int64_t ldc) {
  __shared__ Acc tile[kTile][kTile + 1];
  const int64_t i0 = int64_t(blockIdx.x) * kTile;
  for (int64_t j0 = int64_t(blockIdx.y) * kTile; j0 < n; j0 += int64_t(gridDim.y) * kTile) {
#pragma unroll
    for (int r0 = 0; r0 < kTile; r0 += kTileRows) {  // a constant count: fully unrolled
      const int r = r0 + int(threadIdx.y);
      const int64_t row = i0 + r, col = j0 + threadIdx.x;
      if (row < m && col < n) tile[r][threadIdx.x] = t[row * ld_t + col];
    }
    __syncthreads();
#pragma unroll
    for (int r0 = 0; r0 < kTile; r0 += kTileRows) {
      const int r = r0 + int(threadIdx.y);
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

template <typename Acc, typename Out>
void launch_add(const void* t, int64_t ld_t, int64_t m, int64_t n, double beta, void* c, int64_t ldc,
                cudaStream_t stream) {
  add_column_major_kernel<Acc, Out><<<rows_tile_grid(m, n, "column-major C"), dim3(kTile, kTileRows), 0, stream>>>(
      static_cast<const Acc*>(t), ld_t, m, n, Acc(beta), static_cast<Out*>(c), ldc);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

void copy_b_row_major(const void* b, int64_t ldb, int64_t k, int64_t n, int element_bytes, void* out,
                      int64_t ld_out, cudaStream_t stream) {
  constexpr const char* kWhat = "column-major B copied row-major";
  switch (element_bytes) {
    case 2: copy_column_major_rows<uint16_t>(b, ldb, n, SameRow{}, k, out, ld_out, stream, kWhat); break;
    case 4: copy_column_major_rows<uint32_t>(b, ldb, n, SameRow{}, k, out, ld_out, stream, kWhat); break;
    case 8: copy_column_major_rows<uint64_t>(b, ldb, n, SameRow{}, k, out, ld_out, stream, kWhat); break;
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

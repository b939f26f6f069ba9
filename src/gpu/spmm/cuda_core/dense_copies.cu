// Copies of B and C around the row kernel, whose lanes read and write 16 bytes of a row at once:
// copy_b_row_major (a column-major B into a row-major copy) and add_c into a column-major C (the
// kernel's row-major result), both 32 x 32 tiles through shared memory (column_major_rows.cuh) so
// each side moves whole sectors; copy_b_aligned and add_c into a row-major C for B and C whose
// rows do not start on 16-byte boundaries (the kernel works on aligned copies).
#include <algorithm>
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

// Row-major operands element by element: a CTA of kRowThreads threads covers kRowsInFlight groups
// of rows_per_cta rows, each row taken by 2^columns_log threads (the power of two from n, at most
// kRowThreads) striding along it; consecutive threads on consecutive elements of both sides. Each
// thread loads its element of all kRowsInFlight rows before it stores any: one 2- or 4-byte load
// per thread in flight would keep a third of what the memory needs in flight.
constexpr int kRowThreads = 256, kRowsInFlight = 8;

struct RowBlocks {
  int columns_log = 0;  // threads per row: 2^columns_log
  int64_t ctas = 0;
};
RowBlocks row_blocks(int64_t rows, int64_t n) {
  RowBlocks r;
  while ((int64_t(1) << r.columns_log) < n && (1 << r.columns_log) < kRowThreads) ++r.columns_log;
  const int64_t rows_per_cta = int64_t(kRowThreads >> r.columns_log) * kRowsInFlight;
  r.ctas = std::min<int64_t>((rows + rows_per_cta - 1) / rows_per_cta, 65535);  // then each CTA loops
  return r;
}

// Calls visit(q, i, j) for the thread's element (i, j) of each of its kRowsInFlight rows (q), one
// column step at a time, and store(q) after each step's visits (rows past `rows` are skipped).
template <typename Visit, typename Store>
__device__ __forceinline__ void for_row_elements(int64_t rows, int64_t n, int columns_log, Visit visit, Store store) {
  const int lane = threadIdx.x & ((1 << columns_log) - 1);
  const int64_t group = kRowThreads >> columns_log;
  const int64_t span = group * kRowsInFlight;
  for (int64_t i0 = int64_t(blockIdx.x) * span + (threadIdx.x >> columns_log); i0 < rows;
       i0 += int64_t(gridDim.x) * span)
    for (int64_t j = lane; j < n; j += int64_t(1) << columns_log) {
#pragma unroll
      for (int q = 0; q < kRowsInFlight; ++q)
        if (i0 + q * group < rows) visit(q, i0 + q * group, j);
#pragma unroll
      for (int q = 0; q < kRowsInFlight; ++q)
        if (i0 + q * group < rows) store(q, i0 + q * group, j);
    }
}

// out (i, j) = b (i, j): a row-major B into rows that start on 16-byte boundaries.
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    copy_rows_kernel(const T* __restrict__ b, int64_t ldb, int64_t k, int64_t n, int columns_log, T* __restrict__ out,
                     int64_t ld_out) {
  T v[kRowsInFlight];
  for_row_elements(
      k, n, columns_log, [&](int q, int64_t i, int64_t j) { v[q] = b[i * ldb + j]; },
      [&](int q, int64_t i, int64_t j) { out[i * ld_out + j] = v[q]; });
}

// C (i, j) = t (i, j) + beta * C (i, j) into a row-major C; as add_column_major_kernel otherwise.
template <typename Acc, typename Out>
__global__ void __launch_bounds__(kRowThreads)
    add_row_major_kernel(const Acc* __restrict__ t, int64_t ld_t, int64_t m, int64_t n, int columns_log, Acc beta,
                         Out* c, int64_t ldc) {
  Acc sum[kRowsInFlight];
  for_row_elements(
      m, n, columns_log,
      [&](int q, int64_t i, int64_t j) {
        sum[q] = t[i * ld_t + j];
        if (beta != Acc(0)) sum[q] += beta * cudacore::to_acc(c[i * ldc + j]);
      },
      [&](int q, int64_t i, int64_t j) { c[i * ldc + j] = cudacore::from_acc<Out>(sum[q]); });
}

template <typename Acc, typename Out>
void launch_add(const void* t, int64_t ld_t, int64_t m, int64_t n, double beta, void* c, sparsetc_order_t order,
                int64_t ldc, cudaStream_t stream) {
  if (order == SPARSETC_ORDER_COL) {
    add_column_major_kernel<Acc, Out><<<rows_tile_grid(m, n, "column-major C"), dim3(kTile, kTileRows), 0, stream>>>(
        static_cast<const Acc*>(t), ld_t, m, n, Acc(beta), static_cast<Out*>(c), ldc);
  } else {
    const RowBlocks blocks = row_blocks(m, n);
    add_row_major_kernel<Acc, Out><<<unsigned(blocks.ctas), kRowThreads, 0, stream>>>(
        static_cast<const Acc*>(t), ld_t, m, n, blocks.columns_log, Acc(beta), static_cast<Out*>(c), ldc);
  }
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

void copy_b_aligned(const void* b, int64_t ldb, int64_t k, int64_t n, int element_bytes, void* out, int64_t ld_out,
                    cudaStream_t stream) {
  // (cudaMemcpy2DAsync from rows off 16-byte boundaries ran at a fraction of this on an H200.)
  if (k == 0 || n == 0) return;
  const RowBlocks blocks = row_blocks(k, n);
  auto launch = [&](auto element) {
    using T = decltype(element);
    copy_rows_kernel<T><<<unsigned(blocks.ctas), kRowThreads, 0, stream>>>(
        static_cast<const T*>(b), ldb, k, n, blocks.columns_log, static_cast<T*>(out), ld_out);
    SPARSETC_CUDA_CHECK_LAUNCH();
  };
  switch (element_bytes) {
    case 2: launch(uint16_t{}); break;
    case 4: launch(uint32_t{}); break;
    case 8: launch(uint64_t{}); break;
    default: fail(SPARSETC_STATUS_INTERNAL_ERROR, "copying B to aligned rows: elements of ", element_bytes, " bytes");
  }
}

void add_c(const void* t, int64_t ld_t, bool double_sums, int64_t m, int64_t n, double beta, void* c,
           sparsetc_value_type_t c_type, sparsetc_order_t c_order, int64_t ldc, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  if (double_sums) {
    require(c_type == SPARSETC_VALUE_F64, SPARSETC_STATUS_INTERNAL_ERROR, "adding into C: f64 sums into ", c_type);
    launch_add<double, double>(t, ld_t, m, n, beta, c, c_order, ldc, stream);
    return;
  }
  switch (c_type) {
    case SPARSETC_VALUE_F32: launch_add<float, float>(t, ld_t, m, n, beta, c, c_order, ldc, stream); break;
    case SPARSETC_VALUE_F16: launch_add<float, __half>(t, ld_t, m, n, beta, c, c_order, ldc, stream); break;
    case SPARSETC_VALUE_BF16: launch_add<float, __nv_bfloat16>(t, ld_t, m, n, beta, c, c_order, ldc, stream); break;
    default: fail(SPARSETC_STATUS_INTERNAL_ERROR, "adding into C: f32 sums into ", c_type);
  }
}

}  // namespace sparsetc::detail

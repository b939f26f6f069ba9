// Visiting the entries of a blocked CSR chunk by chunk (.cu files only): one CTA per run of `chunk`
// consecutive blocks (of fixed-height block rows), with a per-CTA stage in shared memory. The
// entries of a run: for each row of the block rows it meets, those between the run's first and
// last column block (a contiguous part of the row: a binary search, then a warp reads it 32 at a
// time); each entry's block by binary search among the run's column blocks (in shared memory).
// (Measured on an H200: a variant that flattens the (row, run) pairs with a CTA prefix sum needs
// ~40 KB more shared memory per CTA and ran 2x slower, for want of CTAs in flight.)
//
// Op: shared_bytes(chunk); begin(stage, b0, n) and end(stage, b0, n), called by every thread
// around the visit (barriers in between); entry(stage, block in run, row in block, column in
// block, entry number).
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"

namespace sparsetc::detail::gpuconv {

template <typename Op>
__global__ void __launch_bounds__(kThreads)
    block_chunk_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx, int64_t rows,
                       int height, int width, int64_t block_rows, const int64_t* __restrict__ block_ptr,
                       const int32_t* __restrict__ block_col, int64_t blocks, int chunk, Op op) {
  extern __shared__ uint4 shared_words[];
  __shared__ int64_t span[2];
  const int64_t b0 = int64_t(blockIdx.x) * chunk;
  const int n = int(blocks - b0 < chunk ? blocks - b0 : chunk);
  int32_t* run_cols = reinterpret_cast<int32_t*>(reinterpret_cast<unsigned char*>(shared_words) + op.shared_bytes(chunk));
  op.begin(shared_words, b0, n);
  for (int i = threadIdx.x; i < n; i += kThreads) run_cols[i] = block_col[b0 + i];
  if (threadIdx.x < 2) span[threadIdx.x] = last_not_above(block_ptr, 0, block_rows, threadIdx.x == 0 ? b0 : b0 + n - 1);
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int64_t first_block_row = span[0], pairs = (span[1] - span[0] + 1) * height;
  for (int64_t pair = threadIdx.x >> 5; pair < pairs; pair += kWarps) {
    const int64_t I = first_block_row + pair / height;
    const int rr = int(pair % height);
    const int64_t r = I * height + rr;
    if (r >= rows) continue;
    const int64_t lo = max(b0, block_ptr[I]) - b0, hi = min(b0 + n, block_ptr[I + 1]) - b0;
    if (lo >= hi) continue;
    const int64_t c_lo = int64_t(run_cols[lo]) * width, c_hi = (int64_t(run_cols[hi - 1]) + 1) * width;
    const int64_t end = row_ptr[r + 1];
    for (int64_t k = lower_bound(col_idx, row_ptr[r], end, c_lo);; k += 32) {
      const int64_t kk = k + lane;
      const int64_t c = kk < end ? int64_t(col_idx[kk]) : c_hi;
      const bool inside = c < c_hi;
      if (inside) {
        const int32_t bc = int32_t(c / width);
        op.entry(shared_words, int(lower_bound(run_cols, lo, hi, bc)), rr, int(c - int64_t(bc) * width), kk);
      }
      if (__ballot_sync(kFullMask, inside) != kFullMask) break;
    }
  }
  __syncthreads();
  op.end(shared_words, b0, n);
}

template <typename Op>
void launch_block_chunks(const int64_t* row_ptr, const int32_t* col_idx, int64_t rows, int height, int width,
                         int64_t block_rows, const int64_t* block_ptr, const int32_t* block_col, int64_t blocks,
                         int chunk, const Op& op, const GpuContext& context) {
  if (blocks == 0) return;
  const size_t shared = size_t(op.shared_bytes(chunk)) + size_t(chunk) * sizeof(int32_t);
  if (shared > 44 * 1024)
    SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(block_chunk_kernel<Op>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(shared)));
  block_chunk_kernel<Op><<<ctas_for(blocks, chunk), kThreads, shared, context.stream>>>(
      row_ptr, col_idx, rows, height, width, block_rows, block_ptr, block_col, blocks, chunk, op);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace sparsetc::detail::gpuconv

// CSR -> BCSR (dense h x w blocks) on the device.
//
// find_block_columns gives each block row's column blocks (block_row_ptr, block_col). The values
// are then written task by task (block_chunks.cuh): one warp per run of at most 64 KB of
// consecutive blocks of one block row zeroes them with 16-byte stores (the padded value array,
// the bulk of the output, is written once, coalesced), then drops in the entries of those blocks
// (the same warp: the zeros are ordered before, and both land in the L2 together).
// (Measured on an H200: the former one-CTA-per-32-KB-run scheme, with a binary search per row and
// run, was latency bound on banded matrices: 10-15% of the bandwidth floor.)
#include <algorithm>
#include <cstdint>

#include "gpu/convert/block_chunks.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int64_t kTaskBytes = 64 * 1024;

template <typename V>
__global__ void __launch_bounds__(kThreads)
    bcsr_values_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                       const V* __restrict__ values, int64_t rows, int height, FastDivider width, int64_t block_rows,
                       const int64_t* __restrict__ block_ptr, const int32_t* __restrict__ block_col,
                       const int64_t* __restrict__ task_ptr, const int64_t* __restrict__ task_row,
                       int64_t task_blocks, V* __restrict__ out) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t tasks = task_ptr[block_rows];
  const int area = height * int(width.divisor);
  const bool vector_fill = (size_t(area) * sizeof(V)) % 16 == 0;
  for (int64_t t = int64_t(blockIdx.x) * kWarps + warp; t < tasks; t += int64_t(gridDim.x) * kWarps) {
    const BlockTask task = block_task(t, task_row, task_ptr, block_ptr, task_blocks, height, rows);
    V* region = out + task.b0 * area;
    const int64_t count = (task.b1 - task.b0) * area;
    if (vector_fill) {
      uint4* words = reinterpret_cast<uint4*>(region);
      const int64_t n = count * int64_t(sizeof(V)) / 16;
      for (int64_t k = lane; k < n; k += 32) words[k] = make_uint4(0, 0, 0, 0);
    } else {
      for (int64_t k = lane; k < count; k += 32) region[k] = V(0);
    }
    __syncwarp();
    visit_task_entries(
        task, row_ptr, col_idx, block_col, width, [&](int64_t j) { return __ldg(values + j); },
        [&](int64_t, int rr, int32_t c, int64_t b, V value) {
          const uint32_t column = uint32_t(c);
          out[b * area + rr * int(width.divisor) + width.remainder(column, width.divide(column))] = value;
        });
  }
}

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceBcsr<V> gpu_csr_to_bcsr(const DeviceCsrView<V>& csr, int block_height, int block_width,
                              const GpuContext& context) {
  using namespace gpuconv;
  require(block_height >= 1 && block_height <= 32 && block_width >= 1 && block_height * int64_t(block_width) <= 1024,
          SPARSETC_STATUS_INVALID_VALUE, "unsupported block shape ", block_height, "x", block_width,
          " (1 <= h <= 32, h * w <= 1024)");
  DeviceBcsr<V> bcsr;
  bcsr.rows = csr.rows;
  bcsr.cols = csr.cols;
  bcsr.block_height = block_height;
  bcsr.block_width = block_width;
  const int64_t block_rows = bcsr.block_rows();
  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, block_height, nullptr,
                                      block_rows, block_height, block_width, false, context);
  bcsr.blocks = b.blocks;
  bcsr.block_row_ptr = std::move(b.block_ptr);
  bcsr.block_col = std::move(b.block_col);
  const int area = block_height * block_width;
  bcsr.values = buffer_of<V>(b.blocks * area, context);
  if (b.blocks > 0) {
    const int64_t task_blocks = std::clamp<int64_t>(kTaskBytes / (int64_t(area) * int64_t(sizeof(V))), 1, 1024);
    const BlockTasks tasks = make_block_tasks(bcsr.block_row_ptr.template as<const int64_t>(), block_rows, b.blocks,
                                              task_blocks, context);
    bcsr_values_kernel<V><<<task_grid(tasks.most), kThreads, 0, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, block_height, FastDivider(uint32_t(block_width)), block_rows,
        bcsr.block_row_ptr.template as<const int64_t>(), bcsr.block_col.template as<const int32_t>(),
        tasks.task_ptr.as<const int64_t>(), tasks.task_row.as<const int64_t>(), task_blocks,
        bcsr.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  return bcsr;
}

template DeviceBcsr<float> gpu_csr_to_bcsr<float>(const DeviceCsrView<float>&, int, int, const GpuContext&);
template DeviceBcsr<double> gpu_csr_to_bcsr<double>(const DeviceCsrView<double>&, int, int, const GpuContext&);

}  // namespace sparsetc::detail

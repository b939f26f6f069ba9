// CSR -> BCSR (dense h x w blocks) on the device.
//
// find_block_columns gives each block row's column blocks (block_row_ptr) and leaves each list
// where it was counted. Then one warp per compact block row (convert_internal.hpp: at most 256
// entries, 32 blocks; nearly every block row of banded, stencil and scattered matrices) does the
// rest (compact_block_rows.cuh): its list to block_col, its entries read once into the lanes'
// registers (every load of the block row in flight at once), each entry's row and block found by
// shuffles, and its blocks assembled in shared memory a few at a time (zeroed, the entries dropped
// in, then copied out with 16-byte stores: the padded value array, the bulk of the output, is
// written once and coalesced). (Measured on an H200: one round trip per block row, in CTAs of four
// warps, took the band's 8x8 blocks from 0.287 to 0.248 ms.)
//
// Block rows past those limits but within 1024 entries and 256 blocks (a stencil's 16-row block
// rows of 432 entries) take one CTA each (staged_block_rows.cuh): the same assembly in a 32 KB
// stage, a stage-full of blocks at a time.
//
// The other block rows (power-law hubs) are cut into tasks (block_chunks.cuh): one warp per run
// of 8 KB (at least 8 blocks) of consecutive blocks of one block row zeroes them with 16-byte
// stores, then drops in the entries of those blocks (the same warp: the zeros are ordered before).
// (Measured on an H200: the former one-CTA-per-32-KB-run scheme, with a binary search per row and
// run, was latency bound on banded matrices: 10-15% of the bandwidth floor.)
#include <algorithm>
#include <cstdint>

#include "gpu/convert/block_chunks.cuh"
#include "gpu/convert/compact_block_rows.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/convert/staged_block_rows.cuh"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

// A task's blocks: 8 KB of values, and at least 8 blocks. A warp zeroes its task's blocks and
// then stores the entries into them; while the task is small its zeroed lines are still in L2
// when the entries come (measured on an H200, R-MAT 2^20 of degree 14, double values: with 64 KB
// tasks the task kernel read 581 MB from DRAM where 221 MB is its input, the partial sectors of
// evicted lines read back. BCSR 16x8 / 16x16 / 8x8 took 5.74 / 8.31 / 3.96 ms with 64 KB tasks,
// 5.27 / 8.40 / 3.37 with 8 KB, 5.59 / 8.11 / 3.89 with 16 KB and 6.86 / 10.84 / 4.15 with 4 KB:
// 8 blocks of 16x8, 8 of 16x16 and 16 of 8x8 were best.)
constexpr int64_t kTaskBytes = 8 * 1024;
constexpr int64_t kTaskMinBlocks = 8;

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

template <typename V>
__global__ void __launch_bounds__(kCompactThreads)
    bcsr_compact_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                        const V* __restrict__ values, int64_t rows, int height, FastDivider width, int64_t groups,
                        const int64_t* __restrict__ block_ptr, const uint32_t* __restrict__ list,
                        int32_t* __restrict__ block_col, int stage_bytes, V* __restrict__ out) {
  extern __shared__ uint4 shared_stage[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  V* stage = reinterpret_cast<V*>(reinterpret_cast<char*>(shared_stage) + warp * stage_bytes);
  const int w = int(width.divisor), area = height * w;
  const bool vector_copy = (size_t(area) * sizeof(V)) % 16 == 0;
  const int stage_blocks = stage_bytes / (area * int(sizeof(V)));
  const auto wide = [&](int64_t, int64_t b0, int64_t blocks, const uint32_t* mine) {  // tasks do its values
    for (int64_t k = lane; k < blocks; k += 32) block_col[b0 + k] = int32_t(mine[k]);
  };
  const auto compact = [&](const CompactRow& row, const CompactEntries<V>& e, const CompactLocator& at) {
    const int n = row.n, entries = row.entries;
    const int64_t b0 = row.b0;
    if (lane < n) block_col[b0 + lane] = row.my_block;
    int slot[kCompactSlots];  // block * area + row * w + column in block (row-major blocks)
    place_compact_entries(e, at, width, entries, [&](int k, int rr, int cc) { return k * area + rr * w + cc; }, slot);
    write_compact_blocks(stage, stage_blocks, n, area, slot, e, entries, vector_copy, out + b0 * area);
  };
  for_each_block_row(row_ptr, col_idx, values, block_ptr, list, groups, FixedHeightRows{height, rows}, compact, wide);
}

// BCSR's blocks for the staged kernel: block b of the matrix at values b * area, row-major, the
// lists in place (find_block_columns' kInPlace).
struct BcsrStagedLayout {
  const uint32_t* lists;
  int height, width;
  __device__ int64_t base(int64_t, int64_t b0) const { return b0 * int64_t(height * width); }
  __device__ const uint32_t* list(int64_t first, int64_t) const { return lists + first; }
  __device__ int area(int) const { return height * width; }
  __device__ int place(int column_in_block, int row, int block, int, int area) const {
    return block * area + row * width + column_in_block;
  }
  __device__ void record(int64_t, int64_t, int, int, int32_t) const {}  // (bcsr_compact_kernel's)
};

// The block rows past the one-warp limits but within the staged ones, one CTA each (their
// block_col is written by bcsr_compact_kernel): listed[0, groups) where only some are
// (list_wide_groups), otherwise every block row.
template <typename V>
__global__ void __launch_bounds__(kStagedThreads)
    bcsr_staged_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                       const V* __restrict__ values, int64_t rows, int height, FastDivider width,
                       const int64_t* __restrict__ listed, int64_t groups, const int64_t* __restrict__ block_ptr,
                       const uint32_t* __restrict__ list, V* __restrict__ out) {
  extern __shared__ uint4 staged_stage[];
  zero_stage(staged_stage, kStagedStageBytes);
  const BcsrStagedLayout layout{list, height, int(width.divisor)};
  assemble_staged_groups(row_ptr, col_idx, values, block_ptr, GroupRows{rows, height, nullptr}, listed, groups,
                         layout, width, true, reinterpret_cast<V*>(staged_stage), kStagedStageBytes, out);
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
                                      block_rows, block_height, block_width, BlockListing::kInPlace, context);
  bcsr.blocks = b.blocks;
  bcsr.block_row_ptr = std::move(b.block_ptr);
  bcsr.block_col = buffer_of<int32_t>(b.blocks, context);
  const int area = block_height * block_width;
  bcsr.values = buffer_of<V>(b.blocks * area, context);
  if (b.blocks == 0) return bcsr;
  const int64_t* block_ptr = bcsr.block_row_ptr.template as<const int64_t>();
  const FastDivider width{uint32_t(block_width)};
  // The staging holds at least one block (1024 doubles are 8 KB).
  const int stage_bytes = std::max(kCompactStageBytes, area * int(sizeof(V)));
  const size_t shared = size_t(kCompactWarps) * size_t(stage_bytes);
  allow_dynamic_shared(bcsr_compact_kernel<V>, shared);
  bcsr_compact_kernel<V><<<compact_grid(block_rows), kCompactThreads, shared, context.stream>>>(
      csr.row_ptr, csr.col_idx, csr.values, csr.rows, block_height, width, block_rows, block_ptr,
      b.list.template as<const uint32_t>(), bcsr.block_col.template as<int32_t>(), stage_bytes,
      bcsr.values.template as<V>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  if (b.wide_groups > b.large_groups) {  // block rows that are not compact but within the staged limits
    const WideGroups wide =
        list_wide_groups(GroupRows{csr.rows, block_height, nullptr}, csr.row_ptr, block_ptr, block_rows,
                         b.wide_groups, context);
    const int64_t visited = wide.listed() ? b.wide_groups : block_rows;
    allow_dynamic_shared(bcsr_staged_kernel<V>, size_t(kStagedStageBytes));
    const unsigned grid = staged_grid(bcsr_staged_kernel<V>, kStagedStageBytes, visited);
    bcsr_staged_kernel<V><<<grid, kStagedThreads, kStagedStageBytes, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, block_height, width, wide.listed(), visited, block_ptr,
        b.list.template as<const uint32_t>(), bcsr.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  if (b.large_groups > 0) {  // the other block rows: tasks
    const int64_t task_blocks =
        std::clamp<int64_t>(std::max(kTaskBytes / (int64_t(area) * int64_t(sizeof(V))), kTaskMinBlocks), 1, 1024);
    const BlockTasks tasks =
        make_block_tasks(TaskCount{block_ptr, task_blocks, csr.row_ptr, block_height, csr.rows, true}, block_rows,
                         b.large_groups, b.blocks, context);
    bcsr_values_kernel<V><<<task_grid(tasks.most), kThreads, 0, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, block_height, width, block_rows, block_ptr,
        bcsr.block_col.template as<const int32_t>(), tasks.task_ptr.as<const int64_t>(),
        tasks.task_row.as<const int64_t>(), task_blocks, bcsr.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  return bcsr;
}

template DeviceBcsr<float> gpu_csr_to_bcsr<float>(const DeviceCsrView<float>&, int, int, const GpuContext&);
template DeviceBcsr<double> gpu_csr_to_bcsr<double>(const DeviceCsrView<double>&, int, int, const GpuContext&);

}  // namespace sparsetc::detail

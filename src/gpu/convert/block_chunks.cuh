// Visiting the entries of a blocked CSR block row by block row (.cu files only): the second half
// of the BCSR and bitmap-tile conversions, after find_block_columns has listed each block row's
// column blocks.
//
// The work is cut into tasks of at most `task_blocks` consecutive blocks of one block row, one
// warp per task (grid-stride): a block row with few blocks is one task, a power-law hub is many,
// so the warps stay balanced and every task's blocks fit a small budget (its values, its
// bitmaps). task_ptr[I] (a scan of the task counts, on the device) numbers the tasks of block row
// I, and task_row maps each task back to its block row (one load, no search on the way).
// A task that is a whole block row reads the block row's entries as one contiguous range of the
// CSR, 32 at a time (coalesced, no search per row); the row of each entry comes from the row ends
// held in the lanes (a shuffle search). A task that is part of a block row reads, row by row, the
// slice of columns its blocks cover (a binary search per row, then 32 at a time). Either way an
// entry's block is a search among the task's few column blocks (by shuffles when they fit the lanes).
#pragma once

#include <thrust/iterator/transform_iterator.h>

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"

namespace sparsetc::detail::gpuconv {

// Tasks of block row I: ceil(blocks of I / task_blocks); none for a compact block row
// (convert_internal.hpp) when row_ptr is given (a one-warp kernel has done those), nor for a
// staged one when `staged` is set (the one-CTA kernel has).
struct TaskCount {
  const int64_t* block_ptr;
  int64_t task_blocks;
  const int64_t* row_ptr = nullptr;
  int height = 0;
  int64_t rows = 0;
  bool staged = false;
  __device__ int64_t operator()(int64_t I) const {
    const int64_t n = block_ptr[I + 1] - block_ptr[I];
    if (row_ptr != nullptr) {
      const int64_t r0 = I * height, r1 = r0 + height < rows ? r0 + height : rows;
      const int64_t entries = row_ptr[r1] - row_ptr[r0];
      if (staged ? is_staged_group(entries, n) : is_compact_group(entries, n)) return 0;
    }
    return (n + task_blocks - 1) / task_blocks;
  }
};

// One task: block row I (rows [r0, r0 + rows)), its blocks [b0, b1).
struct BlockTask {
  int64_t I, r0, b0, b1;
  int rows;
  bool whole;
};

__device__ __forceinline__ BlockTask block_task(int64_t t, const int64_t* task_row, const int64_t* task_ptr,
                                                const int64_t* block_ptr, int64_t task_blocks, int height,
                                                int64_t rows) {
  BlockTask task;
  task.I = task_row[t];
  const int64_t first = block_ptr[task.I], last = block_ptr[task.I + 1];
  task.b0 = first + (t - task_ptr[task.I]) * task_blocks;
  task.b1 = task.b0 + task_blocks < last ? task.b0 + task_blocks : last;
  task.whole = task.b0 == first && task.b1 == last;
  task.r0 = task.I * height;
  task.rows = int(task.r0 + height < rows ? height : rows - task.r0);
  return task;
}

// Calls f(j, rr, c, b, load(j)) for every entry j of the task (row r0 + rr, column c, block b in
// [b0, b1)), on the lanes of the calling warp; warp-uniform arguments; height <= 32. load(j) (the
// entry's value, say) is read together with its column, kVisitBatch loads of each in flight. A
// task of at most 32 blocks keeps its column blocks in the lanes (the search is by shuffles).
constexpr int kVisitBatch = 4;

template <typename Load, typename F>
__device__ __forceinline__ void visit_task_entries(const BlockTask& task, const int64_t* __restrict__ row_ptr,
                                                   const int32_t* __restrict__ col_idx,
                                                   const int32_t* __restrict__ block_col, FastDivider width, Load load,
                                                   F f) {
  using Payload = decltype(load(int64_t(0)));
  const int lane = threadIdx.x & 31;
  const int64_t n = task.b1 - task.b0;
  if (task.whole) {
    // The searches below start at the largest power of two not above their largest answer (an
    // entry lies before the last row's end and at or before the last block): warp-uniform.
    const int row_top = search_top(task.rows - 1), block_top = n <= 32 ? search_top(int(n) - 1) : 0;
    const int64_t row_end = lane < task.rows ? row_ptr[task.r0 + lane + 1] : INT64_MAX;
    const int32_t my_block = lane < n ? block_col[task.b0 + lane] : INT32_MAX;
    const int64_t begin = row_ptr[task.r0], end = __shfl_sync(kFullMask, row_end, task.rows - 1);
    // Row ends in the lanes, from the task's first entry (a whole task holds at most task_blocks
    // dense blocks of at most 1024 entries: 32-bit offsets).
    const int32_t my_end = lane < task.rows ? int32_t(row_end - begin) : INT32_MAX;
    for (int64_t j0 = begin; j0 < end; j0 += 32 * kVisitBatch) {
      int32_t c[kVisitBatch];
      Payload payload[kVisitBatch];
#pragma unroll
      for (int u = 0; u < kVisitBatch; ++u) {
        const int64_t j = j0 + u * 32 + lane;
        c[u] = 0;
        payload[u] = Payload{};
        if (j < end) {
          c[u] = __ldg(col_idx + j);
          payload[u] = load(j);
        }
      }
#pragma unroll
      for (int u = 0; u < kVisitBatch; ++u) {
        const int64_t j = j0 + u * 32 + lane;
        const int32_t bc = int32_t(width.divide(uint32_t(c[u])));
        const int32_t offset = int32_t(j - begin);
        const int rr = count_below(my_end, task.rows, row_top, offset + 1);  // rows ending at or before j
        int64_t b = 0;  // blocks of the task before bc
        if (n <= 32) {
          b = task.b0 + count_below(my_block, int(n), block_top, bc);
        } else if (j < end) {
          b = lower_bound(block_col, task.b0, task.b1, bc);
        }
        if (j < end) f(j, rr, c[u], b, payload[u]);
      }
    }
  } else {
    const int64_t c_lo = int64_t(block_col[task.b0]) * width.divisor,
                  c_hi = (int64_t(block_col[task.b1 - 1]) + 1) * width.divisor;
    for (int rr = 0; rr < task.rows; ++rr) {
      const int64_t r = task.r0 + rr, end = row_ptr[r + 1];
      for (int64_t k0 = lower_bound(col_idx, row_ptr[r], end, c_lo);; k0 += 32) {
        const int64_t k = k0 + lane;
        const int64_t c = k < end ? int64_t(__ldg(col_idx + k)) : c_hi;
        const bool inside = c < c_hi;
        if (inside) {
          const int32_t bc = int32_t(width.divide(uint32_t(c)));
          f(k, rr, int32_t(c), lower_bound(block_col, task.b0, task.b1, bc), load(k));
        }
        if (__ballot_sync(kFullMask, inside) != kFullMask) break;
      }
    }
  }
}

// Writes task_row[t] = I for the tasks of block row I.
struct TaskRows {
  const int64_t* task_ptr;
  int64_t* task_row;
  __device__ void operator()(int64_t I) const {
    for (int64_t t = task_ptr[I]; t < task_ptr[I + 1]; ++t) task_row[t] = I;
  }
};

// The task offsets of `groups` block rows (one cub scan; no synchronisation) and an upper bound of
// the task count for sizing a grid.
struct BlockTasks {
  DeviceBuffer task_ptr;  // int64, groups + 1
  DeviceBuffer task_row;  // int64, one per task: its block row
  int64_t most = 0;
};

// task_groups: an upper bound of the block rows with tasks.
inline BlockTasks make_block_tasks(const TaskCount& count, int64_t groups, int64_t task_groups, int64_t blocks,
                                   const GpuContext& context) {
  const int64_t task_blocks = count.task_blocks;
  BlockTasks tasks;
  tasks.task_ptr = buffer_of<int64_t>(groups + 1, context);
  int64_t* ptr = tasks.task_ptr.as<int64_t>();
  zero(ptr, 1, context.stream);
  if (groups > 0) {
    const auto counts = thrustns::make_transform_iterator(thrustns::counting_iterator<int64_t>(0), count);
    run_cub("cub::DeviceScan::InclusiveSum", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceScan::InclusiveSum(temp, bytes, counts, ptr + 1, groups, context.stream);
    });
  }
  tasks.most = task_groups + blocks / task_blocks + 1;
  tasks.task_row = buffer_of<int64_t>(tasks.most, context);
  for_each_index(groups, context, TaskRows{ptr, tasks.task_row.as<int64_t>()});
  return tasks;
}

inline BlockTasks make_block_tasks(const int64_t* block_ptr, int64_t groups, int64_t blocks, int64_t task_blocks,
                                   const GpuContext& context) {
  return make_block_tasks(TaskCount{block_ptr, task_blocks}, groups, groups, blocks, context);
}

// CTAs of kThreads for one warp per task (grid-stride beyond 65536 CTAs).
inline unsigned task_grid(int64_t tasks) {
  const int64_t ctas = (tasks + kWarps - 1) / kWarps;
  return unsigned(ctas < 1 ? 1 : ctas > 65536 ? 65536 : ctas);
}

}  // namespace sparsetc::detail::gpuconv

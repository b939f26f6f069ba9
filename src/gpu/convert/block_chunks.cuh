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

// The ends of a tile row's list of tile columns in place (find_block_columns' BlockListing::kInPlace:
// increasing from the tile row's first entry), from which sorts_in_warp's span is read: the one
// rule of the bitmap tiles' sorting kernel and of their tasks.
struct TileListEnds {
  uint32_t lowest = 0, highest = 0;
  // The list of n tile columns from list[first] (none loaded where n is 0).
  __device__ __forceinline__ void load(const uint32_t* __restrict__ list, int64_t first, int64_t n) {
    if (n > 0) {
      lowest = list[first];
      highest = list[first + n - 1];
    }
  }
  __device__ __forceinline__ bool sorts_in_warp(int64_t entries) const {
    return gpuconv::sorts_in_warp(entries, int64_t(highest) - int64_t(lowest));
  }
};

// Tasks of block row I: ceil(blocks of I / task_blocks); when row_ptr is given, none for a compact
// block row (convert_internal.hpp; a one-warp kernel has done those) unless compact_done is false,
// nor for a staged one when `staged` is set (the one-CTA kernel has), nor for a tile row that
// sorts_in_warp when sorted_list (find_block_columns' lists in place) is given (the bitmap tiles'
// sorting kernel has).
struct TaskCount {
  const int64_t* block_ptr;
  int64_t task_blocks;
  const int64_t* row_ptr = nullptr;
  int height = 0;
  int64_t rows = 0;
  bool staged = false;
  const uint32_t* sorted_list = nullptr;
  bool compact_done = true;
  __device__ int64_t operator()(int64_t I) const {
    const int64_t n = block_ptr[I + 1] - block_ptr[I];
    if (row_ptr != nullptr) {
      const int64_t r0 = I * height, r1 = r0 + height < rows ? r0 + height : rows;
      const int64_t first = row_ptr[r0], entries = row_ptr[r1] - first;
      if (staged ? is_staged_group(entries, n) : compact_done && is_compact_group(entries, n)) return 0;
      if (sorted_list != nullptr && n > 0) {
        TileListEnds ends;
        ends.load(sorted_list, first, n);
        if (ends.sorts_in_warp(entries)) return 0;
      }
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

// The lower bounds of keys lo_key <= hi_key in the sorted a[lo, hi), searched together (the loads
// of both in flight at once).
__device__ __forceinline__ void lower_bounds(const int32_t* __restrict__ a, int64_t lo, int64_t hi, int64_t lo_key,
                                             int64_t hi_key, int64_t& lo_at, int64_t& hi_at) {
  int64_t l1 = lo, h1 = hi, l2 = lo, h2 = hi;
  while (l1 < h1 || l2 < h2) {
    const bool s1 = l1 < h1, s2 = l2 < h2;
    const int64_t m1 = (l1 + h1) >> 1, m2 = (l2 + h2) >> 1;
    const int64_t v1 = s1 ? int64_t(a[m1]) : 0, v2 = s2 ? int64_t(a[m2]) : 0;
    if (s1) (v1 < lo_key ? l1 = m1 + 1 : h1 = m1);
    if (s2) (v2 < hi_key ? l2 = m2 + 1 : h2 = m2);
  }
  lo_at = l1;
  hi_at = l2;
}

// The first of the n (> 0) increasing staged columns not below key: a branchless search in 32
// bits, the steps from the largest power of two below n (half the instructions of lower_bound's).
__device__ __forceinline__ int staged_lower_bound(const int32_t* __restrict__ cols, int n, int32_t key) {
  int at = 0;
  for (int step = 1 << (31 - __clz(n)); step > 0; step >>= 1)
    if (at + step <= n && cols[at + step - 1] < key) at += step;
  return at;
}

// Calls f(j, rr, c, b, load(j)) for every entry j of the task (row r0 + rr, column c, block b in
// [b0, b1)), on the lanes of the calling warp; warp-uniform arguments; height <= 32. load(j) (the
// entry's value, say) is read together with its column, kVisitBatch loads of each in flight. The
// task's entries are walked as one range: a whole block row's are contiguous; a part's are, in
// each row, the slice its blocks cover (both ends found by binary searches, a lane a row, every
// search in flight together), and the slices are numbered one after another (a flat offset's row
// by a shuffle search over the slices' ends in the lanes). A task of at most 32 blocks keeps its
// column blocks in the lanes (an entry's block by shuffles); a larger one searches them in global
// memory, or, given `staged_cols` (the warp's shared room for task_blocks of them), copies them
// there first. (Measured on an H200 under ncu, R-MAT's bitmap tasks, whose hubs take 128 tiles a
// task: 1.06 ms with the columns searched in global memory, a row's slice at a time and every
// slice searched again by each visit; 0.61 ms staged, flattened and searched once, task_slices.)
constexpr int kVisitBatch = 4;

// The task's entries, row by row: lane rr < rows holds where row r0 + rr's slice starts (`first`,
// an entry) and, as flat offsets from the task's first entry, where it ends (`end`; INT32_MAX in
// the other lanes); `total` entries in all. A task holds at most task_blocks dense blocks of at
// most 1024 entries: 32-bit offsets.
struct TaskSlices {
  int64_t first;
  int32_t end, total;
};

__device__ __forceinline__ TaskSlices task_slices(const BlockTask& task, const int64_t* __restrict__ row_ptr,
                                                  const int32_t* __restrict__ col_idx,
                                                  const int32_t* __restrict__ block_col, FastDivider width) {
  const int lane = threadIdx.x & 31;
  int64_t first = 0, stop = 0;
  if (lane < task.rows) {
    const int64_t r = task.r0 + lane;
    if (task.whole) {
      first = row_ptr[r];
      stop = row_ptr[r + 1];
    } else {
      const int64_t c_lo = int64_t(block_col[task.b0]) * width.divisor,
                    c_hi = (int64_t(block_col[task.b1 - 1]) + 1) * width.divisor;
      lower_bounds(col_idx, row_ptr[r], row_ptr[r + 1], c_lo, c_hi, first, stop);
    }
  }
  const int32_t length = int32_t(stop - first), inclusive = warp_inclusive_sum(length);
  return TaskSlices{first, lane < task.rows ? inclusive : INT32_MAX, __shfl_sync(kFullMask, inclusive, 31)};
}

// visit_task_entries on the task's slices (task_slices; a caller that visits the task twice
// searches once).
template <typename Load, typename F>
__device__ __forceinline__ void visit_task_slices(const BlockTask& task, const TaskSlices& slices,
                                                  const int32_t* __restrict__ col_idx,
                                                  const int32_t* __restrict__ block_col, FastDivider width, Load load,
                                                  F f, int32_t* staged_cols = nullptr) {
  using Payload = decltype(load(int64_t(0)));
  const int lane = threadIdx.x & 31;
  const int64_t n = task.b1 - task.b0;
  const int32_t my_block = lane < n ? block_col[task.b0 + lane] : INT32_MAX;
  if (staged_cols != nullptr && n > 32) {
    for (int k = lane; k < n; k += 32) staged_cols[k] = block_col[task.b0 + k];
    __syncwarp();
  }
  // the entry at flat offset q of the lane's row: shift + q (its row's slice starts where the row
  // before ends)
  const int32_t end_before = __shfl_up_sync(kFullMask, slices.end, 1);
  const int64_t shift = slices.first - (lane == 0 || lane >= task.rows ? 0 : int64_t(end_before));
  // The searches start at the largest power of two not above their largest answer: warp-uniform.
  const int row_top = search_top(task.rows - 1), block_top = n <= 32 ? search_top(int(n) - 1) : 0;
  for (int32_t q0 = 0; q0 < slices.total; q0 += 32 * kVisitBatch) {
    int32_t c[kVisitBatch];
    int rr[kVisitBatch];
    int64_t j[kVisitBatch];
    Payload payload[kVisitBatch];
#pragma unroll
    for (int u = 0; u < kVisitBatch; ++u) {
      const int32_t q = q0 + u * 32 + lane;
      rr[u] = count_below(slices.end, task.rows, row_top, q + 1);  // rows ending at or before q
      j[u] = __shfl_sync(kFullMask, shift, rr[u] & 31) + q;
      c[u] = 0;
      payload[u] = Payload{};
      if (q < slices.total) {
        c[u] = __ldg(col_idx + j[u]);
        payload[u] = load(j[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kVisitBatch; ++u) {
      const bool inside = q0 + u * 32 + lane < slices.total;
      const int32_t bc = int32_t(width.divide(uint32_t(c[u])));
      int64_t b = 0;  // blocks of the task before bc
      if (n <= 32) {
        b = task.b0 + count_below(my_block, int(n), block_top, bc);
      } else if (inside) {
        b = staged_cols != nullptr ? task.b0 + staged_lower_bound(staged_cols, int(n), bc)
                                   : lower_bound(block_col, task.b0, task.b1, bc);
      }
      if (inside) f(j[u], rr[u], c[u], b, payload[u]);
    }
  }
}

template <typename Load, typename F>
__device__ __forceinline__ void visit_task_entries(const BlockTask& task, const int64_t* __restrict__ row_ptr,
                                                   const int32_t* __restrict__ col_idx,
                                                   const int32_t* __restrict__ block_col, FastDivider width, Load load,
                                                   F f, int32_t* staged_cols = nullptr) {
  visit_task_slices(task, task_slices(task, row_ptr, col_idx, block_col, width), col_idx, block_col, width, load, f,
                    staged_cols);
}

// Writes task_row[t] = I for the tasks of block row I. (The end read once: in the loop condition
// it was reloaded after every store to task_row, which might alias task_ptr; R-MAT's bitmap tasks,
// a hub's thousand tasks a thread, took 37 us that way and 15 now, under ncu on an H200.)
struct TaskRows {
  const int64_t* task_ptr;
  int64_t* task_row;
  __device__ void operator()(int64_t I) const {
    const int64_t first = task_ptr[I], last = task_ptr[I + 1];
    for (int64_t t = first; t < last; ++t) task_row[t] = I;
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

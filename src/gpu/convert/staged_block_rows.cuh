// One CTA per row group whose dense blocks are assembled in shared memory (.cu files only):
// BCSR's block rows past the one-warp limits (compact_block_rows.cuh) but within kStagedEntries
// entries and kStagedBlocks blocks (convert_internal.hpp), such as a stencil's 16-row block rows
// (432 entries, 27-36 blocks), and VBR's row groups.
//
// The CTA loads the group's list of column blocks, its row ends and its entries into registers
// (every load in flight before any is waited on), puts the list and the row ends in shared memory,
// finds each entry's place by two binary searches there, then assembles the group's dense blocks in
// a shared stage a stage-full at a time: the entries of those blocks dropped in, the stage copied
// out with 16-byte stores and zeroed as it is read (zeroed once at the start, it stays zero between
// rounds). Every byte of the padded output is written once, coalesced. The CTAs are persistent, and
// each loads its next group's ranges one group ahead.
// (Measured on an H200: the tasks of block_chunks.cuh, which zero a block row's blocks in memory
// and then store each entry into them, took a stencil's 16x8 blocks to 32% of the bandwidth
// floor; this path 52%, the uniform matrix's from 50% to 79%. With the list stored to shared memory
// as soon as it was loaded, each group cost three round trips to memory instead of one. A table of
// each entry's row instead of the search over the row ends was slower: 45%.)
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/device_properties.hpp"

namespace sparsetc::detail::gpuconv {

constexpr int kStagedThreads = 256;
constexpr int kStagedSlots = int(kStagedEntries / kStagedThreads);  // entries per thread
static_assert(kStagedEntries % kStagedThreads == 0, "the staged entries fill the threads' slots");
static_assert(kStagedBlocks <= kStagedThreads, "a thread loads one block of the list");
constexpr int kStagedRows = 32;           // rows per group (one row end per thread)
constexpr int kStagedStageBytes = 32768;  // the dense stage (a BCSR block of 1024 doubles is 8 KB)
static_assert((kStagedRows & (kStagedRows - 1)) == 0 && (kStagedBlocks & (kStagedBlocks - 1)) == 0,
              "the searches' unrolled steps start at these powers of two");

// How many of the `count` non-decreasing values a[0..count) are below `key`, for count <= kTop (a
// power of two). The steps are unrolled: searching from the count's own top in a loop ran 17% more
// instructions in VBR's kernel, and BCSR 16x8 / 16x16 on a 27-point stencil took 16-23% longer.
template <int kTop, typename T>
__device__ __forceinline__ int count_below_in(const T* a, int count, T key) {
  int at = 0;
#pragma unroll
  for (int step = kTop; step >= 1; step >>= 1)
    if (at + step <= count && a[at + step - 1] < key) at += step;
  return at;
}

// Group g's first row, entry and block, where its values start, and its row, entry and block counts
// (clamped just past the staged limits: beyond them only "too large" matters), loaded one group
// ahead.
struct StagedRange {
  int64_t r0 = 0, first = 0, b0 = 0, base = 0;
  int rows = 0, entries = 0, blocks = 0;
  template <typename Layout>
  __device__ __forceinline__ void load(const int64_t* row_ptr, const int64_t* block_ptr, const GroupRows& groups,
                                       const Layout& layout, int64_t g) {
    int64_t r1;
    groups.range(g, r0, r1);
    first = row_ptr[r0];
    b0 = block_ptr[g];
    base = layout.base(g, b0);
    const int64_t e = row_ptr[r1] - first, n = block_ptr[g + 1] - b0, h = r1 - r0;
    rows = int(h <= kStagedRows ? h : kStagedRows + 1);
    entries = int(e <= kStagedEntries ? e : kStagedEntries + 1);
    blocks = int(n <= kStagedBlocks ? n : kStagedBlocks + 1);
  }
};

// The groups past the one-warp limits (not is_compact_group: the staged kernels' work), listed
// in no particular order, one thread a group and one atomic a warp. (A template, as it is in a
// header of several .cu files.)
template <typename Rows>
__global__ void __launch_bounds__(kThreads)
    list_wide_groups_kernel(Rows groups_of, const int64_t* __restrict__ row_ptr,
                            const int64_t* __restrict__ block_ptr, int64_t groups, int64_t capacity,
                            unsigned long long* __restrict__ count, int64_t* __restrict__ listed) {
  const int lane = threadIdx.x & 31;
  const int64_t g = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  bool wide = false;
  if (g < groups) {
    int64_t r0, r1;
    groups_of.range(g, r0, r1);
    wide = !is_compact_group(row_ptr[r1] - row_ptr[r0], block_ptr[g + 1] - block_ptr[g]);
  }
  const unsigned mask = __ballot_sync(kFullMask, wide);
  if (mask == 0) return;
  unsigned long long base = 0;
  if (lane == 0) base = atomicAdd(count, (unsigned long long)__popc(mask));
  base = __shfl_sync(kFullMask, base, 0);
  const int64_t at = int64_t(base) + __popc(mask & ((1u << lane) - 1u));
  if (wide && at < capacity) listed[at] = g;
}

// The wide groups of `groups` for a staged kernel, listed where only some are (0 < wide < groups),
// so that it does not walk the compact ones (a one-warp kernel's) to skip them. `wide` is
// find_block_columns' count of them. (Measured on an H200: R-MAT's BCSR 16x8 5.85 -> 5.72 ms; the
// band's VBR in groups of 8-24 rows, 29% of them wide, unchanged at 0.59-0.62 ms.)
struct WideGroups {
  DeviceBuffer storage;  // the count, then the groups
  const int64_t* listed() const { return storage.size() > 0 ? storage.as<const int64_t>() + 1 : nullptr; }
};

inline WideGroups list_wide_groups(GroupRows groups_of, const int64_t* row_ptr, const int64_t* block_ptr,
                                   int64_t groups, int64_t wide, const GpuContext& context) {
  WideGroups w;
  if (wide <= 0 || wide >= groups) return w;
  w.storage = DeviceBuffer(size_t(wide + 1) * sizeof(int64_t), context);
  unsigned long long* count = w.storage.as<unsigned long long>();
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(unsigned long long), context.stream));
  list_wide_groups_kernel<GroupRows><<<ctas_for(groups, kThreads), kThreads, 0, context.stream>>>(
      groups_of, row_ptr, block_ptr, groups, wide, count, w.storage.as<int64_t>() + 1);
  SPARSETC_CUDA_CHECK_LAUNCH();
  return w;
}

// The groups of a staged kernel, grid-stride: listed[0, groups) where listed is set (the wide
// groups beside a one-warp kernel's), otherwise every group. A group is assembled when it is
// within the staged limits, has at most kStagedRows rows and a block fits the stage, and, with
// skip_compact, is not compact (a one-warp kernel has done it). `layout` gives, for group g:
// base(g, b0), the offset of its values in `out`; list(first, b0), its column blocks
// (increasing); area(rows), a block's values; place(column in block, row in group, block of the
// group, rows, area), an entry's offset from base; and record(b0, base, area, k, block column)
// is told of the group's k-th block (a layout that writes the block columns itself). The stage
// (shared, stage_bytes, a multiple of 16) is zero on entry and left zero. Call from every thread
// of the CTA.
template <typename V, typename Layout>
__device__ __forceinline__ void assemble_staged_groups(const int64_t* __restrict__ row_ptr,
                                                       const int32_t* __restrict__ col_idx,
                                                       const V* __restrict__ values,
                                                       const int64_t* __restrict__ block_ptr, GroupRows groups_of,
                                                       const int64_t* __restrict__ listed, int64_t groups,
                                                       const Layout& layout, FastDivider width,
                                                       bool skip_compact, V* __restrict__ stage, int stage_bytes,
                                                       V* __restrict__ out) {
  __shared__ int32_t block_of_list[kStagedBlocks];
  __shared__ int32_t row_end[kStagedRows];
  const int t = int(threadIdx.x);
  const auto group_at = [&](int64_t m) { return listed != nullptr ? listed[m] : m; };
  StagedRange ahead;
  if (int64_t(blockIdx.x) < groups) ahead.load(row_ptr, block_ptr, groups_of, layout, group_at(blockIdx.x));
  for (int64_t m = blockIdx.x; m < groups; m += gridDim.x) {
    const StagedRange range = ahead;
    if (m + gridDim.x < groups) ahead.load(row_ptr, block_ptr, groups_of, layout, group_at(m + gridDim.x));
    const int n = range.blocks, entries = range.entries, nrows = range.rows;
    const int area = layout.area(nrows);
    // (CTA-uniform)
    if (!is_staged_group(entries, n) || nrows > kStagedRows || area * int(sizeof(V)) > stage_bytes ||
        (skip_compact && is_compact_group(entries, n)) || n == 0)
      continue;
    const int64_t first = range.first;
    // Everything of the group is loaded into registers before anything waits on a load (a shared
    // store of a loaded value would wait for it, and the loads after it with it).
    const int32_t listed = t < n ? int32_t(layout.list(first, range.b0)[t]) : 0;
    const int64_t end = t < nrows ? row_ptr[range.r0 + t + 1] : 0;
    int32_t c[kStagedSlots];
    V v[kStagedSlots];
#pragma unroll
    for (int u = 0; u < kStagedSlots; ++u) {
      const int k = u * kStagedThreads + t;
      c[u] = k < entries ? __ldg(col_idx + first + k) : -1;
      v[u] = k < entries ? __ldg(values + first + k) : V(0);
    }
    if (t < n) block_of_list[t] = listed;
    if (t < nrows) row_end[t] = int32_t(end - first);
    __syncthreads();
    int slot[kStagedSlots];
#pragma unroll
    for (int u = 0; u < kStagedSlots; ++u) {
      slot[u] = -1;
      if (c[u] < 0) continue;
      const uint32_t column = uint32_t(c[u]);
      const int32_t bc = int32_t(width.divide(column));
      const int rr = count_below_in<kStagedRows>(row_end, nrows, int32_t(u * kStagedThreads + t + 1));
      const int k = count_below_in<int(kStagedBlocks)>(block_of_list, n, bc);
      slot[u] = layout.place(int(column - uint32_t(bc) * width.divisor), rr, k, nrows, area);
    }
    const int stage_blocks = stage_bytes / (area * int(sizeof(V)));
    for (int k0 = 0; k0 < n; k0 += stage_blocks) {
      const int count = (n - k0 < stage_blocks ? n - k0 : stage_blocks) * area, low = k0 * area;
#pragma unroll
      for (int u = 0; u < kStagedSlots; ++u)
        if (slot[u] >= low && slot[u] < low + count) stage[slot[u] - low] = v[u];
      __syncthreads();
      V* to = out + range.base + low;
      if (reinterpret_cast<uintptr_t>(to) % 16 == 0 && (size_t(count) * sizeof(V)) % 16 == 0) {
        uint4* words = reinterpret_cast<uint4*>(stage);
#pragma unroll 4
        for (int i = t; i < count * int(sizeof(V)) / 16; i += kStagedThreads) {
          reinterpret_cast<uint4*>(to)[i] = words[i];
          words[i] = make_uint4(0, 0, 0, 0);
        }
      } else {
        for (int i = t; i < count; i += kStagedThreads) {
          to[i] = stage[i];
          stage[i] = V(0);
        }
      }
      __syncthreads();  // (the stage is zero again, and the list may be overwritten)
    }
    // (after the rounds, where their registers are free; only thread t writes block_of_list[t])
    if (t < n) layout.record(range.b0, range.base, area, t, block_of_list[t]);
  }
}

// Zeroes the stage (stage_bytes, a multiple of 16) before the first group.
__device__ __forceinline__ void zero_stage(void* stage, int stage_bytes) {
  for (int i = int(threadIdx.x); i < stage_bytes / 16; i += int(blockDim.x))
    reinterpret_cast<uint4*>(stage)[i] = make_uint4(0, 0, 0, 0);
  __syncthreads();
}

// CTAs of a staged kernel: as many as fit the device at once (each walks many groups, its stage
// zeroed once), at most one per group.
template <typename Kernel>
unsigned staged_grid(Kernel kernel, size_t shared, int64_t groups) {
  int per_sm = 0;
  const int sms = current_device_sm_count();
  SPARSETC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kStagedThreads, shared));
  const int64_t resident = int64_t(sms) * (per_sm > 0 ? per_sm : 1);
  return unsigned(groups < 1 ? 1 : groups < resident ? groups : resident);
}

}  // namespace sparsetc::detail::gpuconv

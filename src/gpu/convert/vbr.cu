// CSR -> VBR (row groups x column blocks of block_width, dense column-major blocks) on the device.
//
// find_block_columns with the row partition gives each group's column blocks, left in place. A
// block holds height * block_width values: the groups' value offsets are a scan over groups (blocks
// of the group * height * width), whose total comes back with find_block_columns' one read-back;
// a block's is its group's plus its rank in the group times its area.
//
// Where every group is within the staged limits (at most 32 rows, 1024 entries and 256 blocks, a
// block within the 32 KB stage: banded and stencil matrices in groups of a few to 32 rows), the
// groups are assembled in shared memory like BCSR's block rows. Where at least half of the groups
// are compact (compact_block_rows.cuh: at most 256 entries and 32 blocks), one warp per compact
// group, which also writes every group's block columns and value offsets, and one CTA per other
// group (staged_block_rows.cuh); otherwise one CTA per group, which writes the block columns and
// value offsets as it reads the lists. No memset, every value written once, coalesced. (Measured
// on an H200, a band in groups of 8-24 rows, 71% compact: one CTA per group of two or three blocks
// took 0.65 ms, the warps and CTAs 0.55. A stencil in such groups: 0.66 -> 0.62 ms without the
// copy of the lists, the kernel of the value offsets and the second read-back.)
//
// Otherwise the value array is zeroed (cudaMemsetAsync) and each entry, visited by the merge-path
// walk, is stored at value_offset[block] + column in block * height + row in group (its block by
// binary search among its group's column blocks).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "gpu/convert/compact_block_rows.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/convert/staged_block_rows.cuh"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

struct GroupValueCounts {
  const int64_t* group_ptr;
  const int64_t* block_ptr;
  int64_t width;
  int64_t* counts;
  __device__ void operator()(int64_t g) const {
    counts[g] = (block_ptr[g + 1] - block_ptr[g]) * (group_ptr[g + 1] - group_ptr[g]) * width;
  }
};

struct ValueOffsets {
  const int32_t* block_group;
  const int64_t* block_ptr;
  const int64_t* group_ptr;
  const int64_t* group_value_offset;
  int64_t width;
  int64_t* value_offset;
  __device__ void operator()(int64_t b) const {
    const int64_t g = block_group[b];
    value_offset[b] = group_value_offset[g] + (b - block_ptr[g]) * (group_ptr[g + 1] - group_ptr[g]) * width;
  }
};

struct RowGroups {
  const int64_t* group_ptr;
  int64_t groups;
  int32_t* row_group;
  __device__ void operator()(int64_t r) const { row_group[r] = int32_t(last_not_above(group_ptr, 0, groups, r)); }
};

template <typename V>
struct PlaceValues {
  const int32_t* col_idx;
  const V* values;
  const int32_t* row_group;
  const int64_t* group_ptr;
  const int64_t* block_ptr;
  const int32_t* block_col;
  const int64_t* value_offset;
  int64_t width;
  V* out;
  __device__ void operator()(int64_t j, int64_t i) const {
    const int64_t g = row_group[i], row0 = group_ptr[g], height = group_ptr[g + 1] - row0;
    const int64_t c = col_idx[j], bc = c / width;
    const int64_t b = lower_bound(block_col, block_ptr[g], block_ptr[g + 1], int32_t(bc));
    out[value_offset[b] + (c - bc * width) * height + (i - row0)] = values[j];
  }
};

// Block k of a group whose blocks [b0, ..) have their values one after another from `base`, `area`
// values each: its column and value offset (written by whichever kernel visits the group).
__device__ __forceinline__ void record_vbr_block(int32_t* __restrict__ block_col, int64_t* __restrict__ value_offset,
                                                 int64_t b0, int64_t base, int64_t area, int64_t k, int32_t column) {
  block_col[b0 + k] = column;
  value_offset[b0 + k] = base + k * area;
}

// One warp per group (compact_block_rows.cuh): every group's block columns and value offsets, and
// the values of the compact groups, their blocks assembled in the warp's stage (stage_bytes, at
// least the tallest group's block). Every group has at most 32 rows.
template <typename V>
__global__ void __launch_bounds__(kCompactThreads)
    vbr_compact_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                       const V* __restrict__ values, const int64_t* __restrict__ group_ptr, int64_t groups,
                       FastDivider width, const int64_t* __restrict__ block_ptr, const uint32_t* __restrict__ list,
                       const int64_t* __restrict__ group_offset, int32_t* __restrict__ block_col,
                       int64_t* __restrict__ value_offset, int stage_bytes, V* __restrict__ out) {
  extern __shared__ uint4 shared_stage[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  V* stage = reinterpret_cast<V*>(reinterpret_cast<char*>(shared_stage) + warp * stage_bytes);
  const int w = int(width.divisor);
  const auto wide = [&](int64_t g, int64_t b0, int64_t blocks, const uint32_t* mine) {  // the staged kernel's values
    const int64_t base = group_offset[g], area = (group_ptr[g + 1] - group_ptr[g]) * w;
    for (int64_t k = lane; k < blocks; k += 32)
      record_vbr_block(block_col, value_offset, b0, base, area, k, int32_t(mine[k]));
  };
  const auto compact = [&](const CompactRow& row, const CompactEntries<V>& e, const CompactLocator& at) {
    const int n = row.n, entries = row.entries, nrows = row.nrows, area = nrows * w;
    const int64_t b0 = row.b0, base = group_offset[row.g];
    int slot[kCompactSlots];  // block * area + column in block * rows + row (column-major blocks)
    place_compact_entries(e, at, width, entries, [&](int k, int rr, int cc) { return k * area + cc * nrows + rr; },
                          slot);
    if (lane < n) record_vbr_block(block_col, value_offset, b0, base, area, lane, row.my_block);
    const bool vector_copy = (size_t(area) * sizeof(V)) % 16 == 0 && (size_t(base) * sizeof(V)) % 16 == 0;
    write_compact_blocks(stage, stage_bytes / (area * int(sizeof(V))), n, area, slot, e, entries, vector_copy,
                         out + base);
  };
  for_each_block_row(row_ptr, col_idx, values, block_ptr, list, groups, PartitionRows{group_ptr}, compact, wide);
}

// VBR's blocks for the staged kernel: group g's values from group_offset[g], its blocks one after
// another, each column-major (rows of the group x width); the lists in place. Where block_col is
// set (no warps before it), the kernel writes each block's column and value offset as it reads them.
struct VbrStagedLayout {
  const uint32_t* lists;
  int32_t* block_col;
  int64_t* value_offset;
  const int64_t* group_offset;
  int width;
  __device__ int64_t base(int64_t g, int64_t) const { return group_offset[g]; }
  __device__ const uint32_t* list(int64_t first, int64_t) const { return lists + first; }
  __device__ int area(int rows) const { return rows * width; }
  __device__ int place(int column_in_block, int row, int block, int rows, int area) const {
    return block * area + column_in_block * rows + row;
  }
  __device__ void record(int64_t b0, int64_t base, int area, int k, int32_t block) const {
    if (block_col != nullptr) record_vbr_block(block_col, value_offset, b0, base, area, k, block);
  }
};

// One CTA per group (skip_compact: per group that is not compact, the others done by
// vbr_compact_kernel, which writes every group's block columns and value offsets; otherwise
// block_col and value_offset are written here): listed[0, groups) where they are listed
// (list_wide_groups), otherwise every group.
template <typename V>
__global__ void __launch_bounds__(kStagedThreads)
    vbr_staged_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                      const V* __restrict__ values, int64_t rows, const int64_t* __restrict__ group_ptr,
                      const int64_t* __restrict__ listed, int64_t groups,
                      const int64_t* __restrict__ block_ptr, const uint32_t* __restrict__ list,
                      int32_t* __restrict__ block_col, int64_t* __restrict__ value_offset,
                      const int64_t* __restrict__ group_offset, FastDivider width, bool skip_compact,
                      V* __restrict__ out) {
  extern __shared__ uint4 staged_stage[];
  zero_stage(staged_stage, kStagedStageBytes);
  const VbrStagedLayout layout{list, skip_compact ? nullptr : block_col, value_offset, group_offset,
                               int(width.divisor)};
  assemble_staged_groups(row_ptr, col_idx, values, block_ptr, GroupRows{rows, 0, group_ptr}, listed, groups, layout,
                         width, skip_compact, reinterpret_cast<V*>(staged_stage), kStagedStageBytes, out);
}

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceVbr<V> gpu_csr_to_vbr(const DeviceCsrView<V>& csr, const std::vector<int64_t>& group_ptr, int64_t block_width,
                            const GpuContext& context) {
  using namespace gpuconv;
  constexpr const char* op = "gpu_csr_to_vbr";
  require(block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": block width ", block_width, " (must be at least 1)");
  require(!group_ptr.empty() && group_ptr.front() == 0 && group_ptr.back() == csr.rows, SPARSETC_STATUS_INVALID_VALUE,
          op, ": group_ptr must partition [0, ", csr.rows, ")");
  // (the tallest and the shortest group in one pass without branches; the culprit searched only
  // where there is one)
  int64_t tallest = 0, shortest = 1;
  for (size_t g = 0; g + 1 < group_ptr.size(); ++g) {
    const int64_t height = group_ptr[g + 1] - group_ptr[g];
    tallest = std::max(tallest, height);
    shortest = std::min(shortest, height);
  }
  if (shortest < 1) {
    const auto g = size_t(std::adjacent_find(group_ptr.begin(), group_ptr.end(), std::greater_equal<>{}) -
                          group_ptr.begin());
    fail(SPARSETC_STATUS_INVALID_VALUE, op, ": group_ptr is not strictly increasing: group ", g, " is [",
         group_ptr[g], ", ", group_ptr[g + 1], ")");
  }
  require(csr.rows <= kMaxInt32 + int64_t(1), SPARSETC_STATUS_SIZE_OVERFLOW, op, ": too many groups");
  DeviceVbr<V> vbr;
  vbr.rows = csr.rows;
  vbr.cols = csr.cols;
  vbr.block_width = block_width;
  vbr.groups = int64_t(group_ptr.size()) - 1;
  vbr.group_ptr = buffer_of<int64_t>(vbr.groups + 1, context);
  copy_host_to_device(vbr.group_ptr.data(), group_ptr.data(), group_ptr.size() * sizeof(int64_t), context.stream);
  const int64_t* d_group_ptr = vbr.group_ptr.template as<const int64_t>();

  // The groups' value offsets (a scan over groups of blocks * height * width) are queued before
  // find_block_columns' read-back, which brings the value count back with its own totals.
  DeviceBuffer group_offset = buffer_of<int64_t>(vbr.groups + 1, context);
  const auto value_offsets = [&](const int64_t* block_ptr, unsigned long long* value_count) {
    DeviceBuffer group_counts = buffer_of<int64_t>(vbr.groups, context);
    for_each_index(vbr.groups, context,
                   GroupValueCounts{d_group_ptr, block_ptr, block_width, group_counts.as<int64_t>()});
    exclusive_scan_total(group_counts.as<const int64_t>(), group_offset.as<int64_t>(), vbr.groups, context);
    copy_device_to_device(value_count, group_offset.as<const int64_t>() + vbr.groups, sizeof(int64_t), context.stream);
  };
  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, 0, d_group_ptr,
                                      vbr.groups, tallest, block_width, BlockListing::kInPlace, context,
                                      value_offsets);
  vbr.blocks = b.blocks;
  vbr.value_offset = buffer_of<int64_t>(b.blocks + 1, context);
  const int64_t* block_ptr = b.block_ptr.as<const int64_t>();

  // Every group within the staged limits (tallest checked here, entries and blocks counted by
  // find_block_columns): the groups are assembled in shared memory, zeros and all. Where most
  // groups are compact, a warp each and a CTA per other group; otherwise a CTA each. (Measured on
  // an H200: each kernel walks every group, and skipping one costs it a round trip; a stencil in
  // groups of 8-24 rows, 12% compact, took 0.75 ms with both kernels and 0.68 with the CTAs alone.)
  // Either way the lists stay in place and the kernels write block_col and the value offsets as
  // they read them. Otherwise the lists are copied to block_col (with each block's group) and the
  // value offsets written by a kernel of their own.
  const int64_t block_bytes = tallest * block_width * int64_t(sizeof(V));
  const bool staged = b.large_groups == 0 && tallest <= kStagedRows && block_bytes <= int64_t(kStagedStageBytes);
  const bool by_warps = staged && 2 * b.wide_groups <= vbr.groups;
  if (staged) {
    vbr.block_col = buffer_of<int32_t>(b.blocks, context);
  } else {
    copy_block_lists(b, csr.row_ptr, csr.rows, 0, d_group_ptr, true, context);
    vbr.block_col = std::move(b.block_col);
    if (b.blocks > 0)
      for_each_index(b.blocks, context,
                     ValueOffsets{b.block_group.as<const int32_t>(), block_ptr, d_group_ptr,
                                  group_offset.as<const int64_t>(), block_width,
                                  vbr.value_offset.template as<int64_t>()});
  }
  vbr.block_ptr = std::move(b.block_ptr);
  vbr.value_count = b.extra;
  copy_device_to_device(vbr.value_offset.template as<int64_t>() + b.blocks, group_offset.as<const int64_t>() + vbr.groups,
                        sizeof(int64_t), context.stream);
  vbr.values = buffer_of<V>(vbr.value_count, context);
  if (b.blocks == 0) return vbr;
  const FastDivider width{uint32_t(std::min<int64_t>(block_width, kMaxInt32))};
  if (by_warps) {
    const int stage_bytes = std::max(kCompactStageBytes, int((block_bytes + 15) / 16 * 16));
    const size_t shared = size_t(kCompactWarps) * size_t(stage_bytes);
    allow_dynamic_shared(vbr_compact_kernel<V>, shared);
    vbr_compact_kernel<V><<<compact_grid(vbr.groups), kCompactThreads, shared, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, d_group_ptr, vbr.groups, width, block_ptr, b.list.as<const uint32_t>(),
        group_offset.as<const int64_t>(), vbr.block_col.template as<int32_t>(), vbr.value_offset.template as<int64_t>(),
        stage_bytes, vbr.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  if (staged && (!by_warps || b.wide_groups > 0)) {
    // (with the warps, only the other groups: listed)
    const WideGroups wide = by_warps ? list_wide_groups(GroupRows{csr.rows, 0, d_group_ptr}, csr.row_ptr, block_ptr,
                                                        vbr.groups, b.wide_groups, context)
                                     : WideGroups{};
    const int64_t visited = wide.listed() ? b.wide_groups : vbr.groups;
    allow_dynamic_shared(vbr_staged_kernel<V>, size_t(kStagedStageBytes));
    const unsigned grid = staged_grid(vbr_staged_kernel<V>, kStagedStageBytes, visited);
    vbr_staged_kernel<V><<<grid, kStagedThreads, kStagedStageBytes, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, d_group_ptr, wide.listed(), visited, block_ptr,
        b.list.as<const uint32_t>(), vbr.block_col.template as<int32_t>(), vbr.value_offset.template as<int64_t>(),
        group_offset.as<const int64_t>(), width, by_warps, vbr.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  if (staged) return vbr;
  DeviceBuffer row_group = buffer_of<int32_t>(csr.rows, context);
  for_each_index(csr.rows, context, RowGroups{d_group_ptr, vbr.groups, row_group.as<int32_t>()});
  zero(vbr.values.template as<V>(), vbr.value_count, context.stream);
  for_each_entry_with_row(csr.row_ptr, csr.rows, csr.nnz, context,
                          PlaceValues<V>{csr.col_idx, csr.values, row_group.as<const int32_t>(), d_group_ptr, block_ptr,
                                         vbr.block_col.template as<const int32_t>(),
                                         vbr.value_offset.template as<const int64_t>(), block_width,
                                         vbr.values.template as<V>()});
  return vbr;
}

template DeviceVbr<float> gpu_csr_to_vbr<float>(const DeviceCsrView<float>&, const std::vector<int64_t>&, int64_t,
                                                const GpuContext&);
template DeviceVbr<double> gpu_csr_to_vbr<double>(const DeviceCsrView<double>&, const std::vector<int64_t>&, int64_t,
                                                  const GpuContext&);

}  // namespace sparsetc::detail

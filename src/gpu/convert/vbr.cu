// CSR -> VBR (row groups x column blocks of block_width, dense column-major blocks) on the device.
//
// find_block_columns with the row partition gives each group's column blocks. A block holds
// height * block_width values: value_offset = a scan over groups (blocks of the group * height *
// width) plus the block's rank in its group. The value array is zeroed (cudaMemsetAsync) and each
// entry, visited by the merge-path walk, is stored at value_offset[block] + column in block *
// height + row in group (its block by binary search among its group's column blocks). Two read
// backs: the block count and the value count.
//
// Where every group is within the staged limits (at most 32 rows, 1024 entries and 256 blocks, a
// block within the 32 KB stage: banded and stencil matrices in groups of a few to 32 rows), one
// CTA per group assembles its blocks in shared memory instead (staged_block_rows.cuh): no memset,
// every value written once, coalesced.
#include <algorithm>
#include <cstdint>
#include <vector>

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

// VBR's blocks for the staged kernel: group g's values from group_offset[g], its blocks one after
// another, each column-major (rows of the group x width).
struct VbrStagedLayout {
  const int32_t* block_col;
  const int64_t* group_offset;
  int width;
  __device__ int64_t base(int64_t g, int64_t) const { return group_offset[g]; }
  __device__ const int32_t* list(int64_t, int64_t b0) const { return block_col + b0; }
  __device__ int area(int rows) const { return rows * width; }
  __device__ int place(int column_in_block, int row, int block, int rows, int area) const {
    return block * area + column_in_block * rows + row;
  }
};

template <typename V>
__global__ void __launch_bounds__(kStagedThreads)
    vbr_staged_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                      const V* __restrict__ values, int64_t rows, const int64_t* __restrict__ group_ptr, int64_t groups,
                      const int64_t* __restrict__ block_ptr, const int32_t* __restrict__ block_col,
                      const int64_t* __restrict__ group_offset, FastDivider width, V* __restrict__ out) {
  extern __shared__ uint4 staged_stage[];
  zero_stage(staged_stage, kStagedStageBytes);
  const VbrStagedLayout layout{block_col, group_offset, int(width.divisor)};
  assemble_staged_groups(row_ptr, col_idx, values, block_ptr, GroupRows{rows, 0, group_ptr}, groups, layout, width,
                         false, reinterpret_cast<V*>(staged_stage), kStagedStageBytes, out);
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
  int64_t tallest = 0;
  for (size_t g = 0; g + 1 < group_ptr.size(); ++g) {
    require(group_ptr[g + 1] > group_ptr[g], SPARSETC_STATUS_INVALID_VALUE, op,
            ": group_ptr is not strictly increasing: group ", g, " is [", group_ptr[g], ", ", group_ptr[g + 1], ")");
    tallest = std::max(tallest, group_ptr[g + 1] - group_ptr[g]);
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

  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, 0, d_group_ptr,
                                      vbr.groups, tallest, block_width, BlockListing::kColumnsAndGroups, context);
  vbr.blocks = b.blocks;
  vbr.block_ptr = std::move(b.block_ptr);
  vbr.block_col = std::move(b.block_col);
  vbr.value_offset = buffer_of<int64_t>(b.blocks + 1, context);
  const int64_t* block_ptr = vbr.block_ptr.template as<const int64_t>();

  // value offsets of the groups, then of the blocks
  DeviceBuffer group_counts = buffer_of<int64_t>(vbr.groups, context);
  DeviceBuffer group_offset = buffer_of<int64_t>(vbr.groups + 1, context);
  for_each_index(vbr.groups, context, GroupValueCounts{d_group_ptr, block_ptr, block_width, group_counts.as<int64_t>()});
  exclusive_scan_total(group_counts.as<const int64_t>(), group_offset.as<int64_t>(), vbr.groups, context);
  vbr.value_count = read_back(group_offset.as<const int64_t>() + vbr.groups, context.stream);
  copy_device_to_device(vbr.value_offset.template as<int64_t>() + b.blocks, group_offset.as<const int64_t>() + vbr.groups,
                        sizeof(int64_t), context.stream);
  vbr.values = buffer_of<V>(vbr.value_count, context);
  if (b.blocks == 0) return vbr;
  for_each_index(b.blocks, context,
                 ValueOffsets{b.block_group.as<const int32_t>(), block_ptr, d_group_ptr, group_offset.as<const int64_t>(),
                              block_width, vbr.value_offset.template as<int64_t>()});
  // Every group within the staged limits (tallest checked here, entries and blocks counted by
  // find_block_columns): one CTA per group writes its blocks, zeros and all.
  if (b.large_groups == 0 && tallest <= kStagedRows &&
      tallest * block_width * int64_t(sizeof(V)) <= int64_t(kStagedStageBytes)) {
    SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(vbr_staged_kernel<V>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             kStagedStageBytes));
    const unsigned grid = staged_grid(vbr_staged_kernel<V>, kStagedStageBytes, vbr.groups);
    vbr_staged_kernel<V><<<grid, kStagedThreads, kStagedStageBytes, context.stream>>>(
        csr.row_ptr, csr.col_idx, csr.values, csr.rows, d_group_ptr, vbr.groups, block_ptr,
        vbr.block_col.template as<const int32_t>(), group_offset.as<const int64_t>(),
        FastDivider{uint32_t(block_width)}, vbr.values.template as<V>());
    SPARSETC_CUDA_CHECK_LAUNCH();
    return vbr;
  }
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

// column_reuse_gaps: the entries sorted by column (a stable radix sort of their positions), then
// one pass that bins the distance between neighbours of one column.
#include "gpu/spmm/cuda_core/reuse_gaps.hpp"

#include <algorithm>

#include "gpu/convert/convert_common.cuh"

namespace sparsetc::detail {
namespace {

namespace gc = gpuconv;

struct Positions {
  int32_t* out;
  __device__ void operator()(int64_t i) const { out[i] = int32_t(i); }
};

// bins[b] += entries i > 0 whose column equals entry i - 1's (sorted by column, positions rising
// within a column) and whose gap pos[i] - pos[i - 1] is in [2^b, 2^(b+1)).
__global__ void __launch_bounds__(gc::kThreads)
    gap_bins_kernel(const uint32_t* cols, const int32_t* pos, int64_t n, unsigned long long* bins) {
  __shared__ unsigned int local[ReuseGaps::kBins];
  if (threadIdx.x < ReuseGaps::kBins) local[threadIdx.x] = 0;
  __syncthreads();
  for (int64_t i = int64_t(blockIdx.x) * gc::kThreads + threadIdx.x + 1; i < n; i += int64_t(gridDim.x) * gc::kThreads) {
    if (cols[i] != cols[i - 1]) continue;
    const uint32_t gap = uint32_t(pos[i] - pos[i - 1]);  // >= 1: a stable sort keeps positions rising
    atomicAdd(&local[31 - __clz(gap)], 1u);
  }
  __syncthreads();
  if (threadIdx.x < ReuseGaps::kBins && local[threadIdx.x] > 0) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

}  // namespace

ReuseGaps column_reuse_gaps(const int32_t* col_idx, int64_t nnz, int64_t cols, const GpuContext& context) {
  ReuseGaps gaps;
  const int64_t n = std::min(nnz, kReuseGapMaxEntries);
  gaps.entries = n;
  if (n < 2) return gaps;
  DeviceBuffer pos = gc::buffer_of<int32_t>(n, context), sorted_pos = gc::buffer_of<int32_t>(n, context);
  DeviceBuffer sorted_cols = gc::buffer_of<uint32_t>(n, context);
  gc::for_each_index(n, context, Positions{pos.as<int32_t>()});
  const uint32_t* keys = reinterpret_cast<const uint32_t*>(col_idx);  // non-negative: the same order
  gc::run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
    return gc::cubns::DeviceRadixSort::SortPairs(temp, bytes, keys, sorted_cols.as<uint32_t>(),
                                                 pos.as<const int32_t>(), sorted_pos.as<int32_t>(), n, 0,
                                                 std::max(1, gc::bits_for(uint64_t(cols))), context.stream);
  });
  DeviceBuffer bins = gc::buffer_of<unsigned long long>(ReuseGaps::kBins, context);
  gc::zero(bins.as<unsigned long long>(), ReuseGaps::kBins, context.stream);
  const unsigned ctas = std::min<unsigned>(gc::ctas_for(n, int64_t(gc::kThreads) * 8), 4096);
  gap_bins_kernel<<<ctas, gc::kThreads, 0, context.stream>>>(sorted_cols.as<const uint32_t>(),
                                                            sorted_pos.as<const int32_t>(), n,
                                                            bins.as<unsigned long long>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  unsigned long long host[ReuseGaps::kBins];
  copy_device_to_host(host, bins.data(), sizeof(host), context.stream);
  for (int b = 0; b < ReuseGaps::kBins; ++b) gaps.bins[size_t(b)] = int64_t(host[b]);
  return gaps;
}

}  // namespace sparsetc::detail

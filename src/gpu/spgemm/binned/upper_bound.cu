// Stage 1 (paper, Algorithm 2): the upper bound u_i of every row of C, the products of row i of A
// with B, a thread per row as in the paper when rows are short on average, eight lanes or a warp
// per row otherwise (a thread would serialise the long rows of skewed matrices, or leave most SMs
// idle on few rows); with it the C~ room of each row (u, or less where the row's column span is
// narrower: bins.hpp, row_capacity), whose scan the panel split cuts.
#include <vector>

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// GROUP threads per row (1: many rows of a few entries; 8: fewer rows of about 10-20 entries,
// so a warp takes four rows in one pass instead of one; 32: long rows), the bound and the room. A
// row longer than the group's share (kLongRow entries for a thread, 4 a lane for a group of 8) is
// left by its group to the whole warp: a thread would walk a hub row of 10^4 entries alone while
// the grid waits.
constexpr int kLongRow = 64;
constexpr int64_t kThreadRowsMin = int64_t(1) << 17;
template <int GROUP>
constexpr int64_t group_row_limit() {
  return GROUP == 1 ? kLongRow : GROUP == 32 ? INT64_MAX : 4 * GROUP;
}

__device__ __forceinline__ void store_bound(int64_t i, int64_t products, int64_t span, int64_t merge_initial,
                                            int64_t* bound, int64_t* capacity) {
  bound[i] = products;
  capacity[i] = row_capacity(bin_of(products, 0), products, span, merge_initial);
}

// Whether stage 1 measures a row's column span for its room (bins.hpp, row_capacity).
__device__ __forceinline__ bool measures_span(int64_t products) {
  return products > kSpanMinBound && products <= kEscMaxBound;
}

template <typename V>
__device__ __forceinline__ int64_t products_of(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t begin,
                                               int64_t end, int member, int group) {
  int64_t products = 0;
#pragma unroll 4
  for (int64_t p = begin + member; p < end; p += group) {
    const int32_t k = __ldg(a.col_idx + p);
    products += __ldg(b.row_ptr + k + 1) - __ldg(b.row_ptr + k);
  }
  return products;
}

// Sum over the GROUP lanes of this one's group, on every lane of it.
template <int GROUP>
__device__ __forceinline__ int64_t group_sum(int64_t x) {
#pragma unroll
  for (int offset = GROUP / 2; offset > 0; offset >>= 1) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// Width of the group's column span from the lanes' shares (0 when none met a non-empty row of B).
template <int GROUP>
__device__ __forceinline__ int64_t group_span(int32_t lo, int32_t hi) {
#pragma unroll
  for (int offset = GROUP / 2; offset > 0; offset >>= 1) {
    lo = min(lo, __shfl_xor_sync(kFullMask, lo, offset));
    hi = max(hi, __shfl_xor_sync(kFullMask, hi, offset));
  }
  return hi >= lo ? int64_t(hi) - int64_t(lo) + 1 : 0;
}

// Row [begin, end) of A's bound and span, summed and reduced over GROUP lanes (member of them);
// a lane past the rows calls it with an empty row (the shuffles take every lane).
template <typename V, int GROUP>
__device__ __forceinline__ void bound_and_span(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t begin,
                                               int64_t end, int member, int64_t& products, int64_t& span) {
  products = group_sum<GROUP>(products_of(a, b, begin, end, member, GROUP));
  int32_t lo = INT32_MAX, hi = -1;
  if (measures_span(products)) span_share(a, b, begin + member, end, GROUP, lo, hi);
  const int64_t width = group_span<GROUP>(lo, hi);
  span = measures_span(products) ? width : products;
}

// Also adds the warp's products to *total (zeroed before): no separate reduction launch.
template <typename V, int GROUP>
__global__ void __launch_bounds__(kThreads)
    upper_bound_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, int64_t merge_initial, int64_t* __restrict__ bound,
                       int64_t* __restrict__ capacity, unsigned long long* __restrict__ total) {
  constexpr int kGroups = kThreads / GROUP;
  const int lane = threadIdx.x & 31, member = lane % GROUP;
  int64_t stored = 0;  // products of the rows this thread stored
  // Warp-uniform trip count: every lane of a warp runs each iteration (the warp may share rows).
  for (int64_t first = int64_t(blockIdx.x) * kGroups + int64_t(threadIdx.x / 32) * (32 / GROUP); first < a.rows;
       first += int64_t(gridDim.x) * kGroups) {
    const int64_t i = first + lane / GROUP;
    const bool valid = i < a.rows;
    const int64_t begin = valid ? __ldg(a.row_ptr + i) : 0, end = valid ? __ldg(a.row_ptr + i + 1) : 0;
    const bool alone = end - begin <= group_row_limit<GROUP>();
    int64_t products, span;
    bound_and_span<V, GROUP>(a, b, begin, alone ? end : begin, member, products, span);
    if (valid && alone && member == 0) {
      store_bound(i, products, span, merge_initial, bound, capacity);
      stored += products;
    }
    if constexpr (GROUP < 32) {
      for (unsigned long_rows = __ballot_sync(kFullMask, valid && !alone && member == 0); long_rows != 0;
           long_rows &= long_rows - 1) {
        const int owner = __ffs(long_rows) - 1;
        const int64_t row = __shfl_sync(kFullMask, i, owner), row_begin = __shfl_sync(kFullMask, begin, owner),
                      row_end = __shfl_sync(kFullMask, end, owner);
        int64_t row_products, row_span;
        bound_and_span<V, 32>(a, b, row_begin, row_end, lane, row_products, row_span);
        if (lane == 0) {
          store_bound(row, row_products, row_span, merge_initial, bound, capacity);
          stored += row_products;
        }
      }
    }
  }
  // One atomic per block: tens of thousands of them on one address cost more than the bounds
  // (H200, usroads-48 with a warp per row: 97 us of atomics).
  __shared__ int64_t warp_products[kWarps];
  for (int offset = 16; offset > 0; offset >>= 1) stored += __shfl_xor_sync(kFullMask, stored, offset);
  if ((threadIdx.x & 31) == 0) warp_products[threadIdx.x / 32] = stored;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t block_products = 0;
    for (int w = 0; w < kWarps; ++w) block_products += warp_products[w];
    if (block_products != 0) atomicAdd(total, static_cast<unsigned long long>(block_products));
  }
}

__global__ void panel_bounds_kernel(const int64_t* __restrict__ cap_scan, int64_t rows, int64_t panels,
                                    int64_t* __restrict__ out) {
  const int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p > panels) return;
  const int64_t total = cap_scan[rows];
  int64_t row = rows;
  if (p == 0) {
    row = 0;
  } else if (p < panels) {
    // p * total / panels in floating point: no overflow for any total.
    const int64_t target = int64_t(double(total) * double(p) / double(panels));
    row = lower_bound_in(cap_scan, rows + 1, target);
  }
  out[p] = row;
  out[panels + 1 + p] = cap_scan[row];
}

// At most 4096 blocks (a grid-stride loop takes the rest): as many atomics on the total.
unsigned grid_for(int64_t work, int64_t per_cta) {
  const int64_t ctas = (work + per_cta - 1) / per_cta;
  return unsigned(ctas < 1 ? 1 : (ctas > 4096 ? 4096 : ctas));
}

}  // namespace

template <typename V>
DeviceBuffer upper_bounds(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t merge_initial, int64_t* bound,
                          int64_t* cap_scan, const GpuContext& context) {
  const int64_t rows = a.rows;
  DeviceBuffer capacity = gpuconv::buffer_of<int64_t>(rows, context);
  DeviceBuffer totals = gpuconv::buffer_of<int64_t>(1, context);  // the products
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(totals.data(), 0, sizeof(int64_t), context.stream));
  auto* products = reinterpret_cast<unsigned long long*>(totals.as<int64_t>());
  if (rows > 0) {
    // Short rows: a thread each, when there are enough rows to fill the GPU that way (with fewer,
    // the warps that meet long rows walk them alone on a few SMs: wiki-Vote, 8297 rows of up to
    // 893 entries, 56 us a thread per row); fewer rows of up to about 20 entries on average: eight
    // lanes a row (rgg_n_2_15_s0, 32768 rows of 10: 10.6 us a warp per row, four waves of
    // dependent loads); longer rows a warp each.
    if (a.nnz <= 16 * rows && rows >= kThreadRowsMin) {
      upper_bound_kernel<V, 1><<<grid_for(rows, kThreads), kThreads, 0, context.stream>>>(
          a, b, merge_initial, bound, capacity.as<int64_t>(), products);
    } else if (a.nnz <= 20 * rows) {
      upper_bound_kernel<V, 8><<<grid_for(rows, kThreads / 8), kThreads, 0, context.stream>>>(
          a, b, merge_initial, bound, capacity.as<int64_t>(), products);
    } else {
      upper_bound_kernel<V, 32><<<grid_for(rows, kWarps), kThreads, 0, context.stream>>>(
          a, b, merge_initial, bound, capacity.as<int64_t>(), products);
    }
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  gpuconv::exclusive_scan_total(capacity.as<const int64_t>(), cap_scan, rows, context);
  return totals;
}

PanelBounds panel_bounds(const int64_t* cap_scan, int64_t rows, int64_t panels, const GpuContext& context) {
  DeviceBuffer out = gpuconv::buffer_of<int64_t>(2 * (panels + 1), context);
  panel_bounds_kernel<<<unsigned((panels + 1 + 255) / 256), 256, 0, context.stream>>>(cap_scan, rows, panels,
                                                                                     out.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  std::vector<int64_t> host(size_t(2 * (panels + 1)));
  copy_device_to_host(host.data(), out.data(), host.size() * sizeof(int64_t), context.stream);
  PanelBounds bounds;
  bounds.rows.assign(host.begin(), host.begin() + (panels + 1));
  bounds.room_before.assign(host.begin() + (panels + 1), host.end());
  return bounds;
}

template DeviceBuffer upper_bounds<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, int64_t,
                                          int64_t*, int64_t*, const GpuContext&);
template DeviceBuffer upper_bounds<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, int64_t,
                                           int64_t*, int64_t*, const GpuContext&);

}  // namespace sparsetc::detail::binned

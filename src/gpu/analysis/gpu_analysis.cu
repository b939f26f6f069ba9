// GPU structure analysis: every entry is read once by one of two kernels, then two CUB
// reductions and one copy back.
//
// Light block rows (at most heavy_entries entries in their 16 rows) - analyze_block_rows: a CTA
// of 8 warps covers 256 rows; each half warp takes one block row of 16 rows, one lane per row. The
// 16 lanes merge their (sorted) rows by 8-column group: each step takes the smallest group g still
// ahead of any lane (a half-warp min), the lanes whose next entries lie in g consume them (at most
// 8 per row), and a half-warp sum of the counts of rows 0-7 and 8-15 gives the two 8x8 tiles of g.
// So every 16x8 block is seen once, in increasing column order (16x16 blocks: changes of g / 2),
// and every entry is read once by its own lane, in order, which also yields the DCSR row segments,
// their entropy terms and the product count. The same kernel takes the row-length statistics and
// the bandwidth of every row (heavy ones included: they need only the row offsets and the first
// and last column).
//
// Heavy block rows - analyze_heavy_block_rows: a CTA of 16 warps per block row (a grid-stride
// loop over the list of heavy block rows, selected with cub::DeviceSelect in block-row order).
// Each warp walks one row 32 entries at a time for the strips (segment starts and ends by ballot)
// and the products; then the CTA sweeps the block row's 8-column groups in windows of
// kWindowGroups groups (even-aligned, so 16x16 blocks never straddle two windows): all entries of
// the window are counted in parallel into shared counters (rows 0-7 in the low, 8-15 in the high
// half of a word), and the touched counters give the blocks and tiles. A long row (power-law
// graphs) is thereby spread over a whole CTA instead of one lane.
//
// Integer results are accumulated with integer atomics (order-independent, so exact), through
// shared memory per CTA; the squared row lengths in 128 bits (two words with a carry). The two
// entropy sums are compensated (Neumaier) per thread, reduced per CTA (per heavy block row) with
// cub::BlockReduce into partials at fixed places and then by cub::DeviceReduce::Sum: reproducible
// for a given matrix on a given device, in another order than the CPU's (gpu_analysis.hpp).
#include "gpu/analysis/gpu_analysis.hpp"

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <climits>
#include <cstddef>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/device_properties.hpp"

namespace sparsetc::detail {
namespace {

namespace cubns = CUB_NS_QUALIFIER;
namespace thrustns = THRUST_NS_QUALIFIER;
using ull = unsigned long long;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int64_t kRowsPerCta = kWarps * 2 * 16;  // two 16-row block rows per warp
constexpr int kHeavyThreads = 16 * 32;           // one warp per row of the block row
constexpr int kWindowGroups = 2048;              // 8-column groups per window of the heavy path (even)
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr unsigned kDone = 0xFFFFFFFFu;  // "no group left" (groups are col / 8 < 2^28)

// What the kernels accumulate; the entropy sums are written by the final reductions.
struct Counters {
  ull empty_rows, min_length, max_length, bandwidth;
  ull squares_lo, squares_hi;  // sum of length^2, 128 bits
  ull products, row_segments, blocks_16x8, blocks_16x16;
  ull histogram[65];  // 8x8 tiles by entry count
  double entropy_self, entropy_rest;
};

// The per-CTA part of the integer counters, in shared memory.
struct CtaCounters {
  ull empty_rows, min_length, max_length, bandwidth;
  ull squares_lo, squares_hi;
  ull products, row_segments, blocks_16x8, blocks_16x16;
  unsigned histogram[65];
};

__device__ void clear(CtaCounters& cta) {
  for (int t = threadIdx.x; t < 65; t += blockDim.x) cta.histogram[t] = 0;
  if (threadIdx.x == 0) {
    cta.empty_rows = cta.max_length = cta.bandwidth = cta.squares_lo = cta.squares_hi = 0;
    cta.products = cta.row_segments = cta.blocks_16x8 = cta.blocks_16x16 = 0;
    cta.min_length = ULLONG_MAX;
  }
}

// Exact 128-bit accumulation with 64-bit atomics: the carry out of the low word goes to the high.
__device__ __forceinline__ void atomic_add_u128(ull* lo, ull* hi, ull value) {
  const ull old = atomicAdd(lo, value);
  if (old + value < old) atomicAdd(hi, 1ull);
}

// Adds a CTA's counters to the totals (after a __syncthreads that ends the CTA's updates).
__device__ void flush(const CtaCounters& cta, Counters* out) {
  if (threadIdx.x == 0) {
    if (cta.empty_rows) atomicAdd(&out->empty_rows, cta.empty_rows);
    if (cta.min_length != ULLONG_MAX) atomicMin(&out->min_length, cta.min_length);
    if (cta.max_length) atomicMax(&out->max_length, cta.max_length);
    if (cta.bandwidth) atomicMax(&out->bandwidth, cta.bandwidth);
    if (cta.squares_lo) atomic_add_u128(&out->squares_lo, &out->squares_hi, cta.squares_lo);
    if (cta.squares_hi) atomicAdd(&out->squares_hi, cta.squares_hi);
    if (cta.products) atomicAdd(&out->products, cta.products);
    if (cta.row_segments) atomicAdd(&out->row_segments, cta.row_segments);
    if (cta.blocks_16x8) atomicAdd(&out->blocks_16x8, cta.blocks_16x8);
    if (cta.blocks_16x16) atomicAdd(&out->blocks_16x16, cta.blocks_16x16);
  }
  for (int t = threadIdx.x; t < 65; t += blockDim.x)
    if (cta.histogram[t]) atomicAdd(&out->histogram[t], ull(cta.histogram[t]));
}

// Compensated (Neumaier) sum: the terms are many and of mixed sizes (one lane may walk a long row).
struct CompensatedSum {
  double sum = 0, compensation = 0;
  __device__ void add(double x) {
    const double t = __dadd_rn(sum, x);
    compensation += fabs(sum) >= fabs(x) ? __dadd_rn(__dsub_rn(sum, t), x) : __dadd_rn(__dsub_rn(x, t), sum);
    sum = t;
  }
  __device__ double value() const { return sum + compensation; }
};

// The terms of one row segment of c entries (the CPU's add_segment): c ln c and c ln(nnz / c).
struct SegmentSums {
  ull segments = 0;
  CompensatedSum self, rest;
  __device__ void add(int64_t c, int64_t nnz) {
    ++segments;
    const double dc = double(c);
    self.add(__dmul_rn(dc, log(dc)));
    rest.add(__dmul_rn(dc, log1p(double(nnz - c) / dc)));
  }
};

__device__ __forceinline__ unsigned half_warp_min(unsigned v) {
  for (int offset = 8; offset > 0; offset >>= 1) v = min(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

__device__ __forceinline__ unsigned half_warp_sum(unsigned v) {
  for (int offset = 8; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ __forceinline__ int64_t block_row_entries(const int64_t* row_ptr, int64_t rows, int64_t block_row) {
  return row_ptr[min(rows, (block_row + 1) * 16)] - row_ptr[block_row * 16];
}

// Whether a block row goes to the heavy path (same test in the selection and the light kernel).
struct IsHeavy {
  const int64_t* row_ptr;
  int64_t rows, heavy_entries;
  __device__ bool operator()(int64_t block_row) const {
    return block_row_entries(row_ptr, rows, block_row) > heavy_entries;
  }
};

// strip: the strip width clamped to max(cols, 1) (same segments; boundaries fit in 64 bits and
// the width in 32).
__global__ void __launch_bounds__(kThreads)
    analyze_block_rows(int64_t rows, int64_t nnz, const int64_t* __restrict__ row_ptr,
                       const int32_t* __restrict__ col, const int64_t* __restrict__ b_row_ptr, unsigned strip,
                       IsHeavy is_heavy, Counters* __restrict__ out, double* __restrict__ self_partials,
                       double* __restrict__ rest_partials) {
  using BlockReduce = cubns::BlockReduce<double, kThreads>;
  __shared__ CtaCounters cta;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  clear(cta);
  __syncthreads();

  const int r = threadIdx.x & 15;  // row within the block row
  const int64_t block_row = int64_t(blockIdx.x) * (kRowsPerCta / 16) + (threadIdx.x >> 4);
  const int64_t row = block_row * 16 + r;
  const bool valid = row < rows;
  int64_t cursor = valid ? row_ptr[row] : 0;
  const int64_t end = valid ? row_ptr[row + 1] : 0;
  if (valid) {
    const ull length = ull(end - cursor);
    if (length == 0) atomicAdd(&cta.empty_rows, 1ull);
    atomicMin(&cta.min_length, length);
    atomicMax(&cta.max_length, length);
    atomic_add_u128(&cta.squares_lo, &cta.squares_hi, length * length);
    if (length > 0) {
      // Columns are sorted: the extremes of the row are its first and last entries.
      const int64_t first = col[cursor], last = col[end - 1];
      atomicMax(&cta.bandwidth, ull(max(llabs(row - first), llabs(last - row))));
    }
  }
  // Heavy block rows are left to analyze_heavy_block_rows.
  const bool light = block_row * 16 < rows && !is_heavy(block_row);

  // Merge of the 16 rows by 8-column group.
  unsigned current = light && cursor < end ? unsigned(col[cursor]) >> 3 : kDone;
  int64_t strip_end = -1, segment = 0;  // current strip [.., strip_end) of this row and its entries
  SegmentSums sums;
  ull products = 0, blocks_16x8 = 0, blocks_16x16 = 0;
  unsigned last_pair = kDone;  // last 16-column group counted (lane r == 0)
  while (__any_sync(kFullMask, current != kDone)) {
    const unsigned group = half_warp_min(current);
    unsigned taken = 0;
    if (current != kDone && current == group) {
      unsigned j = unsigned(col[cursor]);
      for (;;) {
        if (int64_t(j) >= strip_end) {
          if (segment > 0) sums.add(segment, nnz);
          strip_end = int64_t(j / strip + 1) * strip;
          segment = 0;
        }
        ++segment;
        if (b_row_ptr != nullptr) products += ull(b_row_ptr[j + 1] - b_row_ptr[j]);
        ++taken;
        if (++cursor == end) {
          current = kDone;
          break;
        }
        j = unsigned(col[cursor]);
        if (j >> 3 != group) {
          current = j >> 3;
          break;
        }
      }
    }
    // Entries of this group in rows 0-7 (low byte) and 8-15 (next byte): at most 64 each.
    const unsigned packed = half_warp_sum(r < 8 ? taken : taken << 8);
    if (r == 0 && group != kDone) {
      ++blocks_16x8;
      if (group >> 1 != last_pair) {
        ++blocks_16x16;
        last_pair = group >> 1;
      }
      const unsigned upper = packed & 0xFFu, lower = packed >> 8;
      if (upper) atomicAdd(&cta.histogram[upper], 1u);
      if (lower) atomicAdd(&cta.histogram[lower], 1u);
    }
  }
  if (segment > 0) sums.add(segment, nnz);
  if (sums.segments) atomicAdd(&cta.row_segments, sums.segments);
  if (products) atomicAdd(&cta.products, products);
  if (blocks_16x8) atomicAdd(&cta.blocks_16x8, blocks_16x8);
  if (blocks_16x16) atomicAdd(&cta.blocks_16x16, blocks_16x16);

  const double cta_self = BlockReduce(reduce_storage).Sum(sums.self.value());
  __syncthreads();  // reduce_storage is reused
  const double cta_rest = BlockReduce(reduce_storage).Sum(sums.rest.value());
  __syncthreads();  // every shared atomic above is done
  if (threadIdx.x == 0) {
    self_partials[blockIdx.x] = cta_self;
    rest_partials[blockIdx.x] = cta_rest;
  }
  flush(cta, out);
}

// The heavy block rows heavy[0 .. *heavy_count), their partials at the same index.
__global__ void __launch_bounds__(kHeavyThreads)
    analyze_heavy_block_rows(int64_t rows, int64_t nnz, const int64_t* __restrict__ row_ptr,
                             const int32_t* __restrict__ col, const int64_t* __restrict__ b_row_ptr, unsigned strip,
                             const int64_t* __restrict__ heavy, const int64_t* __restrict__ heavy_count,
                             Counters* __restrict__ out, double* __restrict__ self_partials,
                             double* __restrict__ rest_partials) {
  using BlockReduce = cubns::BlockReduce<double, kHeavyThreads>;
  __shared__ CtaCounters cta;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  __shared__ unsigned counts[kWindowGroups];  // entries per group of the window: rows 0-7 low, 8-15 high
  __shared__ int touched[kWindowGroups];      // groups of the window holding entries
  __shared__ int touched_count;
  __shared__ int64_t cursor[16], stop[16], end[16], offset[17];
  __shared__ unsigned window;
  clear(cta);
  for (int t = threadIdx.x; t < kWindowGroups; t += kHeavyThreads) counts[t] = 0;
  if (threadIdx.x == 0) touched_count = 0;
  __syncthreads();

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t count = *heavy_count;
  ull products = 0, blocks_16x8 = 0, blocks_16x16 = 0;
  ull segments = 0;
  for (int64_t h = blockIdx.x; h < count; h += gridDim.x) {
    const int64_t r0 = heavy[h] * 16;
    const int rows_here = int(min(int64_t(16), rows - r0));

    // 1. Strips and products: warp w walks row r0 + w, 32 entries at a time.
    SegmentSums sums;
    if (warp < rows_here) {
      const int64_t b = row_ptr[r0 + warp], e = row_ptr[r0 + warp + 1];
      int64_t open = 0;  // entries of the segment left open by the previous chunks
      for (int64_t k0 = b; k0 < e; k0 += 32) {
        const int64_t k = k0 + lane;
        const bool valid = k < e;
        const unsigned j = valid ? unsigned(col[k]) : 0u;
        const int64_t s = valid ? int64_t(j / strip) : -1;
        int64_t prev = __shfl_up_sync(kFullMask, s, 1);
        if (lane == 0) prev = k0 == b ? -1 : int64_t(unsigned(col[k0 - 1]) / strip);
        int64_t next = __shfl_down_sync(kFullMask, s, 1);  // -1 past the row's end: an end
        if (lane == 31) next = k + 1 < e ? int64_t(unsigned(col[k + 1]) / strip) : -1;
        const bool starts = valid && s != prev, ends = valid && s != next;
        const unsigned start_mask = __ballot_sync(kFullMask, starts);
        const unsigned end_mask = __ballot_sync(kFullMask, ends);
        if (ends) {
          const unsigned before = start_mask & (kFullMask >> (31 - lane));  // starts at lanes 0..lane
          const int64_t c = before ? lane - (31 - __clz(before)) + 1 : open + lane + 1;
          sums.add(c, nnz);
        }
        if (valid && b_row_ptr != nullptr) products += ull(b_row_ptr[j + 1] - b_row_ptr[j]);
        if (k0 + 32 <= e && !(end_mask >> 31))  // the chunk's last segment goes on
          open = start_mask ? 32 - (31 - __clz(start_mask)) : open + 32;
        else
          open = 0;
      }
    }
    segments += sums.segments;
    const double self = BlockReduce(reduce_storage).Sum(sums.self.value());
    __syncthreads();
    const double rest = BlockReduce(reduce_storage).Sum(sums.rest.value());
    if (threadIdx.x == 0) {
      self_partials[h] = self;
      rest_partials[h] = rest;
    }

    // 2. Blocks and tiles, window by window.
    if (threadIdx.x < 16) {
      const bool valid = threadIdx.x < rows_here;
      cursor[threadIdx.x] = valid ? row_ptr[r0 + threadIdx.x] : 0;
      end[threadIdx.x] = valid ? row_ptr[r0 + threadIdx.x + 1] : 0;
    }
    __syncthreads();
    for (;;) {
      if (warp == 0) {  // the window starts at the smallest group left, rounded down to even
        unsigned g = lane < 16 && cursor[lane] < end[lane] ? unsigned(col[cursor[lane]]) >> 3 : kDone;
        for (int offset_ = 16; offset_ > 0; offset_ >>= 1) g = min(g, __shfl_xor_sync(kFullMask, g, offset_));
        if (lane == 0) window = g == kDone ? kDone : g & ~1u;
      }
      __syncthreads();
      const unsigned first = window;
      if (first == kDone) break;
      if (threadIdx.x < 16) {  // the row's entries below the window's end
        const int64_t limit = (int64_t(first) + kWindowGroups) * 8;
        int64_t lo = cursor[threadIdx.x], hi = end[threadIdx.x];
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (col[mid] < limit) lo = mid + 1;
          else hi = mid;
        }
        stop[threadIdx.x] = lo;
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        offset[0] = 0;
        for (int q = 0; q < 16; ++q) offset[q + 1] = offset[q] + (stop[q] - cursor[q]);
      }
      __syncthreads();
      const int64_t total = offset[16];
      for (int64_t t = threadIdx.x; t < total; t += kHeavyThreads) {
        int q = 0;
        while (offset[q + 1] <= t) ++q;
        const unsigned g = (unsigned(col[cursor[q] + (t - offset[q])]) >> 3) - first;
        const unsigned old = atomicAdd(&counts[g], q < 8 ? 1u : 0x10000u);
        if (old == 0) touched[atomicAdd(&touched_count, 1)] = int(g);
      }
      __syncthreads();
      const int n = touched_count;
      for (int t = threadIdx.x; t < n; t += kHeavyThreads) {
        const int g = touched[t];  // relative to an even start: same parity as the group
        const unsigned v = counts[g];
        ++blocks_16x8;
        if ((g & 1) == 0 || counts[g - 1] == 0) ++blocks_16x16;  // the pair's first touched group counts it
        const unsigned upper = v & 0xFFFFu, lower = v >> 16;
        if (upper) atomicAdd(&cta.histogram[upper], 1u);
        if (lower) atomicAdd(&cta.histogram[lower], 1u);
      }
      __syncthreads();
      for (int t = threadIdx.x; t < n; t += kHeavyThreads) counts[touched[t]] = 0;
      if (threadIdx.x < 16) cursor[threadIdx.x] = stop[threadIdx.x];
      if (threadIdx.x == 0) touched_count = 0;
      __syncthreads();
    }
  }
  if (segments) atomicAdd(&cta.row_segments, segments);
  if (products) atomicAdd(&cta.products, products);
  if (blocks_16x8) atomicAdd(&cta.blocks_16x8, blocks_16x8);
  if (blocks_16x16) atomicAdd(&cta.blocks_16x16, blocks_16x16);
  __syncthreads();
  flush(cta, out);
}

}  // namespace

AnalysisSums gpu_analysis_sums(int64_t rows, int64_t cols, int64_t nnz, const int64_t* row_ptr,
                               const int32_t* col_idx, const int64_t* b_row_ptr, int64_t strip_width,
                               const GpuContext& context, int64_t heavy_entries) {
  require(rows >= 0 && cols >= 0 && nnz >= 0 && cols <= int64_t(INT32_MAX) + 1, SPARSETC_STATUS_INVALID_VALUE,
          "the device CSR is ", rows, "x", cols, " with ", nnz, " entries: not a valid 32-bit-index view");
  require(strip_width >= 0, SPARSETC_STATUS_INVALID_VALUE, "strip_width must be >= 0 (0 for the default ",
          kDefaultStripWidth, "), got ", strip_width);
  AnalysisSums s;
  s.rows = rows;
  s.cols = cols;
  s.nnz = nnz;
  s.strip_width = strip_width > 0 ? strip_width : kDefaultStripWidth;
  s.products = b_row_ptr != nullptr ? 0 : -1;
  if (rows == 0) return s;

  const int64_t ctas = (rows + kRowsPerCta - 1) / kRowsPerCta;
  require(ctas <= INT_MAX, SPARSETC_STATUS_NOT_SUPPORTED, "the device analysis takes at most ",
          int64_t(INT_MAX) * kRowsPerCta, " rows, not ", rows);
  const int64_t block_rows = (rows + 15) / 16;
  heavy_entries = std::max<int64_t>(heavy_entries, 0);
  // At most this many block rows hold more than heavy_entries entries.
  const int64_t heavy_capacity = std::min(block_rows, nnz / (heavy_entries + 1));
  const cudaStream_t stream = context.stream;
  const unsigned strip = unsigned(std::min(s.strip_width, std::max<int64_t>(cols, 1)));  // <= 2^31
  const IsHeavy is_heavy{row_ptr, rows, heavy_entries};

  Counters init{};
  init.min_length = ULLONG_MAX;
  DeviceBuffer counters(sizeof(Counters), context);
  copy_host_to_device(counters.data(), &init, sizeof init, stream);
  Counters* out = counters.as<Counters>();
  // Partials: [self: light CTAs, heavy block rows][rest: the same]; unused heavy slots stay 0.
  const int64_t slots = ctas + heavy_capacity;
  DeviceBuffer partials(size_t(2 * slots) * sizeof(double), context);
  double* self_partials = partials.as<double>();
  double* rest_partials = self_partials + slots;
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(self_partials, 0, size_t(2 * slots) * sizeof(double), stream));

  analyze_block_rows<<<unsigned(ctas), kThreads, 0, stream>>>(rows, nnz, row_ptr, col_idx, b_row_ptr, strip,
                                                              is_heavy, out, self_partials, rest_partials);
  SPARSETC_CUDA_CHECK_LAUNCH();

  if (heavy_capacity > 0) {
    DeviceBuffer heavy((size_t(heavy_capacity) + 1) * sizeof(int64_t), context);  // the list, then its length
    int64_t* list = heavy.as<int64_t>();
    int64_t* count = list + heavy_capacity;
    const thrustns::counting_iterator<int64_t> block_row_ids(0);
    size_t select_bytes = 0;
    SPARSETC_CUDA_CHECK(cubns::DeviceSelect::If(nullptr, select_bytes, block_row_ids, list, count, block_rows,
                                                is_heavy, stream));
    DeviceBuffer select_temp(std::max<size_t>(select_bytes, 1), context);
    SPARSETC_CUDA_CHECK(cubns::DeviceSelect::If(select_temp.data(), select_bytes, block_row_ids, list, count,
                                                block_rows, is_heavy, stream));
    const int sms = current_device_sm_count();
    const int64_t grid = std::min<int64_t>(heavy_capacity, int64_t(std::max(sms, 1)) * 2);
    analyze_heavy_block_rows<<<unsigned(grid), kHeavyThreads, 0, stream>>>(
        rows, nnz, row_ptr, col_idx, b_row_ptr, strip, list, count, out, self_partials + ctas,
        rest_partials + ctas);
    SPARSETC_CUDA_CHECK_LAUNCH();
  }

  size_t temp_bytes = 0;
  SPARSETC_CUDA_CHECK(cubns::DeviceReduce::Sum(nullptr, temp_bytes, self_partials, &out->entropy_self, slots, stream));
  DeviceBuffer temp(std::max<size_t>(temp_bytes, 1), context);  // a null pointer would mean "size query"
  SPARSETC_CUDA_CHECK(
      cubns::DeviceReduce::Sum(temp.data(), temp_bytes, self_partials, &out->entropy_self, slots, stream));
  SPARSETC_CUDA_CHECK(
      cubns::DeviceReduce::Sum(temp.data(), temp_bytes, rest_partials, &out->entropy_rest, slots, stream));

  Counters host{};
  copy_device_to_host(&host, out, sizeof host, stream);  // the one copy back (waits)
  s.empty_rows = int64_t(host.empty_rows);
  s.row_length_min = int64_t(host.min_length);
  s.row_length_max = int64_t(host.max_length);
  s.row_length_squares_lo = host.squares_lo;
  s.row_length_squares_hi = host.squares_hi;
  s.bandwidth = int64_t(host.bandwidth);
  if (b_row_ptr != nullptr) s.products = int64_t(host.products);
  s.blocks_16x8 = int64_t(host.blocks_16x8);
  s.blocks_16x16 = int64_t(host.blocks_16x16);
  for (int c = 0; c < 65; ++c) s.tile_histogram[c] = int64_t(host.histogram[c]);
  s.row_segments = int64_t(host.row_segments);
  s.entropy_self = host.entropy_self;
  s.entropy_rest = host.entropy_rest;
  return s;
}

template <typename V>
Analysis gpu_analyze(const DeviceCsrView<V>& A, const DeviceCsrView<V>* B, int64_t strip_width,
                     const GpuContext& context) {
  if (B != nullptr)
    require(A.cols == B->rows, SPARSETC_STATUS_DIMENSION_MISMATCH, "A is ", A.rows, "x", A.cols, " but B is ",
            B->rows, "x", B->cols, " (cols(A) must equal rows(B))");
  return analysis_from_sums(gpu_analysis_sums(A.rows, A.cols, A.nnz, A.row_ptr, A.col_idx,
                                              B != nullptr ? B->row_ptr : nullptr, strip_width, context));
}

template Analysis gpu_analyze<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>*, int64_t,
                                     const GpuContext&);
template Analysis gpu_analyze<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>*, int64_t,
                                      const GpuContext&);

}  // namespace sparsetc::detail

// The B-stationary kernel over a CSC matrix (the near-memory engine of the DCSR paper, §4.2, in
// software), instantiated once per precision in csc_tiled_spmm_<precision>.cu.
//
// CTA b works on column tile b / windows of C and on window b % windows: rows [r0, r1) of one strip
// of columns. It copies the strip's B tile into shared memory (as tiled_spmm), then converts the
// window to DCSR in shared memory the way Fig. 13 walks it: each column's frontier starts at its
// first row >= r0 (binary search in the column), and the columns' entries are counted per row,
// the counts scanned into row offsets and the non-empty rows listed (the DCSR's row_idx and
// row_ptr), and the entries scattered from the frontiers into their rows. The window's DCSR then
// goes through the same segment loop as the stored tiled DCSR (multiply_segments). Entries keep
// no order within a row (shared atomics), which only reorders the sum of a row's products: like
// tiled_spmm, the result is not bitwise deterministic.
#pragma once

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/cuda_core/tiled_kernel.cuh"

namespace sparsetc::detail::cudacore {

constexpr int kWindowRows = int(kCscWindowRows);
constexpr int kRowsPerThread = kWindowRows / kThreads;
static_assert(kWindowRows % kThreads == 0, "window rows are scanned in equal parts per thread");
constexpr int kMaxStripWidth = 512;  // tiled_strip_width's largest: two columns per thread
constexpr int kColumnsPerThread = kMaxStripWidth / kThreads;

template <typename Acc>
struct CscTiledParams {
  int strip_width = 0;
  const int64_t* col_ptr = nullptr;
  const int32_t* row_idx = nullptr;
  const void* values = nullptr;
  const CscWindow* window = nullptr;
  int64_t windows = 0, capacity = 0;
  int64_t k = 0;
  int lanes_n_log = 0, lanes_k_log = 0;
  DenseTileArgs<Acc> d;
};

// Shared memory after the B tile (tile_bytes, a multiple of 16).
struct WindowLayout {
  size_t tile_bytes, row_end_offset, row_list_offset, entry_col_offset, entry_value_offset, total;
};

template <typename Store>
__host__ __device__ inline WindowLayout window_layout(size_t tile_bytes, int64_t capacity) {
  WindowLayout l;
  l.tile_bytes = tile_bytes;
  l.row_end_offset = tile_bytes;                                                 // int32, kWindowRows
  l.row_list_offset = l.row_end_offset + kWindowRows * sizeof(int32_t);         // int16, kWindowRows
  l.entry_col_offset = l.row_list_offset + kWindowRows * sizeof(int16_t);       // int16, capacity
  l.entry_value_offset = (l.entry_col_offset + size_t(capacity) * sizeof(int16_t) + 15) / 16 * 16;  // Store
  l.total = l.entry_value_offset + size_t(capacity) * sizeof(Store);
  return l;
}

// First position in [lo, hi) of a row >= key in a column (hi when none).
__device__ __forceinline__ int64_t first_row_at_least(const int32_t* row_idx, int64_t lo, int64_t hi, int32_t key) {
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (__ldg(row_idx + mid) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The window's DCSR in shared memory: segment q is window row row_list[q], its entries end at
// row_end[row_list[q]] and start where the previous non-empty row's end (0 for q = 0).
struct WindowSegments {
  const int32_t* row_end;
  const int16_t* row_list;
  int64_t r0;
  __device__ __forceinline__ int64_t begin(int64_t q) const { return q == 0 ? 0 : row_end[row_list[q - 1]]; }
  __device__ __forceinline__ int64_t end(int64_t q) const { return row_end[row_list[q]]; }
  __device__ __forceinline__ int64_t row(int64_t q) const { return r0 + row_list[q]; }
};

template <typename Store>
struct WindowEntries {
  const int16_t* cols;
  const Store* values;
  __device__ __forceinline__ int col(int64_t e) const { return cols[e]; }
  __device__ __forceinline__ auto value(int64_t e) const { return to_acc(values[e]); }
};

template <CorePrecision P, bool kVecB>
__global__ void __launch_bounds__(kThreads) csc_tiled_spmm_kernel(const CscTiledParams<typename Precision<P>::Acc> p) {
  using Store = typename Precision<P>::Store;
  using Bits = typename BitsOf<sizeof(Store)>::type;
  constexpr int V = kVecOf<Store>;
  using Scan = CUB_NS_QUALIFIER::BlockScan<int, kThreads>;
  extern __shared__ uint4 smem_words[];
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ int nonempty_rows;

  const int64_t tile = int64_t(blockIdx.x) / p.windows;
  const CscWindow w = p.window[int64_t(blockIdx.x) % p.windows];
  const int ln_log = p.lanes_n_log;
  const int64_t k0 = int64_t(w.strip) * p.strip_width;
  const int k_here = int(min(int64_t(p.strip_width), p.k - k0));
  const int64_t col0 = tile * (V << ln_log);
  const WindowLayout layout =
      window_layout<Store>(size_t(p.strip_width) * size_t(V << ln_log) * sizeof(Store), p.capacity);
  char* smem = reinterpret_cast<char*>(smem_words);
  int32_t* row_end = reinterpret_cast<int32_t*>(smem + layout.row_end_offset);  // counts, then offsets
  int16_t* row_list = reinterpret_cast<int16_t*>(smem + layout.row_list_offset);
  int16_t* entry_col = reinterpret_cast<int16_t*>(smem + layout.entry_col_offset);
  Store* entry_value = reinterpret_cast<Store*>(smem + layout.entry_value_offset);

  load_b_tile<Bits, V, kVecB>(smem_words, p.d, p.strip_width, ln_log, k0, k_here, col0);
  for (int r = threadIdx.x; r < kWindowRows; r += kThreads) row_end[r] = 0;
  __syncthreads();

  // 1. Frontiers: this thread's columns, from their first row >= r0 to their first row >= r1.
  int64_t front[kColumnsPerThread], stop[kColumnsPerThread];
#pragma unroll
  for (int c = 0; c < kColumnsPerThread; ++c) {
    const int j = int(threadIdx.x) + c * kThreads;
    front[c] = stop[c] = 0;
    if (j < k_here) {
      const int64_t lo = __ldg(p.col_ptr + k0 + j), hi = __ldg(p.col_ptr + k0 + j + 1);
      front[c] = first_row_at_least(p.row_idx, lo, hi, w.row_begin);
      stop[c] = first_row_at_least(p.row_idx, front[c], hi, w.row_end);
      for (int64_t e = front[c]; e < stop[c]; ++e) atomicAdd(&row_end[__ldg(p.row_idx + e) - w.row_begin], 1);
    }
  }
  __syncthreads();

  // 2. Row offsets (exclusive scan of the counts) and the list of non-empty rows.
  int counts[kRowsPerThread], starts[kRowsPerThread], flags[kRowsPerThread], slots[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    counts[i] = row_end[threadIdx.x * kRowsPerThread + i];
    flags[i] = counts[i] > 0;
  }
  Scan(scan_storage).ExclusiveSum(counts, starts);
  __syncthreads();
  int listed = 0;
  Scan(scan_storage).ExclusiveSum(flags, slots, listed);
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int r = int(threadIdx.x) * kRowsPerThread + i;
    row_end[r] = starts[i];  // the scatter's cursor; the row's end once its entries are placed
    if (flags[i]) row_list[slots[i]] = int16_t(r);
  }
  if (threadIdx.x == 0) nonempty_rows = listed;
  __syncthreads();

  // 3. The entries from the frontiers into their rows.
  const Store* values = static_cast<const Store*>(p.values);
#pragma unroll
  for (int c = 0; c < kColumnsPerThread; ++c) {
    const int j = int(threadIdx.x) + c * kThreads;
    for (int64_t e = front[c]; e < stop[c]; ++e) {
      const int slot = atomicAdd(&row_end[__ldg(p.row_idx + e) - w.row_begin], 1);
      entry_col[slot] = int16_t(j);
      entry_value[slot] = values[e];
    }
  }
  __syncthreads();

  // 4. The window's DCSR times the B tile.
  multiply_segments<V, Store>(smem_words, ln_log, p.lanes_k_log, 0, nonempty_rows, col0, p.d,
                              WindowSegments{row_end, row_list, w.row_begin},
                              WindowEntries<Store>{entry_col, entry_value});
}

template <CorePrecision P>
void run_csc_tiled_spmm(const CoreCsc& a, const CscTiledSchedule& s, const CoreDenseArgs& args, cudaStream_t stream) {
  using Store = typename Precision<P>::Store;
  using Acc = typename Precision<P>::Acc;
  constexpr int V = kVecOf<Store>;
  if (a.rows == 0 || args.n == 0) return;
  scale_c<Acc>(args, a.rows, stream);
  if (s.windows == 0 || a.nnz == 0) return;
  const CoreColumnTiling& t = s.tiling;
  require(s.strip_width >= 1 && s.strip_width <= kMaxStripWidth, SPARSETC_STATUS_INVALID_VALUE,
          "CSC tiled SpMM: strip width ", s.strip_width, " outside [1, ", kMaxStripWidth, "]");
  CscTiledParams<Acc> p;
  p.strip_width = int(s.strip_width);
  p.col_ptr = a.col_ptr;
  p.row_idx = a.row_idx;
  p.values = a.values;
  p.window = s.window.as<const CscWindow>();
  p.windows = s.windows;
  p.capacity = csc_window_capacity(P);
  p.k = a.cols;
  p.lanes_n_log = t.lanes_n_log;
  p.lanes_k_log = s.lanes_k_log;
  p.d = dense_tile_args<Store, Acc>(args);
  const size_t tile_bytes = size_t(s.strip_width) * size_t(int64_t(V) << t.lanes_n_log) * sizeof(Store);
  const size_t smem = window_layout<Store>(tile_bytes, p.capacity).total;
  // Beyond the default 48 KB: opt in (sm_90 allows 227 KB per CTA).
  const auto kernel = p.d.b_vec ? csc_tiled_spmm_kernel<P, true> : csc_tiled_spmm_kernel<P, false>;
  SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int64_t ctas = s.windows * t.tiles;
  require(ctas <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "CSC tiled SpMM: ", ctas, " CTAs exceed one launch");
  kernel<<<unsigned(ctas), kThreads, smem, stream>>>(p);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace sparsetc::detail::cudacore

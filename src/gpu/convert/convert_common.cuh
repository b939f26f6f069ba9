// Shared pieces of the GPU conversions (.cu files only): launch sizing, CUB calls with their
// temporary storage, typed device buffers, read-backs, and the merge-path walk over CSR entries.
#pragma once

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <utility>

#include "core/error.hpp"
#include "gpu/convert/fast_divider.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"

namespace sparsetc::detail::gpuconv {

namespace cubns = CUB_NS_QUALIFIER;
namespace thrustns = THRUST_NS_QUALIFIER;

constexpr int kThreads = 256;                 // threads per CTA of every kernel here
constexpr int kWarps = kThreads / 32;         // warps per CTA
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int64_t kMaxInt32 = 2147483647;

// CTAs to cover `work` items at `per_cta` items per CTA.
inline unsigned ctas_for(int64_t work, int64_t per_cta) {
  const int64_t ctas = (work + per_cta - 1) / per_cta;
  require(ctas <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "GPU conversion: ", work, " items exceed one launch");
  return unsigned(ctas > 0 ? ctas : 1);
}

// A device buffer of n elements of T (no allocation for n == 0).
template <typename T>
DeviceBuffer buffer_of(int64_t n, const GpuContext& context) {
  return DeviceBuffer(size_t(n > 0 ? n : 0) * sizeof(T), context);
}

inline void check_cub(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, what, file, line);
}
#define SPARSETC_CUB_CHECK(call, what) ::sparsetc::detail::gpuconv::check_cub((call), what, __FILE__, __LINE__)

// Runs a CUB device algorithm twice: once for the temporary size, once for real. `call(temp,
// bytes)` returns the algorithm's cudaError_t.
template <typename Call>
void run_cub(const char* what, const GpuContext& context, Call&& call) {
  size_t bytes = 0;
  SPARSETC_CUB_CHECK(call(nullptr, bytes), what);
  DeviceBuffer temp(bytes > 0 ? bytes : 16, context);
  SPARSETC_CUB_CHECK(call(temp.data(), bytes), what);
}

// Lets `kernel` take `bytes` of dynamic shared memory (past 48 KB it must be asked for).
template <typename Kernel>
void allow_dynamic_shared(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

// in[i] for i < n, 0 at i = n: an exclusive scan of n + 1 of them ends with the total.
template <typename T>
struct PaddedValue {
  const T* in;
  int64_t n;
  __device__ int64_t operator()(int64_t i) const { return i < n ? int64_t(in[i]) : 0; }
};

// out[i] = sum of in[0..i) for i in [0, n], int64 accumulation; out has n + 1 elements. One scan
// of n + 1 values (the last one zero) also writes the total: no kernel after it.
template <typename T>
void exclusive_scan_total(const T* in, int64_t* out, int64_t n, const GpuContext& context) {
  const auto padded = thrustns::make_transform_iterator(thrustns::counting_iterator<int64_t>(0), PaddedValue<T>{in, n});
  run_cub("cub::DeviceScan::ExclusiveScan", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceScan::ExclusiveScan(temp, bytes, padded, out, ::cuda::std::plus<>{}, int64_t(0), n + 1,
                                            context.stream);
  });
}

// Reads one value back (a synchronisation point).
template <typename T>
T read_back(const T* device, cudaStream_t stream) {
  T host{};
  copy_device_to_host(&host, device, sizeof(T), stream);
  return host;
}

template <typename T>
void zero(T* device, int64_t n, cudaStream_t stream) {
  if (n > 0) SPARSETC_CUDA_CHECK(cudaMemsetAsync(device, 0, size_t(n) * sizeof(T), stream));
}

// The first x in [lo, hi] with row_end(x) > diagonal - x - 1: the rows consumed before `diagonal`
// on the merge path of (row ends, entry numbers), rows first on ties.
template <typename RowEnd>
__device__ __forceinline__ int64_t merge_path_rows(int64_t diagonal, int64_t lo, int64_t hi, int64_t first_entry,
                                                   RowEnd row_end) {
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (row_end(mid) <= first_entry + (diagonal - mid) - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The corners of the merge path of (row ends, entry numbers) cut every `path` steps: corner[t] =
// the rows consumed before diagonal t * path (t in [0, tiles]). One thread per corner, so the
// binary searches run side by side instead of each heading its tile's CTA.
template <typename Offset>
__global__ void __launch_bounds__(kThreads)
    merge_path_corners_kernel(const Offset* __restrict__ row_ptr, int64_t rows, int64_t nnz, int64_t path,
                              int64_t tiles, int64_t* __restrict__ corner) {
  const int64_t t = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (t > tiles) return;
  const int64_t d = t * path < rows + nnz ? t * path : rows + nnz;
  corner[t] = merge_path_rows(d, d > nnz ? d - nnz : 0, d < rows ? d : rows, 0,
                              [&](int64_t r) { return int64_t(__ldg(row_ptr + r + 1)); });
}

// The merge-path tiles of `path` steps over a CSR structure, with their corners (on the device).
struct MergePathTiles {
  int64_t tiles = 0;
  DeviceBuffer corner;  // int64, tiles + 1
};

inline MergePathTiles merge_path_tiles(const int64_t* row_ptr, int64_t rows, int64_t nnz, int64_t path,
                                       const GpuContext& context) {
  MergePathTiles m;
  m.tiles = (rows + nnz + path - 1) / path;
  m.corner = DeviceBuffer(size_t(m.tiles + 1) * sizeof(int64_t), context);
  merge_path_corners_kernel<int64_t><<<ctas_for(m.tiles + 1, kThreads), kThreads, 0, context.stream>>>(
      row_ptr, rows, nnz, path, m.tiles, m.corner.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  return m;
}

// One CTA's tile of kThreads * ITEMS steps of the merge path of (row ends, entries), with the rows
// of its entries: entry first_entry + e lies in row first_row + entry_row[e] (e < entries). The
// rows first_row + r for r < rows_done end in the tile, at row_end[r]. Each thread walks ITEMS
// steps over the row ends staged in shared memory. Ends with a CTA barrier.
struct EntryTile {
  int64_t first_entry, first_row;
  int entries, rows_done;
};

template <int ITEMS>
__device__ __forceinline__ EntryTile entry_tile(const int64_t* __restrict__ row_ptr, int64_t rows, int64_t nnz,
                                                const int64_t* __restrict__ corners, int64_t* row_end,
                                                int32_t* entry_row) {
  constexpr int kPath = kThreads * ITEMS;
  const int64_t total = rows + nnz;
  const int64_t d0 = int64_t(blockIdx.x) * kPath;
  const int64_t d1 = d0 + kPath < total ? d0 + kPath : total;
  const int64_t i0 = corners[blockIdx.x], i1 = corners[blockIdx.x + 1], j0 = d0 - i0, j1 = d1 - i1;
  const int64_t last_row = i1 < rows ? i1 : rows - 1;  // rows i0 .. last_row meet this tile
  const int row_count = int(last_row - i0 + 1);
  for (int r = threadIdx.x; r < row_count; r += kThreads) row_end[r] = __ldg(row_ptr + i0 + r + 1);
  __syncthreads();
  const int64_t local = int64_t(threadIdx.x) * ITEMS, steps = d1 - d0, entries = j1 - j0, consumed = i1 - i0;
  if (local < steps) {
    int64_t i = merge_path_rows(local, local > entries ? local - entries : 0, local < consumed ? local : consumed, j0,
                                [&](int64_t r) { return row_end[r]; });
    int64_t j = j0 + local - i;
    const int64_t end = local + ITEMS < steps ? local + ITEMS : steps;
    for (int64_t d = local; d < end; ++d) {
      if (i0 + i < rows && row_end[i] <= j) {
        ++i;
      } else {
        entry_row[j - j0] = int32_t(i);
        ++j;
      }
    }
  }
  __syncthreads();
  return {j0, i0, int(entries), int(consumed)};
}

// Visits every entry j of a CSR structure once with its row i: f(j, i). Each CTA takes kThreads *
// ITEMS steps of the merge path of (row ends, entries), so long rows, empty rows and skew cost the
// same per CTA: it reads its corners (merge_path_tiles), finds the rows of its entries
// (entry_tile), then calls f with consecutive threads on consecutive entries (coalesced accesses
// in f).
template <int ITEMS, typename F>
__global__ void __launch_bounds__(kThreads)
    entry_rows_kernel(const int64_t* __restrict__ row_ptr, int64_t rows, int64_t nnz,
                      const int64_t* __restrict__ corners, F f) {
  __shared__ int64_t row_end[kThreads * ITEMS + 1];
  __shared__ int32_t entry_row[kThreads * ITEMS];
  const EntryTile t = entry_tile<ITEMS>(row_ptr, rows, nnz, corners, row_end, entry_row);
  for (int e = threadIdx.x; e < t.entries; e += kThreads) f(t.first_entry + e, t.first_row + entry_row[e]);
}

template <typename F>
void for_each_entry_with_row(const int64_t* row_ptr, int64_t rows, int64_t nnz, const GpuContext& context, F f) {
  constexpr int kItems = 8;
  if (nnz == 0) return;
  const MergePathTiles tiles = merge_path_tiles(row_ptr, rows, nnz, int64_t(kThreads) * kItems, context);
  entry_rows_kernel<kItems><<<ctas_for(rows + nnz, int64_t(kThreads) * kItems), kThreads, 0, context.stream>>>(
      row_ptr, rows, nnz, tiles.corner.as<const int64_t>(), f);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

// Grid-stride loop over [0, n): f(i).
template <typename F>
__global__ void __launch_bounds__(kThreads) for_each_kernel(int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) f(i);
}

template <typename F>
void for_each_index(int64_t n, const GpuContext& context, F f) {
  if (n <= 0) return;
  const int64_t per_cta = int64_t(kThreads) * 4;
  const int64_t ctas = (n + per_cta - 1) / per_cta;
  for_each_kernel<<<unsigned(ctas < 65536 * 8 ? ctas : 65536 * 8), kThreads, 0, context.stream>>>(n, f);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

// The rows of row groups: fixed height (the last group partial), or the partition group_ptr
// (device, groups + 1 row boundaries) when height is 0.
struct GroupRows {
  int64_t rows;
  int height;
  const int64_t* group_ptr;
  __device__ __forceinline__ void range(int64_t g, int64_t& r0, int64_t& r1) const {
    if (height > 0) {
      r0 = g * height;
      r1 = r0 + height < rows ? r0 + height : rows;
    } else {
      r0 = group_ptr[g];
      r1 = group_ptr[g + 1];
    }
  }
};

// The first position in [lo, hi) of a sorted array whose value is >= key (hi when none).
template <typename T, typename K>
__device__ __forceinline__ int64_t lower_bound(const T* a, int64_t lo, int64_t hi, K key) {
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The last position p in [lo, hi) with a[p] <= key, for a[lo] <= key (group of a block, row of an entry).
template <typename T, typename K>
__device__ __forceinline__ int64_t last_not_above(const T* a, int64_t lo, int64_t hi, K key) {
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) >> 1;
    if (a[mid] <= key) lo = mid;
    else hi = mid;
  }
  return lo;
}

// Inclusive prefix sum of one value per lane over the calling warp (all lanes).
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const T x = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= offset) v += x;
  }
  return v;
}

// The largest power of two not above `most` (0 for none): where a warp-uniform search starts.
__device__ __forceinline__ int search_top(int most) { return most > 0 ? 1 << (31 - __clz(most)) : 0; }

// For lanes holding non-decreasing keys (lanes at and past `count` hold the largest), how many of the
// first `count` are below `key` (`key` is a lane's own; top = search_top(count - 1)).
template <typename T>
__device__ __forceinline__ int count_below(T mine, int count, int top, T key) {
  int at = 0;
#pragma unroll
  for (int step = 16; step >= 1; step >>= 1) {
    if (step > top) continue;
    const T v = __shfl_sync(kFullMask, mine, (at + step - 1) & 31);
    if (at + step <= count && v < key) at += step;
  }
  return at;
}

// Number of bits needed for values in [0, n) (0 for n <= 1).
inline int bits_for(uint64_t n) {
  int bits = 0;
  while (bits < 64 && (uint64_t(1) << bits) < n) ++bits;
  return bits;
}

// Positions p in [0, n) where pred(p) holds, increasing, into out (int64); returns their count
// (read back: a synchronisation point).
template <typename Pred>
int64_t select_positions(int64_t n, Pred pred, int64_t* out, const GpuContext& context) {
  if (n <= 0) return 0;
  DeviceBuffer count(sizeof(int64_t), context);
  run_cub("cub::DeviceSelect::If", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceSelect::If(temp, bytes, thrustns::counting_iterator<int64_t>(0), out, count.as<int64_t>(), n,
                                   pred, context.stream);
  });
  return read_back(count.as<int64_t>(), context.stream);
}

// Segmented gather: segment q of the output, positions [out_ptr[q], out_ptr[q + 1]), is the run
// of input entries starting at source_start(q) (column indices and values move together). The
// row permutation (segments: rows) and the tiled DCSR (segments: (strip, row) pieces of rows) are
// this copy.
//
// Each CTA takes an equal share of (segments + entries) on the merge path of (segment ends,
// entries), its corners found beforehand (merge_path_tiles), stages the end and source shift of
// its segments in shared memory (ends as 32-bit offsets into the tile: 14 bytes a step, so seven
// CTAs fit an SM), and copies its entries with consecutive threads on consecutive entries (reads
// and writes coalesced along the segments, balanced whatever the lengths), each thread's
// kGatherItems loads issued before its stores: a gather is latency bound unless many loads are
// in flight. on_segment(q) runs once for every segment, in the CTA whose tile holds its end.
// (Measured on an H200, row permutation: one load in flight per thread, 30-38% of the bandwidth
// floor; kGatherItems in flight, 47%; the same with each CTA searching its own corners, three
// rounds of 256 probes, instead of the corner kernel: 42%, the searches' latency heading every
// CTA.)
constexpr int kGatherItems = 8;
constexpr int64_t kGatherPath = int64_t(kThreads) * kGatherItems;  // merge-path steps per CTA
static_assert(kGatherPath < 65535, "a tile's segments are numbered in 16 bits");
// An entry past the last segment's end: only when the segments hold fewer than nnz entries, which
// a permutation that repeats a row can cause (its result is thrown away; nothing is read for it).
constexpr uint16_t kNoSegment = 0xFFFF;

template <typename V, typename SourceStart, typename OnSegment>
__global__ void __launch_bounds__(kThreads)
    gather_segments_kernel(const int64_t* __restrict__ out_ptr, int64_t segments, int64_t nnz,
                           const int64_t* __restrict__ corners, SourceStart source_start, OnSegment on_segment,
                           const int32_t* __restrict__ col_idx, const V* __restrict__ values,
                           int32_t* __restrict__ out_col, V* __restrict__ out_val) {
  __shared__ int32_t seg_end[kGatherPath + 1];  // relative to the tile's first entry, at most its entries
  __shared__ int64_t shift[kGatherPath + 1];    // entry j of segment q is input entry j + shift[q]
  __shared__ uint16_t entry_seg[kGatherPath];
  const int64_t total = segments + nnz;
  const int64_t d0 = int64_t(blockIdx.x) * kGatherPath;
  const int64_t d1 = d0 + kGatherPath < total ? d0 + kGatherPath : total;
  const int64_t i0 = corners[blockIdx.x], i1 = corners[blockIdx.x + 1], j0 = d0 - i0, j1 = d1 - i1;
  const int64_t last = i1 < segments ? i1 : segments - 1;  // segments i0 .. last meet this tile
  const int count = int(last - i0 + 1);
  for (int r = threadIdx.x; r < count; r += kThreads) {
    const int64_t q = i0 + r, start = __ldg(out_ptr + q), end = __ldg(out_ptr + q + 1);
    seg_end[r] = int32_t((end < j1 ? end : j1) - j0);
    shift[r] = source_start(q) - start;
    if (q < i1) on_segment(q);  // segments [i0, i1) end in this tile
  }
  __syncthreads();
  const int64_t local = int64_t(threadIdx.x) * kGatherItems, steps = d1 - d0, consumed = i1 - i0;
  const int entries = int(j1 - j0);
  if (local < steps) {
    int64_t i = merge_path_rows(local, local > entries ? local - entries : 0, local < consumed ? local : consumed, 0,
                                [&](int64_t r) { return int64_t(seg_end[r]); });
    int j = int(local - i);
    const int64_t end = local + kGatherItems < steps ? local + kGatherItems : steps;
    for (int64_t d = local; d < end; ++d) {
      if (i0 + i < segments && seg_end[i] <= j) {
        ++i;
      } else {
        entry_seg[j] = i0 + i < segments ? uint16_t(i) : kNoSegment;
        ++j;
      }
    }
  }
  __syncthreads();
  int32_t col[kGatherItems];
  V val[kGatherItems];
#pragma unroll
  for (int u = 0; u < kGatherItems; ++u) {
    const int e = u * kThreads + int(threadIdx.x);
    if (e < entries && entry_seg[e] != kNoSegment) {
      const int64_t src = j0 + e + shift[entry_seg[e]];
      col[u] = __ldg(col_idx + src);
      val[u] = __ldg(values + src);
    }
  }
#pragma unroll
  for (int u = 0; u < kGatherItems; ++u) {
    const int e = u * kThreads + int(threadIdx.x);
    if (e < entries && entry_seg[e] != kNoSegment) {
      out_col[j0 + e] = col[u];
      out_val[j0 + e] = val[u];
    }
  }
}

// The copy with its merge-path corners found beforehand: corners[t] = the segments consumed
// before diagonal t * kGatherPath (the last one at segments + nnz), t in [0, tiles].
template <typename V, typename SourceStart, typename OnSegment>
void gather_segments_at(const int64_t* corners, const int64_t* out_ptr, int64_t segments, int64_t nnz,
                        SourceStart source_start, OnSegment on_segment, const int32_t* col_idx, const V* values,
                        int32_t* out_col, V* out_val, const GpuContext& context) {
  if (segments <= 0) return;
  gather_segments_kernel<V><<<ctas_for(segments + nnz, kGatherPath), kThreads, 0, context.stream>>>(
      out_ptr, segments, nnz, corners, source_start, on_segment, col_idx, values, out_col, out_val);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename V, typename SourceStart, typename OnSegment>
void gather_segments(const int64_t* out_ptr, int64_t segments, int64_t nnz, SourceStart source_start,
                     OnSegment on_segment, const int32_t* col_idx, const V* values, int32_t* out_col, V* out_val,
                     const GpuContext& context) {
  if (segments <= 0) return;
  const MergePathTiles tiles = merge_path_tiles(out_ptr, segments, nnz, kGatherPath, context);
  gather_segments_at(tiles.corner.as<const int64_t>(), out_ptr, segments, nnz, source_start, on_segment, col_idx,
                     values, out_col, out_val, context);
}

struct NoSegmentVisit {
  __device__ void operator()(int64_t) const {}
};

}  // namespace sparsetc::detail::gpuconv

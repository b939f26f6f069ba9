// Tiled DCSR by strip windows: a counting sort of the (row, strip) segments by strip, without a
// global sort, for structures whose rows stay near the diagonal (bands, stencils).
//
// The rows are cut into tiles of kWindowRows rows, one CTA each. A tile fits when its segments
// lie in a window of at most kWindowStrips consecutive strips, it has at most kWindowSegments
// segments and kWindowEntries entries, and no row is too long to walk (row_segments.cuh). Then:
//  1. count_strip_windows_kernel: each row counts its segments (row_segments, which the other ways
//     take if some tile does not fit) and each tile its segments and entries per strip of its
//     window (segments in the high 32 bits, entries in the low 32 of a cell); the verdict (every
//     segment, the long rows, the tiles that do not fit) comes back in one read;
//  2. an exclusive scan over the strips x tiles table of those cells (strip-major, zero outside
//     the windows, read through an iterator) gives every (strip, tile) its first segment and
//     first entry in the output (it runs before the read back, which then waits on both);
//  3. place_strip_windows_kernel: each tile lists its segments in CSR order in shared memory,
//     sorts them stably by strip (cub::BlockRadixSort on 5 bits; not where its window is one
//     strip), writes each segment's row_ptr and row_idx, and copies the entries, G lanes a segment
//     and four segments in flight. The table's scan at tile 0 of each strip is strip_ptr.
// The table serves where strips x tiles <= kMaxWindowTable and nnz < 2^31 (the packing).
// (Measured on an H200, double values, 12-14M entries, same runs: poisson3d27:80 in strips of
// 65536 0.171-0.183 ms against 0.242-0.250 by the segment sort, the band 0.171-0.177 against
// 0.243-0.248, the 7-point stencil 0.22-0.24 against 0.49-0.50 by the entry sort. Under ncu the
// copy waits on its loads, 14 of 21.6 cycles an instruction, at 59% of DRAM bandwidth. Tried and
// dropped: a bulk L2 prefetch of each tile's entries, 124 -> 138 us of kernel; tiles of 128 rows,
// within 3%; warp reductions and one atomic per group of lanes in the count, no change.)
#pragma once

#include <cub/cub.cuh>

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/row_segments.cuh"

namespace sparsetc::detail::gpuconv {

constexpr int kWindowThreads = kThreads;              // threads of the two kernels
constexpr int kWindowRows = kWindowThreads;           // rows a tile, a thread each
constexpr int kWindowStrips = 31;                     // 5-bit keys; key 31 pads the sort
constexpr int kWindowItems = 4;                       // segments a thread sorts
constexpr int kWindowSegments = kWindowItems * kWindowThreads;
constexpr int64_t kWindowEntries = int64_t(1) << 18;  // a tile's entries (a segment is copied by one group)
constexpr int64_t kMaxWindowTable = int64_t(1) << 22;
constexpr int64_t kMaxWindowEntries = kMaxInt32;      // below: the packed low half never carries

// The count's verdict (one read back).
struct StripWindowTotals {
  int64_t segments;     // every row's segments (an upper bound for long rows)
  int64_t long_rows;    // rows too long to walk that span strips
  int64_t unfit_tiles;  // tiles that do not fit
};

__global__ void __launch_bounds__(kWindowThreads)
    count_strip_windows_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx, int64_t rows,
                               FastDivider width, int64_t* __restrict__ row_segments,
                               uint64_t* __restrict__ window_cells, uint32_t* __restrict__ window_base,
                               unsigned long long* __restrict__ verdict) {
  using MinMax = cubns::BlockReduce<uint32_t, kWindowThreads>;
  using Sum = cubns::BlockReduce<int64_t, kWindowThreads>;
  __shared__ union {
    typename MinMax::TempStorage min_max;
    typename Sum::TempStorage sum;
  } temp;
  __shared__ uint32_t seg_count[kWindowStrips], ent_count[kWindowStrips];
  __shared__ uint32_t lowest, highest;
  __shared__ int any_long, fits;
  const int tid = threadIdx.x;
  const int64_t tile = blockIdx.x, r0 = tile * kWindowRows, r = r0 + tid;
  uint32_t first = 0xFFFFFFFFu, last = 0;
  if (r < rows) {
    const int64_t a = __ldg(row_ptr + r), b = __ldg(row_ptr + r + 1);
    if (a < b) {
      first = width.divide(uint32_t(__ldg(col_idx + a)));
      last = width.divide(uint32_t(__ldg(col_idx + b - 1)));
    }
  }
  if (tid < kWindowStrips) seg_count[tid] = ent_count[tid] = 0;
  if (tid == 0) any_long = 0;
  const uint32_t lo = MinMax(temp.min_max).Reduce(first, ::cuda::minimum<>{});
  __syncthreads();
  const uint32_t hi = MinMax(temp.min_max).Reduce(last, ::cuda::maximum<>{});
  if (tid == 0) {
    lowest = lo;
    highest = hi;
  }
  __syncthreads();
  const bool empty = lowest == 0xFFFFFFFFu;
  const uint32_t s0 = empty ? 0 : lowest;
  const bool narrow = empty || highest - lowest < uint32_t(kWindowStrips);
  int64_t n = 0;
  if (r < rows) {
    bool long_row = false;
    n = for_each_row_segment(row_ptr, col_idx, r, width, &long_row,
                             [&](int64_t, int64_t, int64_t length, uint32_t strip) {
                               if (narrow) {
                                 atomicAdd(&seg_count[strip - s0], 1u);
                                 atomicAdd(&ent_count[strip - s0], uint32_t(length));
                               }
                             });
    row_segments[r] = n;
    if (long_row) {
      atomicAdd(verdict + 1, 1ull);
      any_long = 1;
    }
  }
  const int64_t segments = Sum(temp.sum).Sum(n);  // valid in thread 0
  __syncthreads();
  if (tid == 0) {
    const int64_t r_end = r0 + kWindowRows < rows ? r0 + kWindowRows : rows;
    const int64_t entries = __ldg(row_ptr + r_end) - __ldg(row_ptr + r0);
    fits = narrow && !any_long && segments <= kWindowSegments && entries <= kWindowEntries;
    atomicAdd(verdict, (unsigned long long)segments);
    if (!fits) atomicAdd(verdict + 2, 1ull);
    window_base[tile] = s0;
  }
  __syncthreads();
  if (tid < kWindowStrips)  // (zero where the tile does not fit: the table is scanned all the same)
    window_cells[tile * kWindowStrips + tid] = fits ? uint64_t(seg_count[tid]) << 32 | ent_count[tid] : 0;
}

// Cell i of the strips x tiles table (strip-major), from the tiles' windows; 0 from i = cells on.
struct WindowCell {
  const uint64_t* window_cells;
  const uint32_t* window_base;
  FastDivider tiles;  // (cells < 2^31)
  int64_t cells;
  __device__ int64_t operator()(int64_t i) const {
    if (i >= cells) return 0;
    const uint32_t strip = tiles.divide(uint32_t(i)), tile = tiles.remainder(uint32_t(i), strip);
    const int64_t w = int64_t(strip) - int64_t(__ldg(window_base + tile));
    return w >= 0 && w < kWindowStrips ? int64_t(__ldg(window_cells + int64_t(tile) * kWindowStrips + w)) : 0;
  }
};

// G lanes copy a segment; each group holds four segments at a time. The copy's loops stay rolled:
// unrolled, ptxas gave the double kernel 120 registers (two CTAs an SM); rolled, 64 (four).
template <typename V, int G>
__global__ void __launch_bounds__(kWindowThreads)
    place_strip_windows_kernel(const int64_t* __restrict__ row_ptr, const int32_t* __restrict__ col_idx,
                               const V* __restrict__ values, int64_t rows, FastDivider width, int64_t strips,
                               int64_t tiles, const int64_t* __restrict__ row_segments,
                               const uint32_t* __restrict__ window_base, const uint64_t* __restrict__ scanned,
                               int64_t segments, int64_t nnz, int64_t* __restrict__ strip_ptr,
                               int64_t* __restrict__ out_row_ptr, int32_t* __restrict__ out_row_idx,
                               int32_t* __restrict__ out_col, V* __restrict__ out_val) {
  static_assert(kWindowThreads % G == 0 && G <= 32, "a group is a part of a warp");
  using RowScan = cubns::BlockScan<int, kWindowThreads>;
  using Sort = cubns::BlockRadixSort<uint32_t, kWindowThreads, kWindowItems, int, 5>;
  __shared__ union {
    typename RowScan::TempStorage row_scan;
    typename Sort::TempStorage sort;
  } temp;
  // The tile's segments in CSR order, then (first, length, key) in sorted order.
  __shared__ int32_t seg_first[kWindowSegments], seg_length[kWindowSegments], seg_row[kWindowSegments];
  __shared__ uint8_t seg_key[kWindowSegments];
  __shared__ int64_t seg_dest[kWindowSegments];
  __shared__ int64_t base_segment[kWindowStrips], base_entry[kWindowStrips];
  __shared__ int key_start[kWindowStrips], key_entry_start[kWindowStrips];

  const int tid = threadIdx.x;
  const int64_t tile = blockIdx.x, r0 = tile * kWindowRows, r = r0 + tid;
  const uint32_t s0 = __ldg(window_base + tile);
  const int64_t e0 = __ldg(row_ptr + r0);
  if (tid < kWindowStrips && int64_t(s0) + tid < strips) {
    const uint64_t cell = __ldg(scanned + (int64_t(s0) + tid) * tiles + tile);
    base_segment[tid] = int64_t(cell >> 32);
    base_entry[tid] = int64_t(cell & 0xFFFFFFFFu);
  }
  for (int64_t s = tile * kWindowThreads + tid; s <= strips; s += int64_t(gridDim.x) * kWindowThreads)
    strip_ptr[s] = int64_t(__ldg(scanned + s * tiles) >> 32);
  if (tile == 0 && tid == 0) out_row_ptr[segments] = nnz;

  // 1. The segments in CSR order.
  const int n = r < rows ? int(__ldg(row_segments + r)) : 0;
  int position = 0, listed = 0;
  RowScan(temp.row_scan).ExclusiveSum(n, position, listed);
  bool beyond_first = false;  // a segment past the window's first strip
  if (n > 0) {
    bool long_row = false;  // (none: every tile fits)
    for_each_row_segment(row_ptr, col_idx, r, width, &long_row, [&](int64_t k, int64_t j, int64_t length, uint32_t s) {
      const int q = position + int(k);
      seg_first[q] = int32_t(j - e0);
      seg_length[q] = int32_t(length);
      seg_row[q] = int32_t(r);
      seg_key[q] = uint8_t(s - s0);
      beyond_first |= s != s0;
    });
  }
  const bool one_strip = !__syncthreads_or(beyond_first);  // then CSR order is sorted order

  // 2. Stable sort by strip; p = tid * kWindowItems + i in sorted order.
  uint32_t key[kWindowItems];
  int item[kWindowItems];
#pragma unroll
  for (int i = 0; i < kWindowItems; ++i) {
    const int q = tid * kWindowItems + i;
    key[i] = q < listed ? seg_key[q] : uint32_t(kWindowStrips);
    item[i] = q;
  }
  if (!one_strip) Sort(temp.sort).Sort(key, item, 0, 5);
  int first[kWindowItems], length[kWindowItems], row[kWindowItems];
#pragma unroll
  for (int i = 0; i < kWindowItems; ++i) {
    const bool real = tid * kWindowItems + i < listed;
    first[i] = real ? seg_first[item[i]] : 0;
    length[i] = real ? seg_length[item[i]] : 0;
    row[i] = real ? seg_row[item[i]] : 0;
  }
  __syncthreads();  // every listed segment read; the sort's storage free
  int before[kWindowItems];  // entries of the tile's sorted segments before this one
  RowScan(temp.row_scan).ExclusiveSum(length, before);
#pragma unroll
  for (int i = 0; i < kWindowItems; ++i) {
    const int p = tid * kWindowItems + i;
    if (p < listed) {
      seg_first[p] = first[i];
      seg_length[p] = length[i];
      seg_key[p] = uint8_t(key[i]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kWindowItems; ++i) {
    const int p = tid * kWindowItems + i;
    if (p < listed && (p == 0 || seg_key[p - 1] != key[i])) {
      key_start[key[i]] = p;
      key_entry_start[key[i]] = before[i];
    }
  }
  __syncthreads();

  // 3. Each segment's place: row_ptr and row_idx.
#pragma unroll
  for (int i = 0; i < kWindowItems; ++i) {
    const int p = tid * kWindowItems + i;
    if (p < listed) {
      const int k = int(key[i]);
      const int64_t q = base_segment[k] + (p - key_start[k]);
      const int64_t dest = base_entry[k] + (before[i] - key_entry_start[k]);
      out_row_ptr[q] = dest;
      out_row_idx[q] = row[i];
      seg_dest[p] = dest;
    }
  }
  __syncthreads();

  // 4. The entries: kInFlight consecutive sorted segments a group at a time. (Eight, their bounds
  // read from shared memory where used, fit 57 registers but were no faster on the stencils and
  // the band, and 1.15x slower with four lanes a segment.)
  constexpr int kGroups = kWindowThreads / G, kInFlight = 4;
  const int group = tid / G, lane = tid % G;
  const int32_t* __restrict__ tile_col = col_idx + e0;
  const V* __restrict__ tile_val = values + e0;
#pragma unroll 1
  for (int p0 = group * kInFlight; p0 < listed; p0 += kGroups * kInFlight) {
    int src[kInFlight], len[kInFlight], most = 0;
    int64_t dst[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int p = p0 + u;
      len[u] = p < listed ? seg_length[p] : 0;
      src[u] = p < listed ? seg_first[p] : 0;
      dst[u] = p < listed ? seg_dest[p] : 0;
      most = len[u] > most ? len[u] : most;
    }
#pragma unroll 1
    for (int e = lane; e < most; e += G) {
      int32_t c[kInFlight];
      V v[kInFlight];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
        if (e < len[u]) {
          c[u] = __ldg(tile_col + src[u] + e);
          v[u] = __ldg(tile_val + src[u] + e);
        }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
        if (e < len[u]) {
          out_col[dst[u] + e] = c[u];
          out_val[dst[u] + e] = v[u];
        }
    }
  }
}

// Steps 1-2 on the stream, no read back: the count, then the scan of the table. Its buffers: each
// row's segments (for the other ways too), and one allocation for the verdict, the cells and bases
// of the windows.
struct StripWindowCount {
  int64_t strips = 0, tiles = 0;
  DeviceBuffer row_segments;  // int64, rows
  DeviceBuffer windows;       // StripWindowTotals, tiles x kWindowStrips cells, tiles bases
  DeviceBuffer scanned;       // uint64, strips x tiles + 1

  const StripWindowTotals* verdict() const { return windows.as<const StripWindowTotals>(); }
  uint64_t* cells() const { return reinterpret_cast<uint64_t*>(windows.as<StripWindowTotals>() + 1); }
  uint32_t* bases() const { return reinterpret_cast<uint32_t*>(cells() + tiles * kWindowStrips); }
};

inline StripWindowCount count_strip_windows(const int64_t* row_ptr, const int32_t* col_idx, int64_t rows,
                                            FastDivider width, int64_t strips, const GpuContext& context) {
  StripWindowCount c;
  c.strips = strips;
  c.tiles = (rows + kWindowRows - 1) / kWindowRows;
  c.row_segments = buffer_of<int64_t>(rows, context);
  c.windows = DeviceBuffer(sizeof(StripWindowTotals) + size_t(c.tiles) * (kWindowStrips * 8 + 4), context);
  zero(c.windows.as<StripWindowTotals>(), 1, context.stream);
  count_strip_windows_kernel<<<ctas_for(rows, kWindowRows), kWindowThreads, 0, context.stream>>>(
      row_ptr, col_idx, rows, width, c.row_segments.as<int64_t>(), c.cells(), c.bases(),
      reinterpret_cast<unsigned long long*>(c.windows.data()));
  SPARSETC_CUDA_CHECK_LAUNCH();
  const int64_t cells = strips * c.tiles;
  c.scanned = buffer_of<uint64_t>(cells + 1, context);
  const auto cell = thrustns::make_transform_iterator(
      thrustns::counting_iterator<int64_t>(0), WindowCell{c.cells(), c.bases(), FastDivider(uint32_t(c.tiles)), cells});
  run_cub("cub::DeviceScan::ExclusiveScan", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceScan::ExclusiveScan(temp, bytes, cell, c.scanned.as<int64_t>(), ::cuda::std::plus<>{},
                                            int64_t(0), cells + 1, context.stream);
  });
  return c;
}

// Step 3, where every tile fits (the verdict read back). G from the mean segment.
template <typename V>
void place_strip_windows(const int64_t* row_ptr, const int32_t* col_idx, const V* values, int64_t rows, int64_t nnz,
                         FastDivider width, const StripWindowCount& count, int64_t segments, int64_t* strip_ptr,
                         int64_t* out_row_ptr, int32_t* out_row_idx, int32_t* out_col, V* out_val,
                         const GpuContext& context) {
  const auto launch = [&](auto kernel) {
    kernel<<<unsigned(count.tiles), kWindowThreads, 0, context.stream>>>(
        row_ptr, col_idx, values, rows, width, count.strips, count.tiles, count.row_segments.as<const int64_t>(),
        count.bases(), count.scanned.as<const uint64_t>(), segments, nnz, strip_ptr, out_row_ptr, out_row_idx,
        out_col, out_val);
    SPARSETC_CUDA_CHECK_LAUNCH();
  };
  if (nnz <= 4 * segments) launch(place_strip_windows_kernel<V, 4>);
  else if (nnz <= 8 * segments) launch(place_strip_windows_kernel<V, 8>);
  else if (nnz <= 16 * segments) launch(place_strip_windows_kernel<V, 16>);
  else launch(place_strip_windows_kernel<V, 32>);
}

}  // namespace sparsetc::detail::gpuconv

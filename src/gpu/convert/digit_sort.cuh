// Stable sort of the entries of a compressed structure by a key of their inner index (.cu files
// only): the engine of the transpose (key = column) and of the tiled DCSR (key = strip).
//
// An LSD radix sort with wide digits (up to 11 bits: one pass up to 2048 keys, two up to 4M),
// shaped for the conversions instead of a general sort:
//  - the first pass reads the CSR arrays themselves (each tile finds its entries' rows from the
//    offsets), and the last pass writes the conversion's own arrays: no key or carry arrays are
//    built before, no gather after; values move as raw bits;
//  - each pass is a count kernel (the digit histogram of each tile of 4096 entries), a scan of the
//    (digit, tile) counts, and a scatter kernel, one CTA per tile: the tile is ranked by digit in
//    CSR order (per-warp counters, peers found by ballots over the digit bits), staged in shared
//    memory in digit order, and each digit's run is written contiguously;
//  - tiles run in order, so the runs that concurrent tiles write for one digit abut: the L2
//    completes their sectors before they reach memory. (Measured on an H200: with one long chunk
//    of tiles per CTA instead, 1024-digit passes wrote each sector piecemeal and moved 2.5x the
//    bytes, the partial writes costing read-modify-write cycles.)
//  - stable at every step (equal keys keep CSR order: rows sorted within a column), so the
//    result is deterministic and needs no atomics on positions.
// Bytes per entry and pass: the key read twice (count, scatter), the entry read once and written
// once (key + row + value; the first pass reads key + value and the offsets), plus the counts
// (4 + 8 + 8 bytes per digit and tile).
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"

namespace sparsetc::detail::gpuconv {

constexpr int kSortItems = 16;                      // entries per thread and tile
constexpr int kSortTile = kThreads * kSortItems;    // entries per tile (a multiple of 16)
constexpr int kWarpSpan = 32 * kSortItems;          // consecutive entries ranked by one warp
constexpr int kMaxDigitBits = 11;
constexpr uint32_t kNoDigit = 0xFFFFFFFFu;

// The values as raw words of their size (exact moves, NaN payloads included).
template <int Bytes> struct WordOf;
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = unsigned long long; };
template <typename V>
using word_t = typename WordOf<int(sizeof(V))>::type;

// First pass: the caller's compressed arrays (offsets O, int32 indices, both with `base`).
template <typename O, typename W>
struct CsrSource {
  static constexpr bool kFromCsr = true;
  const O* ptr;
  const int32_t* idx;
  const W* val;
  int64_t outer, base;
  __device__ uint32_t col(int64_t j) const { return uint32_t(int64_t(__ldg(idx + j)) - base); }
  __device__ W value(int64_t j) const { return __ldg(val + j); }
  __device__ int64_t offset(int64_t r) const { return int64_t(__ldg(ptr + r)) - base; }
};

// Later passes: the entries of the previous pass (column, row, value word).
template <typename W>
struct ArraySource {
  static constexpr bool kFromCsr = false;
  const uint32_t* cols;
  const uint32_t* rows;
  const W* vals;
  __device__ uint32_t col(int64_t j) const { return __ldg(cols + j); }
  __device__ W value(int64_t j) const { return __ldg(vals + j); }
  __device__ uint32_t row(int64_t j) const { return __ldg(rows + j); }
};

// Where a pass writes entry g of the sorted order: col[g] (when given), row[g] + row_base, val[g];
// col_counts (when given) counts the entries of each column.
template <typename W>
struct SortSink {
  uint32_t* col = nullptr;
  uint32_t* row = nullptr;
  W* val = nullptr;
  uint32_t row_base = 0;
  uint32_t* col_counts = nullptr;
};

// digit = ((column / divisor) >> shift) & mask. A divisor other than 1 (the tiled DCSR's strip
// width) divides by a multiply-high (fast_divider.hpp): the digit is taken three times per entry
// and pass, and an integer division is ~20 instructions. (The test for 1 keeps the transposes'
// code as it was: without it ptxas spilled more of their 64-bit-value scatter kernels.)
struct DigitOf {
  FastDivider divisor;
  int shift;
  uint32_t mask;
  __device__ uint32_t operator()(uint32_t col) const {
    return ((divisor.divisor == 1 ? col : divisor.divide(col)) >> shift) & mask;
  }
};

// Adds, for each run of equal `key` among the valid lanes (a prefix of the warp), the run's length
// to counters[key] (one atomic per run).
__device__ __forceinline__ void add_runs(uint32_t* counters, uint32_t key, bool valid) {
  const int lane = threadIdx.x & 31;
  const uint32_t before = __shfl_up_sync(kFullMask, key, 1);
  const bool start = valid && (lane == 0 || before != key);
  const uint32_t starts = __ballot_sync(kFullMask, start), valid_lanes = __ballot_sync(kFullMask, valid);
  if (start) {
    const uint32_t later = starts & ~((2u << lane) - 1u);
    const int next = later ? __ffs(later) - 1 : 32 - __clz(valid_lanes);
    atomicAdd(counters + key, uint32_t(next - lane));
  }
}

// The lanes holding the same digit (of `bits` bits) among the valid ones.
__device__ __forceinline__ uint32_t digit_peers(uint32_t digit, bool valid, int bits) {
  const uint32_t valid_lanes = __ballot_sync(kFullMask, valid);
  uint32_t peers = valid ? valid_lanes : ~valid_lanes;
#pragma unroll
  for (int b = 0; b < kMaxDigitBits; ++b) {
    if (b < bits) {
      const bool one = (digit >> b) & 1u;
      const uint32_t ones = __ballot_sync(kFullMask, one);
      peers &= one ? ones : ~ones;
    }
  }
  return peers;
}

// CTA-wide search (every thread calls it): the last r in [lo, hi) with offset(r) <= j, given
// offset(lo) <= j. Each round probes kThreads evenly spaced rows at once: three rounds of loads
// for a million rows, where a binary search would chain twenty.
template <typename Offset>
__device__ __forceinline__ int64_t cta_last_not_above(int64_t j, int64_t lo, int64_t hi, Offset offset) {
  while (hi - lo > 1) {
    const int64_t step = (hi - lo + kThreads - 1) / kThreads;
    const int64_t probe = lo + int64_t(threadIdx.x) * step;
    const int ok = __syncthreads_count(probe < hi && offset(probe) <= j);  // a prefix of the probes
    const int64_t next_hi = lo + int64_t(ok) * step;
    lo += int64_t(ok - 1) * step;
    hi = next_hi < hi ? next_hi : hi;
  }
  return lo;
}

// One CTA per tile: the tile's digit histogram into counts[d * tiles + tile]; from the CSR, also
// the tile's first row.
template <typename Src>
__global__ void __launch_bounds__(kThreads)
    digit_count_kernel(Src src, int64_t nnz, int64_t tiles, DigitOf digit_of, int digits,
                       uint32_t* __restrict__ counts, int64_t* __restrict__ tile_first_row) {
  extern __shared__ uint32_t histogram[];
  const int64_t tile = blockIdx.x, t0 = tile * kSortTile;
  const int n = int(nnz - t0 < kSortTile ? nnz - t0 : int64_t(kSortTile));
  uint32_t col[kSortItems];
#pragma unroll
  for (int u = 0; u < kSortItems; ++u) {
    const int e = u * kThreads + int(threadIdx.x);
    col[u] = e < n ? src.col(t0 + e) : 0;
  }
  for (int d = threadIdx.x; d < digits; d += kThreads) histogram[d] = 0;
  if constexpr (Src::kFromCsr) {
    const int64_t first = cta_last_not_above(t0, 0, src.outer, [&](int64_t r) { return src.offset(r); });
    if (threadIdx.x == 0) tile_first_row[tile] = first;
  }
  __syncthreads();
#pragma unroll
  for (int u = 0; u < kSortItems; ++u) {
    const int e = u * kThreads + int(threadIdx.x);
    add_runs(histogram, digit_of(col[u]), e < n);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < digits; d += kThreads) counts[int64_t(d) * tiles + tile] = histogram[d];
}

inline size_t scatter_shared_bytes(int digits) {
  return size_t(digits) * 8                      // base
         + size_t(kSortTile) * 8                 // slot_buf (rows, then values; entry rows first)
         + size_t(kSortTile) * 4                 // slot_col
         + size_t(digits + 2) * 4                // digit_start
         + size_t(kWarps) * size_t(digits) * 2   // warp_count
         + size_t(kSortTile) * 2;                // slot_digit
}

// One CTA per tile, in tile order: stable ranking by digit, staging in digit order, coalesced
// writes at offsets[d * tiles + tile] onwards.
template <typename Src, typename W>
__global__ void __launch_bounds__(kThreads, 2)
    digit_scatter_kernel(Src src, int64_t nnz, int64_t tiles, DigitOf digit_of, int bits,
                         const int64_t* __restrict__ offsets, const int64_t* __restrict__ tile_first_row,
                         SortSink<W> sink) {
  using Scan = cubns::BlockScan<uint32_t, kThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  extern __shared__ uint4 shared_words[];
  const int digits = 1 << bits;
  int64_t* base = reinterpret_cast<int64_t*>(shared_words);
  uint64_t* slot_buf = reinterpret_cast<uint64_t*>(base + digits);
  uint32_t* slot_col = reinterpret_cast<uint32_t*>(slot_buf + kSortTile);
  uint32_t* digit_start = slot_col + kSortTile;
  uint16_t* warp_count = reinterpret_cast<uint16_t*>(digit_start + digits + 2);
  uint16_t* slot_digit = warp_count + kWarps * digits;
  uint32_t* slot_row = reinterpret_cast<uint32_t*>(slot_buf);
  W* slot_val = reinterpret_cast<W*>(slot_buf);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t tile = blockIdx.x, t0 = tile * kSortTile;
  const int n = int(nnz - t0 < kSortTile ? nnz - t0 : int64_t(kSortTile));
  for (int d = tid; d < digits; d += kThreads) base[d] = offsets[int64_t(d) * tiles + tile];
  // Thread t sums the contiguous digits [t * per_thread, + per_thread) in the tile's scan.
  const int per_thread = digits > kThreads ? digits / kThreads : 1;
  const int first_digit = tid * per_thread;
  for (int d = lane; d < digits; d += 32) warp_count[warp * digits + d] = 0;  // the warp's own counters
  __syncwarp();
  // The warp's 512 consecutive entries, 32 at a time (loads issued before the row search).
  const int w0 = warp * kWarpSpan;
  uint32_t col[kSortItems], row[kSortItems], packed[kSortItems];
  W val[kSortItems];
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    const int e = w0 + i * 32 + lane;
    col[i] = 0;
    row[i] = 0;
    val[i] = W(0);
    if (e < n) {
      col[i] = src.col(t0 + e);
      val[i] = src.value(t0 + e);
      if constexpr (!Src::kFromCsr) row[i] = src.row(t0 + e);
    }
  }
  if constexpr (Src::kFromCsr) {
    // The rows of the tile's entries, into slot_row (entry order): the tile's offsets staged in
    // shared memory (slot_col's space) when its rows are few, a binary search, then a walk.
    const int64_t lo = tile_first_row[tile];
    const int64_t hi = tile + 1 < tiles ? tile_first_row[tile + 1] : src.outer - 1;  // the last row, or above
    int64_t* staged = reinterpret_cast<int64_t*>(slot_col);
    constexpr int kStaged = kSortTile / 2;
    const bool in_shared = hi - lo + 2 <= kStaged;
    if (in_shared)
      for (int k = tid; k <= int(hi - lo) + 1; k += kThreads) staged[k] = src.offset(lo + k);
    __syncthreads();
    auto offset = [&](int64_t r) { return in_shared ? staged[r - lo] : src.offset(r); };
    const int e0 = tid * kSortItems;
    if (e0 < n) {
      int64_t j = t0 + e0, l = lo, h = hi + 1;  // the last r in [l, h) with offset(r) <= j
      while (h - l > 1) {
        const int64_t mid = (l + h) >> 1;
        if (offset(mid) <= j) l = mid;
        else h = mid;
      }
      int64_t r = l;
      for (int k = 0; k < kSortItems && e0 + k < n; ++k, ++j) {
        if (offset(r + 1) <= j) {  // the next row, or a search past empty rows
          if (offset(r + 2) > j) {
            ++r;
          } else {
            l = r + 2;
            h = hi + 1;
            while (h - l > 1) {
              const int64_t mid = (l + h) >> 1;
              if (offset(mid) <= j) l = mid;
              else h = mid;
            }
            r = l;
          }
        }
        slot_row[e0 + k] = uint32_t(r);
      }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kSortItems; ++i) {
      const int e = w0 + i * 32 + lane;
      if (e < n) row[i] = slot_row[e];
    }
  }
  // Rank each entry by digit, in order: first every item's peers (independent ballots), then the
  // per-warp counters item by item.
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    const bool valid = w0 + i * 32 + lane < n;
    packed[i] = digit_peers(valid ? digit_of(col[i]) : kNoDigit, valid, bits);
  }
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    const bool valid = w0 + i * 32 + lane < n;
    const uint32_t d = valid ? digit_of(col[i]) : kNoDigit, peers = packed[i];
    const int leader = __ffs(peers) - 1;
    uint32_t before = 0;
    if (valid && lane == leader) {
      uint16_t* counter = warp_count + warp * digits + d;
      before = *counter;
      *counter = uint16_t(before + __popc(peers));
    }
    const uint32_t rank = __shfl_sync(kFullMask, before, leader) + __popc(peers & ((1u << lane) - 1u));
    packed[i] = (d << 16) | rank;  // rank < kWarpSpan
    __syncwarp();
  }
  __syncthreads();

  // Per digit: prefix over the warps (in warp_count) and the tile's count; then the tile's
  // digit starts (exclusive scan over the digits).
  uint32_t mine = 0;
  if (first_digit < digits) {
    for (int k = 0; k < per_thread; ++k) {
      const int d = first_digit + k;
      uint32_t c[kWarps], running = 0;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) c[w] = warp_count[w * digits + d];
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        warp_count[w * digits + d] = uint16_t(running);
        running += c[w];
      }
      digit_start[d] = running;
      mine += running;
    }
  }
  uint32_t start = 0;
  Scan(scan_storage).ExclusiveSum(mine, start);
  if (first_digit < digits) {
    for (int k = 0; k < per_thread; ++k) {
      const int d = first_digit + k;
      const uint32_t c = digit_start[d];
      digit_start[d] = start;
      start += c;
    }
  }
  if (tid == 0) digit_start[digits] = uint32_t(n);
  __syncthreads();

  // Stage columns, rows and digits in digit order.
#pragma unroll
  for (int i = 0; i < kSortItems; ++i) {
    if (w0 + i * 32 + lane < n) {
      const uint32_t d = packed[i] >> 16;
      const uint32_t s = digit_start[d] + warp_count[warp * digits + d] + (packed[i] & 0xFFFFu);
      slot_col[s] = col[i];
      slot_row[s] = row[i];
      slot_digit[s] = uint16_t(d);
      packed[i] = s;
    }
  }
  __syncthreads();
#pragma unroll 4
  for (int s0 = warp * 32; s0 < n; s0 += kThreads) {
    const int s = s0 + lane;
    const bool valid = s < n;
    uint32_t c = 0;
    if (valid) {
      c = slot_col[s];
      const uint32_t d = slot_digit[s];
      const int64_t g = base[d] + (s - int64_t(digit_start[d]));
      if (sink.col) sink.col[g] = c;
      sink.row[g] = slot_row[s] + sink.row_base;
    }
    if (sink.col_counts) add_runs(sink.col_counts, c, valid);
  }
  __syncthreads();
  // Then the values, through the same staging area.
#pragma unroll
  for (int i = 0; i < kSortItems; ++i)
    if (w0 + i * 32 + lane < n) slot_val[packed[i]] = val[i];
  __syncthreads();
#pragma unroll 4
  for (int s = tid; s < n; s += kThreads) {
    const uint32_t d = slot_digit[s];
    sink.val[base[d] + (s - int64_t(digit_start[d]))] = slot_val[s];
  }
}

// The stable sort by key = column / divisor (key_bits bits), from the CSR arrays `csr` (nnz
// entries) into `sink`. No synchronisation point.
template <typename O, typename W>
void sort_entries(const CsrSource<O, W>& csr, int64_t nnz, const FastDivider& divisor, int key_bits,
                  const SortSink<W>& sink, const GpuContext& context, int max_digit_bits = kMaxDigitBits) {
  if (nnz <= 0) return;
  const int most = max_digit_bits < 1 ? 1 : max_digit_bits > kMaxDigitBits ? kMaxDigitBits : max_digit_bits;
  const int passes = key_bits <= most ? 1 : (key_bits + most - 1) / most;
  const int per_pass = (key_bits + passes - 1) / passes;
  const int64_t tiles = (nnz + kSortTile - 1) / kSortTile;
  const int64_t max_digits = int64_t(1) << per_pass;
  DeviceBuffer counts = buffer_of<uint32_t>(max_digits * tiles, context);
  DeviceBuffer offsets = buffer_of<int64_t>(max_digits * tiles, context);
  DeviceBuffer tile_first_row = buffer_of<int64_t>(tiles, context);  // first pass only
  DeviceBuffer between[2][3];  // columns, rows, values of the passes before the last
  for (int k = 0; k < (passes > 2 ? 2 : passes - 1); ++k) {
    between[k][0] = buffer_of<uint32_t>(nnz, context);
    between[k][1] = buffer_of<uint32_t>(nnz, context);
    between[k][2] = buffer_of<W>(nnz, context);
  }
  for (int p = 0; p < passes; ++p) {
    const int shift = p * per_pass, bits = key_bits - shift < per_pass ? key_bits - shift : per_pass;
    const int digits = 1 << bits;
    const DigitOf digit_of{divisor, shift, uint32_t(digits - 1)};
    SortSink<W> out = sink;
    if (p + 1 < passes) {
      DeviceBuffer* b = between[p % 2];
      out = SortSink<W>{b[0].as<uint32_t>(), b[1].as<uint32_t>(), b[2].as<W>(), 0, nullptr};
    }
    auto pass = [&](auto source) {
      using Src = decltype(source);
      digit_count_kernel<Src><<<unsigned(tiles), kThreads, size_t(digits) * 4, context.stream>>>(
          source, nnz, tiles, digit_of, digits, counts.as<uint32_t>(), tile_first_row.as<int64_t>());
      SPARSETC_CUDA_CHECK_LAUNCH();
      const int64_t n = int64_t(digits) * tiles;
      run_cub("cub::DeviceScan::ExclusiveScan", context, [&](void* temp, size_t& bytes) {
        return cubns::DeviceScan::ExclusiveScan(temp, bytes, counts.as<const uint32_t>(), offsets.as<int64_t>(),
                                                ::cuda::std::plus<>{}, int64_t(0), n, context.stream);
      });
      const size_t shared = scatter_shared_bytes(digits);
      allow_dynamic_shared(digit_scatter_kernel<Src, W>, shared);
      digit_scatter_kernel<Src, W><<<unsigned(tiles), kThreads, shared, context.stream>>>(
          source, nnz, tiles, digit_of, bits, offsets.as<const int64_t>(), tile_first_row.as<const int64_t>(), out);
      SPARSETC_CUDA_CHECK_LAUNCH();
    };
    if (p == 0) {
      pass(csr);
    } else {
      const DeviceBuffer* b = between[(p - 1) % 2];
      pass(ArraySource<W>{b[0].as<const uint32_t>(), b[1].as<const uint32_t>(), b[2].as<const W>()});
    }
  }
}

}  // namespace sparsetc::detail::gpuconv

// Stage 3, group 4 (bins 34..36), an addition to the paper: deterministic accumulators in shared
// memory for the ESC rows, one warp per row, several rows per block. The ESC sort costs
// O(u log^2 u) (bitonic) or O(u log runs) (merge tree) however few distinct columns the row has;
// a finite-element row (bcsstk33: u ~ 5000 products onto ~300 columns) spends nearly all of it
// sorting duplicates. Here a row's products are added where their column lives:
//  - dense window: the row's columns (the rows of B it meets) span at most kWindow columns (bands,
//    FEM matrices in their natural order): values in a window in shared memory, one flag bit per
//    column; the set flags are compacted in order, so the result comes out sorted without a sort;
//  - hash table: a wider span, u <= kSlots: open addressing on the column (atomicCAS claims a slot),
//    then only the d distinct columns (d <= u) are sorted (bitonic, in shared memory) and looked up;
//  - otherwise (or when the row averages fewer than AccumulatorModes::min_row_of_b products per row
//    of B met) the row is appended to a list that the ESC kernel of its bin takes (esc.cu).
//
// Determinism: the warp adds the rows of B met one after the other, in the order of A's entries,
// lanes over a row's entries (up to 128 loads in flight) and __syncwarp between rows of B. Within
// a row of B the columns are distinct (the caller requires it), so no two lanes of a row touch the
// same entry; the barrier orders the rows. Every value is therefore the canonical left fold from
// zero ((0 + p1) + p2) + ..., the bits of every other kernel. Only the claim of a hash slot races,
// and which slot a column gets changes neither a value nor the output order.
//
// Which rows hash: a hash table only pays when a row's products fold onto far fewer columns (on
// uniform random rows, d = u, hashing and then sorting d columns costs twice the ESC sort). A
// row's compression is unknown before its products are seen, so a probe launch first counts the
// products and distinct columns of the bin's first kSampleRows rows that would hash (probe_kernel);
// the bin's rows then hash only if those folded at least AccumulatorModes::min_compression to one.
// (A tally read while rows were still running sent 110063 of poisson3d27's 262144 rows to the ESC
// sort before its sample was done: rows that skip the table finish fast and the whole grid streams
// past.) The choice is a function of the input.
#include <algorithm>

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int32_t kEmpty = -1;

// One warp's scratch (bins.hpp): kHashSlots keys, values and sorted columns, reused as the dense
// window (dense_window_columns values and their flag words). 12 KB (fp32) or 16 KB (fp64) a warp:
// 48 / 64 KB a block, four or three blocks (16 or 12 rows) per SM.
template <typename V>
struct AccumulatorShape {
  static constexpr int kSlots = int(kHashSlots);
  static constexpr size_t kWarpBytes = accumulator_warp_bytes(sizeof(V));
  static constexpr int kWindow = int(dense_window_columns(sizeof(V)));
  static_assert(size_t(kSlots) * (2 * sizeof(int32_t) + sizeof(V)) <= kWarpBytes, "table fits");
  static_assert(size_t(kWindow) * sizeof(V) + size_t(kWindow / 32) * sizeof(uint32_t) <= kWarpBytes, "window fits");
};

__device__ __forceinline__ int warp_inclusive_sum(int x, int lane) {
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int y = __shfl_up_sync(kFullMask, x, offset);
    if (lane >= offset) x += y;
  }
  return x;
}

constexpr int kLoads = 4;              // loads in flight per lane: rows of B 128 entries at a time
constexpr int64_t kSampleRows = 32;     // a bin's first rows: the probe measures their compression

// Calls add(column, product) for every product of row [as, ae) of A, a row of B after the other
// in the order of A's entries, lanes over the row of B's entries, then __syncwarp. Columns are
// distinct within one row of B: the calls between two barriers touch distinct columns.
template <typename V, typename Add>
__device__ __forceinline__ void for_each_row_of_b(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as,
                                                  int64_t ae, int lane, Add&& add) {
  for (int64_t e0 = as; e0 < ae; e0 += 32) {
    const int64_t e = e0 + lane;
    int64_t my_bs = 0;
    int my_length = 0;
    V my_a = V(0);
    if (e < ae) {
      int64_t be;
      row_of_b(b, __ldg(a.col_idx + e), my_bs, be);
      my_length = int(be - my_bs);
      my_a = __ldg(a.values + e);
    }
    const int entries = int(ae - e0 < 32 ? ae - e0 : 32);
    for (int r = 0; r < entries; ++r) {
      const int64_t bs = __shfl_sync(kFullMask, my_bs, r);
      const int length = __shfl_sync(kFullMask, my_length, r);
      const V av = __shfl_sync(kFullMask, my_a, r);
      for (int q0 = 0; q0 < length; q0 += 32 * kLoads) {
        int32_t col[kLoads];
        V bv[kLoads];
#pragma unroll
        for (int k = 0; k < kLoads; ++k) {
          const int q = q0 + 32 * k + lane;
          if (q < length) {
            col[k] = __ldg(b.col_idx + bs + q);
            bv[k] = __ldg(b.values + bs + q);
          }
        }
#pragma unroll
        for (int k = 0; k < kLoads; ++k)
          if (q0 + 32 * k + lane < length) add(col[k], product(av, bv[k]));
      }
      __syncwarp();
    }
  }
}

// Dense window of `width` <= kWindow columns from `lo`. Returns the row's length.
template <typename V>
__device__ int64_t dense_row(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae, int32_t lo,
                             int width, unsigned char* scratch, int lane, int32_t* out_cols, V* out_vals) {
  using Shape = AccumulatorShape<V>;
  V* acc = reinterpret_cast<V*>(scratch);
  uint32_t* flags = reinterpret_cast<uint32_t*>(acc + Shape::kWindow);
  const int words = (width + 31) >> 5;
  for (int w = lane; w < words; w += 32) flags[w] = 0;
  __syncwarp();
  for_each_row_of_b(a, b, as, ae, lane, [&](int32_t col, V p) {
    const int c = col - lo;
    const uint32_t bit = 1u << (c & 31);
    const bool fresh = (atomicOr(flags + (c >> 5), bit) & bit) == 0;
    acc[c] = sum(fresh ? V(0) : acc[c], p);
  });
  // Compaction in column order: a lane per flag word, 32 words (1024 columns) a pass.
  int64_t base = 0;
  for (int w0 = 0; w0 < words; w0 += 32) {
    const int w = w0 + lane;
    uint32_t bits = w < words ? flags[w] : 0u;
    const int n = __popc(bits), inclusive = warp_inclusive_sum(n, lane);
    int64_t position = base + inclusive - n;
    while (bits != 0) {
      const int c = w * 32 + __ffs(int(bits)) - 1;
      bits &= bits - 1;
      out_cols[position] = lo + c;
      out_vals[position] = acc[c];
      ++position;
    }
    base += __shfl_sync(kFullMask, inclusive, 31);
  }
  return base;
}

__device__ __forceinline__ int first_slot(int32_t col, int bits) {
  return int((uint32_t(col) * 0x9E3779B1u) >> (32 - bits));  // Fibonacci hashing: stencil columns spread
}

// The slot of `col` in a table of 2^bits keys (open addressing, linear probing), claimed by
// atomicCAS when the column is new (fresh: this call claimed it). The table never fills: callers
// size it for at least the distinct columns they insert. Threads racing on one column meet there.
__device__ __forceinline__ int claim_slot(int32_t* keys, int32_t col, int bits, bool& fresh) {
  const int mask = (1 << bits) - 1;
  fresh = false;
  for (int slot = first_slot(col, bits);; slot = (slot + 1) & mask) {
    const int32_t k = *reinterpret_cast<volatile int32_t*>(keys + slot);
    if (k == col) return slot;
    if (k == kEmpty) {
      const int32_t old = atomicCAS(keys + slot, kEmpty, col);
      fresh = old == kEmpty;
      if (fresh || old == col) return slot;
    }
  }
}

// Hash table of 2^bits <= kSlots slots (u <= 2^bits). Returns the row's length.
template <typename V>
__device__ int64_t hash_row(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae, int bits,
                            unsigned char* scratch, int lane, int32_t* out_cols, V* out_vals) {
  using Shape = AccumulatorShape<V>;
  int32_t* keys = reinterpret_cast<int32_t*>(scratch);
  V* vals = reinterpret_cast<V*>(keys + Shape::kSlots);
  int32_t* sorted = reinterpret_cast<int32_t*>(vals + Shape::kSlots);
  const int slots = 1 << bits, mask = slots - 1;
  for (int s = lane; s < slots; s += 32) keys[s] = kEmpty;
  __syncwarp();
  int fresh_here = 0;
  for_each_row_of_b(a, b, as, ae, lane, [&](int32_t col, V p) {
    bool fresh;
    const int slot = claim_slot(keys, col, bits, fresh);  // d <= u <= slots
    fresh_here += fresh ? 1 : 0;
    vals[slot] = sum(fresh ? V(0) : vals[slot], p);
  });
  const int distinct = __reduce_add_sync(kFullMask, unsigned(fresh_here));
  // The distinct columns, sorted (bitonic over the next power of two, padded with INT32_MAX).
  int n = 1;
  while (n < distinct) n <<= 1;
  int placed = 0;
  for (int s0 = 0; s0 < slots; s0 += 32) {
    const int32_t k = keys[s0 + lane];
    const unsigned used = __ballot_sync(kFullMask, k != kEmpty);
    if (k != kEmpty) sorted[placed + __popc(used & ((1u << lane) - 1))] = k;
    placed += __popc(used);
  }
  for (int q = distinct + lane; q < n; q += 32) sorted[q] = INT32_MAX;
  __syncwarp();
  for (int k = 2; k <= n; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int q = lane; q < (n >> 1); q += 32) {
        const int x = 2 * q - (q & (j - 1)), y = x + j;
        const int32_t kx = sorted[x], ky = sorted[y];
        if ((kx > ky) == ((x & k) == 0)) {
          sorted[x] = ky;
          sorted[y] = kx;
        }
      }
      __syncwarp();
    }
  }
  for (int q = lane; q < distinct; q += 32) {
    const int32_t col = sorted[q];
    int slot = first_slot(col, bits);
    while (keys[slot] != col) slot = (slot + 1) & mask;
    out_cols[q] = col;
    out_vals[q] = vals[slot];
  }
  return distinct;
}

// The column span [lo, lo + width) of row [as, ae) of A's products (first and last column of every
// row of B met), on every lane.
template <typename V>
__device__ __forceinline__ void row_span(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae,
                                         int lane, int32_t& lo, int64_t& width) {
  int32_t first = INT32_MAX, last = -1;
  span_share(a, b, as + lane, ae, 32, first, last);
  lo = __reduce_min_sync(kFullMask, first);
  width = int64_t(__reduce_max_sync(kFullMask, last)) - int64_t(lo) + 1;
}

// The paths of accumulate_kernel; kNone for a warp past the list's end.
enum RowPath : int { kDense = 0, kHash = 1, kLeft = 2, kNone = 3 };

// Whether a row of u products from `entries` entries of A may use a warp accumulator at all:
// enough products per row of B met (AccumulatorModes::min_row_of_b).
__device__ __forceinline__ bool accumulator_row(int64_t u, int64_t entries, const AccumulatorModes& modes) {
  return u > 0 && entries * modes.min_row_of_b <= u;
}

// The probe of a bin (an addition to the paper's bins): a block for each of its first kSampleRows
// rows that would hash (accumulator rows of u <= kSlots whose columns do not fit a dense window)
// counts the row's products and distinct columns into tally[0], tally[1] (a set of columns in
// shared memory, warps over A's entries, lanes over each row of B: no values, no order, no
// output). accumulate_kernel's rows hash only if the probe folded at least min_compression to one.
// The probe used to be the hashing of those rows themselves in a launch of their own: 48 us of
// wiki-Vote's 0.6 ms, one warp walking each row's hash, sort and look-up alone (ncu: 8 of 132 SMs
// busy, 7.9 cycles per instruction).
constexpr int kProbeThreads = 256;
constexpr int kProbeSlotBits = kHashSlotBits + 1;  // at least 2u slots
template <typename V>
__global__ void __launch_bounds__(kProbeThreads)
    probe_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, Temporary t,
                 AccumulatorModes modes, unsigned long long* __restrict__ tally) {
  __shared__ int32_t columns[1 << kProbeSlotBits];
  __shared__ unsigned distinct;
  __shared__ ColumnSpan span;
  const int64_t i = t.r0 + rows[blockIdx.x];
  const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
  const int64_t u = t.bound[i];
  if (!accumulator_row(u, ae - as, modes) || u > kHashSlots) return;  // uniform over the block
  if (modes.dense && block_column_span(a, b, as, ae, span).width() <= AccumulatorShape<V>::kWindow) return;
  constexpr int kSlots = 1 << kProbeSlotBits;
  for (int q = threadIdx.x; q < kSlots; q += kProbeThreads) columns[q] = kEmpty;
  if (threadIdx.x == 0) distinct = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  unsigned fresh = 0;
  for (int64_t e = as + threadIdx.x / 32; e < ae; e += kProbeThreads / 32) {
    int64_t bs, be;
    row_of_b(b, __ldg(a.col_idx + e), bs, be);
    for (int64_t q = bs + lane; q < be; q += 32) {
      bool claimed;
      claim_slot(columns, __ldg(b.col_idx + q), kProbeSlotBits, claimed);
      fresh += claimed ? 1u : 0u;
    }
  }
  fresh = __reduce_add_sync(kFullMask, fresh);
  if (lane == 0 && fresh > 0) atomicAdd(&distinct, fresh);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(tally, (unsigned long long)u);
    atomicAdd(tally + 1, (unsigned long long)distinct);
  }
}

// The probe's verdict: hash when some probed row folded and the fold reached min_compression.
__device__ __forceinline__ bool probe_says_hash(const unsigned long long* tally, int min_compression) {
  const unsigned long long seen = tally[0], distinct = tally[1];
  return seen > 0 && distinct * unsigned(min_compression) <= seen;
}

// Every row's path is decided before any row runs, so the block lists the rows it leaves with one
// atomic and counts its paths with one each (a same-address atomic per row had cost rgg's 9137
// left rows 21 us, ncu).
template <typename V>
__global__ void __launch_bounds__(kThreads)
    accumulate_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n,
                      Temporary t, int64_t* __restrict__ count, AccumulatorModes modes, int32_t* __restrict__ rest,
                      int32_t* __restrict__ paths, const unsigned long long* __restrict__ tally) {
  using Shape = AccumulatorShape<V>;
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ int block_paths[3], left_base;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x < 3) block_paths[threadIdx.x] = 0;
  const int64_t j = int64_t(blockIdx.x) * kWarps + warp;
  int path = kNone;
  int64_t i = 0, as = 0, ae = 0, u = 0, width = 0;
  int32_t lo = 0;
  if (j < n) {
    i = t.r0 + rows[j];
    as = __ldg(a.row_ptr + i);
    ae = __ldg(a.row_ptr + i + 1);
    // Rows meeting short rows of B leave before their span is measured (rgg_n_2_15_s0: 9137 of its
    // 9454 rows of bins 34..36).
    u = t.bound[i];
    const bool candidate = accumulator_row(u, ae - as, modes);
    if (candidate && modes.dense) row_span(a, b, as, ae, lane, lo, width);
    path = modes.dense && candidate && width <= Shape::kWindow                                  ? kDense
           : modes.hash && candidate && u <= Shape::kSlots && probe_says_hash(tally, modes.min_compression) ? kHash
                                                                                               : kLeft;
  }
  __syncthreads();  // block_paths zeroed
  int left_rank = 0;
  if (lane == 0 && path != kNone) left_rank = atomicAdd(block_paths + path, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (block_paths[kDense] > 0) atomicAdd(paths + kDense, block_paths[kDense]);
    if (block_paths[kHash] > 0) atomicAdd(paths + kHash, block_paths[kHash]);
    left_base = block_paths[kLeft] > 0 ? atomicAdd(paths + kLeft, block_paths[kLeft]) : 0;
  }
  __syncthreads();
  if (path == kLeft && lane == 0) rest[left_base + left_rank] = rows[j];
  if (path == kLeft || path == kNone) return;  // warps are independent from here: no block barrier below

  unsigned char* scratch = dynamic + size_t(warp) * Shape::kWarpBytes;
  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  int32_t* out_cols = t.cols + out;
  V* out_vals = static_cast<V*>(t.vals) + out;
  int64_t length;
  if (path == kDense) {
    length = dense_row(a, b, as, ae, lo, int(width), scratch, lane, out_cols, out_vals);
  } else {
    int bits = 5;  // at least 2u slots while that fits: short probe chains
    while (bits < kHashSlotBits && (int64_t(1) << bits) < 2 * u) ++bits;
    length = hash_row(a, b, as, ae, bits, scratch, lane, out_cols, out_vals);
  }
  if (lane == 0) count[i] = length;
}

}  // namespace

template <typename V>
void accumulate_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                     int64_t end, const Temporary& t, int64_t* count, const AccumulatorModes& modes, int32_t* rest,
                     int32_t* paths, unsigned long long* tally, const GpuContext& context) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  // The probe first (when hashing), then every row, deciding from its tally.
  if (modes.hash) {
    probe_kernel<V><<<unsigned(std::min(n, kSampleRows)), kProbeThreads, 0, context.stream>>>(a, b, rows + begin, t,
                                                                                              modes, tally);
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  const size_t bytes = size_t(kWarps) * AccumulatorShape<V>::kWarpBytes;
  SPARSETC_CUDA_CHECK(
      cudaFuncSetAttribute(accumulate_kernel<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const int64_t blocks = (n + kWarps - 1) / kWarps;
  require(blocks <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: ", n, " rows in one accumulator launch");
  accumulate_kernel<V><<<unsigned(blocks), kThreads, bytes, context.stream>>>(a, b, rows + begin, n, t, count, modes,
                                                                              rest, paths, tally);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template void accumulate_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*, int64_t,
                                     int64_t, const Temporary&, int64_t*, const AccumulatorModes&, int32_t*, int32_t*,
                                     unsigned long long*, const GpuContext&);
template void accumulate_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*,
                                      int64_t, int64_t, const Temporary&, int64_t*, const AccumulatorModes&, int32_t*,
                                      int32_t*, unsigned long long*, const GpuContext&);

}  // namespace sparsetc::detail::binned

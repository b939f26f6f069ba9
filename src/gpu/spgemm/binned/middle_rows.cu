// Stage 3, bin 33 (u = 33..128), an addition to the paper: ESC with one warp per row, eight rows
// per block, instead of one 32-thread block per row (esc.cu). A block of one warp caps an SM at 32
// resident warps and serialises the expansion (a warp copies one row of B after the other: a load
// latency per entry of A, most lanes idle on rows of B of 5-10 entries). Here each lane gathers its
// own products (lane q holds products q * ITEMS .. q * ITEMS + ITEMS - 1: the owner entry of A by a
// binary search over the entries' first products), so a row's loads are all in flight at once, and
// the network sorts only the next power of two of the row's u that a lane count holds (64 keys for
// u <= 64, 128 above) instead of 128 always. Rows of u <= 32 (the heap bins) may take it too, with
// 32 keys (BinnedSpgemmOptions::short_rows_in_warps), and so may the rows of u = 129..256 that the
// accumulators leave in bin 34, with 256 keys (BinnedSpgemmOptions::wide_rows_in_warps): rows of a
// few hundred products over short rows of B (graphs, meshes) sort in registers instead of a block's
// shared memory.
//
// Keys (column, product number) are distinct, so equal columns leave the network in product order
// (the order of A's entries) and each run is folded left to right from its head,
// ((0 + p1) + p2) + ..., the canonical sum of every other kernel: the same bits as esc.cu.
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxItems = 8;
constexpr int kCapacity = 32 * kMaxItems;
static_assert(kCapacity == int(kWarpEscMaxBound) && kCapacity >= kEscBound[0],
              "one warp's registers hold a row of bin 33 and the rows of bin 34 up to 256");

// One warp's shared memory: the row's products in product order, the sorted columns with their
// product numbers, and the current 32 entries of A (first product, row of B, value).
template <typename V>
struct WarpScratch {
  int64_t entry_b[32];
  V vals[kCapacity];
  V entry_a[32];
  int32_t cols[kCapacity];
  int32_t entry_first[32];
  uint8_t from[kCapacity];
};

// Sort keys: distinct (column, product number) pairs ordered by column, then product number. 32-bit
// keys ((column - lo) << 7 | p) when the row's columns span less than 2^25 (nearly always: half the
// shuffles and compares of the network), 64-bit (column << 32 | p) otherwise. ~0 pads.
template <typename Key>
struct KeyCodec;
template <>
struct KeyCodec<uint32_t> {
  static constexpr int kShift = 8;  // p < kCapacity = 256
  static constexpr int64_t kSpan = (int64_t(1) << (32 - kShift)) - 1;
  __device__ static uint32_t encode(int32_t col, int p, int32_t lo) { return (uint32_t(col - lo) << kShift) | uint32_t(p); }
  __device__ static int32_t column(uint32_t key, int32_t lo) { return int32_t(uint32_t(lo) + (key >> kShift)); }
  __device__ static int product_number(uint32_t key) { return int(key & ((1u << kShift) - 1)); }
};
template <>
struct KeyCodec<uint64_t> {
  __device__ static uint64_t encode(int32_t col, int p, int32_t) { return (uint64_t(uint32_t(col)) << 32) | uint64_t(p); }
  __device__ static int32_t column(uint64_t key, int32_t) { return int32_t(uint32_t(key >> 32)); }
  __device__ static int product_number(uint64_t key) { return int(key & 0xFF); }
};
static_assert(kCapacity <= (1 << KeyCodec<uint32_t>::kShift), "product numbers fit the 32-bit key");

template <typename Key>
__device__ __forceinline__ void order(Key& x, Key& y, bool ascending) {
  const Key lo = x < y ? x : y, hi = x < y ? y : x;
  x = ascending ? lo : hi;
  y = ascending ? hi : lo;
}

// Sorts the products (columns col[], product numbers first..first + ITEMS - 1, valid below u) and
// writes the row's sorted, duplicate-free entries; returns their number on every lane.
template <typename Key, typename V, int ITEMS>
__device__ __forceinline__ int sort_and_compress(const int32_t (&col)[ITEMS], int32_t lo, int u, WarpScratch<V>& s,
                                                 int lane, int32_t* out_cols, V* out_vals) {
  using Codec = KeyCodec<Key>;
  constexpr int kKeys = 32 * ITEMS;
  const int first = lane * ITEMS;
  Key key[ITEMS];
#pragma unroll
  for (int e = 0; e < ITEMS; ++e) key[e] = first + e < u ? Codec::encode(col[e], first + e, lo) : ~Key(0);

  // Bitonic network: partners in other lanes by shuffles, partners in the same lane in registers.
#pragma unroll
  for (int k = 2; k <= kKeys; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j >= ITEMS; j >>= 1) {
      const int lanes = j / ITEMS;
      const bool lower = (lane & lanes) == 0;
#pragma unroll
      for (int e = 0; e < ITEMS; ++e) {
        const Key other = __shfl_xor_sync(kFullMask, key[e], lanes);
        const bool keep_small = lower == (((first + e) & k) == 0);
        key[e] = keep_small ? (other < key[e] ? other : key[e]) : (other > key[e] ? other : key[e]);
      }
    }
#pragma unroll
    for (int jj = ITEMS / 2; jj > 0; jj >>= 1) {
      if (jj < k) {
#pragma unroll
        for (int e = 0; e < ITEMS; ++e)
          if ((e & jj) == 0) order(key[e], key[e | jj], ((first + e) & k) == 0);
      }
    }
  }

  // Compress: heads of equal-column runs, their positions by a warp scan, each head folds its run.
  int heads = 0;
  const int32_t last_of_previous = __shfl_up_sync(kFullMask, Codec::column(key[ITEMS - 1], lo), 1);
#pragma unroll
  for (int e = 0; e < ITEMS; ++e) {
    const int q = first + e;
    const int32_t c = Codec::column(key[e], lo);
    s.cols[q] = c;
    s.from[q] = uint8_t(Codec::product_number(key[e]));
    const int32_t before = e > 0 ? Codec::column(key[e - 1], lo) : last_of_previous;
    heads += (q < u && (q == 0 || before != c)) ? 1 : 0;
  }
  int position = heads;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int y = __shfl_up_sync(kFullMask, position, offset);
    if (lane >= offset) position += y;
  }
  const int length = __shfl_sync(kFullMask, position, 31);
  position -= heads;
  __syncwarp();
#pragma unroll
  for (int e = 0; e < ITEMS; ++e) {
    const int q = first + e;
    if (q >= u) break;
    const int32_t c = s.cols[q];
    if (q > 0 && s.cols[q - 1] == c) continue;
    V value = V(0);
    int r = q;
    do {
      value = sum(value, s.vals[s.from[r]]);
      ++r;
    } while (r < u && s.cols[r] == c);
    out_cols[position] = c;
    out_vals[position] = value;
    ++position;
  }
  __syncwarp();  // the scratch is reused by the warp's next row
  return length;
}

// Row [as, ae) of A with u <= 32 * ITEMS products: writes its sorted, duplicate-free entries at
// out_cols / out_vals and returns their number (on every lane).
template <typename V, int ITEMS>
__device__ int middle_row(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae, int u,
                          WarpScratch<V>& s, int lane, int32_t* out_cols, V* out_vals) {
  const int first = lane * ITEMS;
  int32_t col[ITEMS];
#pragma unroll
  for (int e = 0; e < ITEMS; ++e) col[e] = 0;

  // Gather, 32 entries of A at a time (a row of A may be longer than 32: it meets empty rows of B).
  int base = 0;
  for (int64_t e0 = as; e0 < ae; e0 += 32) {
    const EntryRun<V> run = entry_run(a, b, e0 + lane, ae);
    const int64_t bs = run.start;
    const int length = int(run.length);
    const V av = run.a;
    int inclusive = length;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const int y = __shfl_up_sync(kFullMask, inclusive, offset);
      if (lane >= offset) inclusive += y;
    }
    const int total = __shfl_sync(kFullMask, inclusive, 31);
    s.entry_first[lane] = base + inclusive - length;  // lanes past ae: base + total, above every product
    s.entry_b[lane] = bs;
    s.entry_a[lane] = av;
    __syncwarp();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const int p = first + k;
      if (p >= base && p < base + total) {
        // The owner: the last entry whose first product is <= p (empty entries share a first product
        // with the next one and are passed over).
        const int r = last_not_above(s.entry_first, 32, p);
        const int64_t bp = s.entry_b[r] + (p - s.entry_first[r]);
        col[k] = __ldg(b.col_idx + bp);
        s.vals[p] = product(s.entry_a[r], __ldg(b.values + bp));
      }
    }
    __syncwarp();
    base += total;
  }

  // The row's column span picks the key width (warp-uniform).
  int32_t lo = INT32_MAX, hi = INT32_MIN;
#pragma unroll
  for (int e = 0; e < ITEMS; ++e)
    if (first + e < u) {
      lo = min(lo, col[e]);
      hi = max(hi, col[e]);
    }
  lo = __reduce_min_sync(kFullMask, lo);
  hi = __reduce_max_sync(kFullMask, hi);
  if (int64_t(hi) - int64_t(lo) < KeyCodec<uint32_t>::kSpan)
    return sort_and_compress<uint32_t, V, ITEMS>(col, lo, u, s, lane, out_cols, out_vals);
  return sort_and_compress<uint64_t, V, ITEMS>(col, lo, u, s, lane, out_cols, out_vals);
}

template <typename V>
__global__ void __launch_bounds__(kThreads)
    middle_rows_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n,
                       Temporary t, int64_t* __restrict__ count, const int32_t* __restrict__ listed) {
  __shared__ WarpScratch<V> scratch[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t j = int64_t(blockIdx.x) * kWarps + warp;
  if (j >= n || (listed != nullptr && j >= *listed)) return;  // warps are independent: no block barrier
  const int64_t i = t.r0 + rows[j];
  const int64_t u = t.bound[i];  // stage 1's count: no recount
  if (u > kCapacity) return;     // a listed row of bin 34 above 256: esc_rows takes it
  const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  int32_t* out_cols = t.cols + out;
  V* out_vals = static_cast<V*>(t.vals) + out;
  const int n_u = int(u);
  WarpScratch<V>& s = scratch[warp];
  const int length = n_u <= 32    ? middle_row<V, 1>(a, b, as, ae, n_u, s, lane, out_cols, out_vals)
                     : n_u <= 64  ? middle_row<V, 2>(a, b, as, ae, n_u, s, lane, out_cols, out_vals)
                     : n_u <= 128 ? middle_row<V, 4>(a, b, as, ae, n_u, s, lane, out_cols, out_vals)
                                  : middle_row<V, kMaxItems>(a, b, as, ae, n_u, s, lane, out_cols, out_vals);
  if (lane == 0) count[i] = length;
}

}  // namespace

template <typename V>
void middle_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                 int64_t end, const Temporary& t, int64_t* count, const GpuContext& context, const int32_t* listed) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int64_t blocks = (n + kWarps - 1) / kWarps;
  require(blocks <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: ", n, " rows in one launch");
  middle_rows_kernel<V><<<unsigned(blocks), kThreads, 0, context.stream>>>(a, b, rows + begin, n, t, count, listed);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template void middle_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*, int64_t,
                                 int64_t, const Temporary&, int64_t*, const GpuContext&, const int32_t*);
template void middle_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*, int64_t,
                                  int64_t, const Temporary&, int64_t*, const GpuContext&, const int32_t*);

}  // namespace sparsetc::detail::binned

// Stage 3, group 3 (bins 2..32, u <= 32), an addition to the paper: ESC in registers, a group of
// G = 8, 16 or 32 lanes per row (the smallest that holds u). The heap method (heap.cu, one thread
// per row) reads B and writes C~ one thread per row: 32 rows' scattered addresses per instruction,
// and a chain of dependent loads per pop. Here lane q of the group holds product q of the row
// (coalesced reads of each row of B), the group sorts its G keys (column << 32 | product number:
// distinct, so equal columns stay in product order) with a bitonic network of shuffles, each run
// head folds its run left to right ((0 + p1) + p2) + ..., the canonical sum of every other
// kernel, and the heads write the row's entries side by side (coalesced).
//
// All 32 lanes of a warp take part in every shuffle (groups are sub-warps of one warp), so every
// loop runs the warp's largest trip count; lanes without work hold the empty key ~0.
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;

template <typename V, int G>
__global__ void __launch_bounds__(kThreads)
    short_rows_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n,
                      Temporary t, int64_t* __restrict__ count) {
  constexpr int kGroups = kThreads / G;
  const int lane = threadIdx.x & 31, g = threadIdx.x & (G - 1);
  const int64_t j = int64_t(blockIdx.x) * kGroups + threadIdx.x / G;
  if (__all_sync(kFullMask, j >= n)) return;  // whole warps only: the shuffles below take all 32 lanes
  const bool real = j < n;
  const int64_t i = real ? t.r0 + rows[j] : 0;
  const int64_t as = real ? __ldg(a.row_ptr + i) : 0, ae = real ? __ldg(a.row_ptr + i + 1) : 0;
  const unsigned below = (1u << g) - 1;
  const unsigned group_mask = (G == 32 ? kFullMask : (1u << (G % 32)) - 1) << (lane & ~(G - 1));

  // Gather: lane g holds product g. Entries of A G at a time (a row of A longer than its u meets
  // empty rows of B), their rows of B numbered by a group scan.
  uint64_t key = ~uint64_t(0);
  V value = V(0);
  int base = 0;
  const int chunks = int(__reduce_max_sync(kFullMask, unsigned((ae - as + G - 1) / G)));
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const EntryRun<V> run = entry_run(a, b, as + int64_t(chunk) * G + g, ae);
    const int64_t bs = run.start;
    const int length = int(run.length);
    const V av = run.a;
    int inclusive = length;
#pragma unroll
    for (int offset = 1; offset < G; offset <<= 1) {
      const int y = __shfl_up_sync(kFullMask, inclusive, offset, G);
      if (g >= offset) inclusive += y;
    }
    const int exclusive = inclusive - length, total = __shfl_sync(kFullMask, inclusive, G - 1, G);
    const int q = g - base;  // this lane's product within the chunk
    int lo = 0, hi = G - 1;
#pragma unroll
    for (int step = 1; step < G; step <<= 1) {
      const int mid = (lo + hi + 1) >> 1;
      if (__shfl_sync(kFullMask, exclusive, mid, G) <= q) lo = mid;
      else hi = mid - 1;
    }
    const int64_t owner_bs = __shfl_sync(kFullMask, bs, lo, G);
    const int owner_first = __shfl_sync(kFullMask, exclusive, lo, G);
    const V owner_a = __shfl_sync(kFullMask, av, lo, G);
    if (q >= 0 && q < total) {
      const int64_t bp = owner_bs + (q - owner_first);
      key = (uint64_t(uint32_t(__ldg(b.col_idx + bp))) << 32) | uint64_t(g);
      value = product(owner_a, __ldg(b.values + bp));
    }
    base += total;
  }

  // Bitonic sort of the group's G keys, ascending.
#pragma unroll
  for (int k = 2; k <= G; k <<= 1) {
#pragma unroll
    for (int m = k >> 1; m > 0; m >>= 1) {
      const uint64_t other_key = __shfl_xor_sync(kFullMask, key, m, G);
      const V other_value = __shfl_xor_sync(kFullMask, value, m, G);
      const bool keep_small = ((g & m) == 0) == ((g & k) == 0);
      if (keep_small ? other_key < key : other_key > key) {
        key = other_key;
        value = other_value;
      }
    }
  }

  // Heads of equal-column runs fold their runs; the heads are the row's entries, in order.
  const bool valid = key != ~uint64_t(0);
  const int32_t col = int32_t(uint32_t(key >> 32));
  const int32_t previous = __shfl_up_sync(kFullMask, col, 1, G);
  const bool head = valid && (g == 0 || previous != col);
  V acc = sum(V(0), value);
  bool folding = head;
  for (int r = 1; __any_sync(kFullMask, folding); ++r) {
    const int from = g + r < G ? g + r : G - 1;
    const V next = __shfl_sync(kFullMask, value, from, G);
    const uint64_t next_key = __shfl_sync(kFullMask, key, from, G);
    folding = folding && g + r < G && next_key != ~uint64_t(0) && int32_t(uint32_t(next_key >> 32)) == col;
    if (folding) acc = sum(acc, next);
  }
  const unsigned heads = __ballot_sync(kFullMask, head) & group_mask;
  const unsigned mine = heads >> (lane & ~(G - 1));
  if (!real) return;
  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  if (head) {
    const int position = __popc(mine & below);
    t.cols[out + position] = col;
    static_cast<V*>(t.vals)[out + position] = acc;
  }
  if (g == 0) count[i] = __popc(mine);
}

template <typename V, int G>
void launch_short(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t n,
                  const Temporary& t, int64_t* count, const GpuContext& context) {
  if (n <= 0) return;
  constexpr int kGroups = kThreads / G;
  const int64_t blocks = (n + kGroups - 1) / kGroups;
  require(blocks <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: ", n, " short rows in one launch");
  short_rows_kernel<V, G><<<unsigned(blocks), kThreads, 0, context.stream>>>(a, b, rows, n, t, count);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename V>
void short_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
                int lanes, const Temporary& t, int64_t* count, const GpuContext& context) {
  const int64_t n = end - begin;
  switch (lanes) {
    case 8: launch_short<V, 8>(a, b, rows + begin, n, t, count, context); break;
    case 16: launch_short<V, 16>(a, b, rows + begin, n, t, count, context); break;
    default: launch_short<V, 32>(a, b, rows + begin, n, t, count, context); break;
  }
}

template void short_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*, int64_t,
                                int64_t, int, const Temporary&, int64_t*, const GpuContext&);
template void short_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*, int64_t,
                                 int64_t, int, const Temporary&, int64_t*, const GpuContext&);

}  // namespace sparsetc::detail::binned

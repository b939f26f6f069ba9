// Stage 3, an addition to the paper: rows of u <= 64 sorted in registers, one thread per row: the
// heap's rows (bins 2..32) and the rows of bin 33 of u <= 64 where they are many. The heap
// (heap.cu) pops one product at a time and each pop waits for the load of the next entry of that
// row of B: u dependent loads per row (ncu, H200, 2D Poisson stencil, 10^6 rows of u = 25: 78% of
// the stall samples on those loads, 18 cycles per issued instruction, and each store a sector per
// lane). Here a thread first copies its row's products into its own slice of shared memory (the
// loads of a row of B all in flight at once), then sorts U 32-bit keys (column << 6 | product
// number: distinct, so equal columns keep product order) with a bitonic network in registers,
// folds each run left to right ((0 + p1) + p2) + ..., the canonical sum of every other kernel, into
// its slice, and the warp copies its rows to C~ a row at a time (coalesced stores). Products are
// numbered in the order of A's entries and then of B's: the heap's order of pops and the ESC
// sort's order of equal keys, so the same bits as both. (Reading a row's products into registers
// before the fold, to write entry e at slot e, took 128 registers in fp64 with 32 keys against
// 80, and measured no faster: H200, fp32, 2D Poisson stencil 0.578 / 0.582 ms.)

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 128;
constexpr int kNumberBits = 6;  // product numbers < U <= 64
constexpr int kMaxKeys = 1 << kNumberBits;
// The largest key, column kRegisterSortMaxColumns - 1 with number 63, stays below the empty key ~0.
static_assert(kRegisterSortMaxColumns == (int64_t(1) << (32 - kNumberBits)) - 1, "keys hold a column and a number");
static_assert(kShortEscBound == kMaxKeys && kHeapMaxBound <= kMaxKeys, "product numbers fit kNumberBits");

// A thread's slice: U + 1 products (value, column) and a byte per entry (the slot of its sum). An
// odd stride, so lanes at one product number hit distinct banks (the key loads) and a warp reading
// one row's entries side by side does too (the copy).
template <typename V, int U>
constexpr size_t scratch_bytes() {
  return size_t(kThreads) * (U + 1) * (sizeof(V) + sizeof(int32_t) + sizeof(uint8_t));
}

template <int U>
__device__ __forceinline__ void bitonic_sort(uint32_t (&key)[U]) {
#pragma unroll
  for (int k = 2; k <= U; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
#pragma unroll
      for (int e = 0; e < U; ++e) {
        const int partner = e ^ j;
        if (partner > e) {
          const uint32_t lo = min(key[e], key[partner]), hi = max(key[e], key[partner]);
          const bool ascending = (e & k) == 0;
          key[e] = ascending ? lo : hi;
          key[partner] = ascending ? hi : lo;
        }
      }
    }
  }
}

template <typename V, int U>
__global__ void __launch_bounds__(kThreads)
    register_sort_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n,
                         Temporary t, int64_t* __restrict__ count) {
  constexpr int kSlice = U + 1;
  constexpr uint32_t kEmpty = ~0u, kNumberMask = (1u << kNumberBits) - 1;
  extern __shared__ __align__(16) unsigned char scratch[];
  V* const all_vals = reinterpret_cast<V*>(scratch);
  int32_t* const all_cols = reinterpret_cast<int32_t*>(all_vals + kThreads * kSlice);
  uint8_t* const all_slots = reinterpret_cast<uint8_t*>(all_cols + kThreads * kSlice);
  const int lane = threadIdx.x & 31, warp_first = threadIdx.x & ~31;
  const int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (__all_sync(kFullMask, j >= n)) return;  // whole warps only: the copy below takes all 32 lanes
  V* const vals = all_vals + threadIdx.x * kSlice;
  int32_t* const cols = all_cols + threadIdx.x * kSlice;
  uint8_t* const slots = all_slots + threadIdx.x * kSlice;
  const bool real = j < n;
  const int64_t i = real ? t.r0 + rows[j] : 0;

  // Gather: product q of the row at slot q (stage 1 counted exactly these u products).
  int products = 0;
  if (real) {
    const int64_t ae = __ldg(a.row_ptr + i + 1);
    for (int64_t p = __ldg(a.row_ptr + i); p < ae; ++p) {
      const EntryRun<V> run = entry_run(a, b, p, ae);
#pragma unroll 4
      for (int64_t q = run.start; q < run.start + run.length; ++q) {
        cols[products] = __ldg(b.col_idx + q);
        vals[products] = product(run.a, __ldg(b.values + q));
        ++products;
      }
    }
  }

  uint32_t key[U];
#pragma unroll
  for (int q = 0; q < U; ++q) key[q] = q < products ? (uint32_t(cols[q]) << kNumberBits) | uint32_t(q) : kEmpty;
  bitonic_sort<U>(key);

  // Fold the runs of equal columns, reading the products in key order: entry e's column goes to
  // cols[e] (the keys hold the columns now) and its sum to the slot of its run's first product,
  // vals[slots[e]]: read already, and no later product is read from it.
  int entries = 0, head = 0;
  int32_t current = 0;
  V folded = V(0);
  auto finish_entry = [&] {
    cols[entries - 1] = current;
    vals[head] = folded;
    slots[entries - 1] = uint8_t(head);
  };
#pragma unroll
  for (int q = 0; q < U; ++q) {
    if (key[q] == kEmpty) break;
    const int32_t col = int32_t(key[q] >> kNumberBits);
    const int slot = int(key[q] & kNumberMask);
    const V v = vals[slot];
    if (entries > 0 && col == current) {
      folded = sum(folded, v);
      continue;
    }
    if (entries > 0) finish_entry();
    current = col;
    folded = sum(V(0), v);
    head = slot;
    ++entries;
  }
  if (entries > 0) finish_entry();
  int64_t out = 0;
  if (real) {
    out = t.cap_scan[i] - t.cap_scan[t.r0];
    count[i] = entries;
  }
  __syncwarp();

  // Copy: 32 / U rows of the warp at a time (one for U >= 32), a lane per entry.
  constexpr int kRowsAtOnce = U < 32 ? 32 / U : 1;
  constexpr int kLanesPerRow = 32 / kRowsAtOnce;
  const int sub = lane / kLanesPerRow, e0 = lane % kLanesPerRow;
#pragma unroll 4
  for (int r0 = 0; r0 < 32; r0 += kRowsAtOnce) {
    const int r = r0 + sub;
    const int length = __shfl_sync(kFullMask, entries, r);
    const int64_t at = __shfl_sync(kFullMask, out, r);
    for (int e = e0; e < length; e += kLanesPerRow) {
      const int from = (warp_first + r) * kSlice;
      t.cols[at + e] = all_cols[from + e];
      static_cast<V*>(t.vals)[at + e] = all_vals[from + all_slots[from + e]];
    }
  }
}

template <typename V, int U>
void launch_register_sort(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t n,
                          const Temporary& t, int64_t* count, const GpuContext& context) {
  constexpr size_t bytes = scratch_bytes<V, U>();
  SPARSETC_CUDA_CHECK(
      cudaFuncSetAttribute(register_sort_kernel<V, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  register_sort_kernel<V, U><<<ctas_for(n, kThreads), kThreads, bytes, context.stream>>>(a, b, rows, n, t, count);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename V>
void register_sort_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                        int64_t end, int max_bound, const Temporary& t, int64_t* count, const GpuContext& context) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  require(b.cols <= kRegisterSortMaxColumns, SPARSETC_STATUS_INTERNAL_ERROR, "binned SpGEMM: register sort of B with ",
          b.cols, " columns");
  if (max_bound <= 8) launch_register_sort<V, 8>(a, b, rows + begin, n, t, count, context);
  else if (max_bound <= 16) launch_register_sort<V, 16>(a, b, rows + begin, n, t, count, context);
  else if (max_bound <= 32) launch_register_sort<V, 32>(a, b, rows + begin, n, t, count, context);
  else launch_register_sort<V, 64>(a, b, rows + begin, n, t, count, context);
}

template void register_sort_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*,
                                        int64_t, int64_t, int, const Temporary&, int64_t*, const GpuContext&);
template void register_sort_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*,
                                         int64_t, int64_t, int, const Temporary&, int64_t*, const GpuContext&);

}  // namespace sparsetc::detail::binned

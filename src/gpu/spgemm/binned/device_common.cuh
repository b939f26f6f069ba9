// Device helpers of the binned SpGEMM kernels (.cu files only): the canonical product and sum
// (rounded separately, never contracted into an FMA, so every kernel folds the same bits), and
// small search helpers.
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/device_csr.hpp"
#include "gpu/spgemm/binned/kernels.hpp"

namespace sparsetc::detail::binned {

namespace cubns = gpuconv::cubns;
using gpuconv::ctas_for;
using gpuconv::kFullMask;

__device__ __forceinline__ float product(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double product(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float sum(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double sum(double a, double b) { return __dadd_rn(a, b); }

// Row i of B that entry p of A meets: [begin, end) in B's arrays.
template <typename V>
__device__ __forceinline__ void row_of_b(const DeviceCsrView<V>& b, int32_t k, int64_t& begin, int64_t& end) {
  begin = __ldg(b.row_ptr + k);
  end = __ldg(b.row_ptr + k + 1);
}

// Entry e of A as the run of products it makes: its row of B, [start, start + length) in B's
// arrays, and the value of A that scales it; an empty run for e >= end (a lane past the row's end).
template <typename V>
struct EntryRun {
  int64_t start = 0, length = 0;
  V a = V(0);
};
template <typename V>
__device__ __forceinline__ EntryRun<V> entry_run(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t e,
                                                 int64_t end) {
  EntryRun<V> run;
  if (e < end) {
    int64_t b_end;
    row_of_b(b, __ldg(a.col_idx + e), run.start, b_end);
    run.length = b_end - run.start;
    run.a = __ldg(a.values + e);
  }
  return run;
}

// First position in [0, n) of sorted `a` whose value is >= key (n when none).
template <typename T>
__device__ __forceinline__ int64_t lower_bound_in(const T* a, int64_t n, T key) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Last position r in [0, n) with a[r] <= key, for a[0] <= key (the run holding product `key`).
template <typename T>
__device__ __forceinline__ int last_not_above(const T* a, int n, T key) {
  int lo = 0, hi = n;
  while (hi - lo > 1) {
    const int mid = (lo + hi) >> 1;
    if (a[mid] <= key) lo = mid;
    else hi = mid;
  }
  return lo;
}

// This thread's share of a row's column span: the first and last column of the rows of B that
// entries begin, begin + step, ... (< end) of A meet (B's rows are sorted), folded into lo and hi;
// the caller reduces over the threads that share the row.
template <typename V>
__device__ __forceinline__ void span_share(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t begin,
                                           int64_t end, int64_t step, int32_t& lo, int32_t& hi) {
  for (int64_t e = begin; e < end; e += step) {
    int64_t bs, be;
    row_of_b(b, __ldg(a.col_idx + e), bs, be);
    if (be == bs) continue;
    lo = min(lo, __ldg(b.col_idx + bs));
    hi = max(hi, __ldg(b.col_idx + be - 1));
  }
}

// A row's column span, lo..hi; hi < lo when the row has no product.
struct ColumnSpan {
  int32_t lo, hi;
  __device__ int64_t width() const { return int64_t(hi) - int64_t(lo) + 1; }
};

// The first and last column met by the products of A's entries [as, ae): the rows of B met are
// sorted, so their first and last entries suffice. Every thread of the block calls it (threads over
// the entries; three barriers) and gets {lo, hi}; {INT32_MAX, -1} when no product. `span` is the
// block's shared pair, free again when this returns.
template <typename V>
__device__ ColumnSpan block_column_span(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae,
                                        ColumnSpan& span) {
  if (threadIdx.x == 0) span = {INT32_MAX, -1};
  __syncthreads();
  int32_t lo = INT32_MAX, hi = -1;
  span_share(a, b, as + threadIdx.x, ae, blockDim.x, lo, hi);
  atomicMin(&span.lo, lo);
  atomicMax(&span.hi, hi);
  __syncthreads();
  const ColumnSpan result = span;
  __syncthreads();  // every thread has it before the caller may reset or reuse the pair
  return result;
}

// The products of up to 32 rows of B (lane r holds row r's first entry `start`, its `length` and
// the entry of A `av` that scales it), 32 at a time in the order of the rows and then of their
// entries (a warp scan of the lengths, a 5-step shuffle search for each lane's row): round(valid,
// column, product, n) with lane l holding product t0 + l of the n in this round (valid: l < n).
// Every lane of the warp calls it; a __syncwarp follows each round.
template <typename V, typename Round>
__device__ void for_products_in_order(const DeviceCsrView<V>& b, int64_t start, int64_t length, V av, Round&& round) {
  const int lane = threadIdx.x & 31;
  int64_t inclusive = length;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int64_t y = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset) inclusive += y;
  }
  const int64_t exclusive = inclusive - length, total = __shfl_sync(kFullMask, inclusive, 31);
  for (int64_t t0 = 0; t0 < total; t0 += 32) {
    const int64_t t = t0 + lane;
    int lo = 0, hi = 31;  // the row owning product t: the last lane whose first product is <= t
#pragma unroll
    for (int step = 0; step < 5; ++step) {
      const int mid = (lo + hi + 1) >> 1;
      if (__shfl_sync(kFullMask, exclusive, mid) <= t) lo = mid;
      else hi = mid - 1;
    }
    const int64_t owner_start = __shfl_sync(kFullMask, start, lo), owner_first = __shfl_sync(kFullMask, exclusive, lo);
    const V owner_a = __shfl_sync(kFullMask, av, lo);
    int32_t col = 0;
    V p = V(0);
    if (t < total) {
      const int64_t q = owner_start + (t - owner_first);
      col = __ldg(b.col_idx + q);
      p = product(owner_a, __ldg(b.values + q));
    }
    round(t < total, col, p, int(total - t0 < 32 ? total - t0 : 32));
    __syncwarp();  // the next 32 products may load what this round stored
  }
}

// One round's fold by leaders: lanes on one key `at` (>= 0; distinct negative values for none)
// are folded by the lowest of them, which loads the entry once (load(at)), adds its peers'
// products in lane order from registers (one shuffle each) and stores the sum once (store(at,
// column, sum)). That is the canonical left fold, with one memory round trip per entry instead of
// one per product. peers: __match_any_sync(kFullMask, at). Every lane of the warp calls it.
template <typename V, typename Load, typename Store>
__device__ void fold_peers(int64_t at, unsigned peers, int32_t col, V p, Load&& load, Store&& store) {
  const int lane = threadIdx.x & 31;
  const bool leader = at >= 0 && (peers & ((1u << lane) - 1)) == 0;
  unsigned later = leader ? peers & ~(1u << lane) : 0u;  // the leader's peers, lowest lane first
  const int rounds = int(__reduce_max_sync(kFullMask, unsigned(__popc(later))));
  V folded = leader ? sum(load(at), p) : V(0);
  for (int r = 0; r < rounds; ++r) {
    const V next = __shfl_sync(kFullMask, p, later != 0 ? __ffs(later) - 1 : lane);
    if (later != 0) {
      folded = sum(folded, next);
      later &= later - 1;
    }
  }
  if (leader) store(at, col, folded);
}

// The warp's in-order fold of the products of up to 32 rows of B (for_products_in_order): key(column)
// names the entry each product adds to (< 0: none), and the lanes on one entry are folded by
// fold_peers (AP of the Galerkin product: 27 products on one entry of C). Every lane calls it.
template <typename V, typename Key, typename Load, typename Store>
__device__ void fold_rows_in_order(const DeviceCsrView<V>& b, int64_t start, int64_t length, V av, Key&& key,
                                   Load&& load, Store&& store) {
  const int lane = threadIdx.x & 31;
  for_products_in_order(b, start, length, av, [&](bool valid, int32_t col, V p, int) {
    int64_t at = -1 - lane;  // distinct for idle lanes and products without an entry
    if (valid) {
      const int64_t k = key(col);
      if (k >= 0) at = k;
    }
    fold_peers(at, __match_any_sync(kFullMask, at), col, p, load, store);
  });
}

// Smallest power of two >= n (n >= 1).
__device__ __forceinline__ int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace sparsetc::detail::binned

// Numeric-only SpGEMM: the values of C for its known pattern (AMG Galerkin products recompute
// values every step with the same patterns). Short rows first, a thread each: a row of at most
// kThreadRowEntries entries of A, kThreadRowProducts products and kThreadRowWidth entries of C
// (AP of the Galerkin product: 27 entries of A, one product each, on up to 8 entries of C) is
// walked in order by one thread, which keeps C's columns and sums in registers. Then one warp per
// other row of C: the warp walks the row's
// products 32 at a time in the order of A's entries; each lane finds its column in C's row by
// binary search; lanes that hit the same entry (same column from different entries of A) are
// folded in lane order in registers, one load and one store of the entry. That is the canonical
// left fold of every other kernel, so the result is bit-identical to the full product's.
//
// Rows of more than kLongProducts products leave the warp (one warp walking 10^5 products with a
// binary search each holds the whole grid up) to the block dense accumulator (block_dense.cuh),
// when B's columns fit it: a block per row adds the products into shared memory and then reads
// the row's pattern out of it, the same fold and so the same bits.
#include "gpu/spgemm/binned/block_dense.cuh"
#include "gpu/spgemm/binned/kernels.hpp"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

constexpr int64_t kLongProducts = 2048;

// Products of row i of A with B, summed over the warp (every lane gets it).
template <typename V>
__device__ int64_t warp_products(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t i, int lane) {
  int64_t products = 0;
  for (int64_t e = __ldg(a.row_ptr + i) + lane; e < __ldg(a.row_ptr + i + 1); e += 32) {
    int64_t bs, be;
    row_of_b(b, __ldg(a.col_idx + e), bs, be);
    products += be - bs;
  }
  for (int offset = 16; offset > 0; offset >>= 1) products += __shfl_xor_sync(kFullMask, products, offset);
  return products;
}

// A row of C of at most 32 entries is kept in the warp's shared memory while it is folded (its
// columns searched there, its values added there, then written once, coalesced): the Galerkin
// product's rows (AP: 27 products on ~5 entries) would otherwise wait on a global binary search
// and a global load per entry.
template <typename V>
struct SmallRow {
  int32_t cols[32];
  V vals[32];
};

// A row of C of at most 32 entries from at most 32 entries of A and kBroadcastProducts products
// (AP of an AMG Galerkin product: 27 products, one per entry of A, on up to 8 entries): lane k
// holds entry k's column and sum, and takes the row's products in order from the other lanes by
// shuffles, adding those on its column. No search for the entry and no match (the warp's other
// way to fold spent ~680 instructions on such a row, ncu, H200). The same left fold, so the same
// bits. run: lane l's entry of A (the row's only round).
constexpr int64_t kBroadcastProducts = 64;
template <typename V>
__device__ void broadcast_row(const DeviceCsrView<V>& b, const EntryRun<V>& run, int64_t cs, int64_t ce,
                              const int32_t* __restrict__ c_cols, V* c_vals) {
  const int lane = threadIdx.x & 31;
  const int width = int(ce - cs);
  const int32_t mine = lane < width ? __ldg(c_cols + cs + lane) : -1;
  V acc = V(0);
  auto take = [&](int32_t col, V p, int q) {  // product q of this round, in order
    const int32_t c = __shfl_sync(kFullMask, col, q);
    const V v = __shfl_sync(kFullMask, p, q);
    if (c == mine) acc = sum(acc, v);
  };
  if (__all_sync(kFullMask, run.length <= 1)) {  // a product per lane at most: lane order is the order
    int32_t col = 0;
    V p = V(0);
    if (run.length == 1) {
      col = __ldg(b.col_idx + run.start);
      p = product(run.a, __ldg(b.values + run.start));
    }
    for (unsigned left = __ballot_sync(kFullMask, run.length == 1); left != 0; left &= left - 1)
      take(col, p, __ffs(left) - 1);
  } else {
    for_products_in_order(b, run.start, run.length, run.a, [&](bool, int32_t col, V p, int n) {
      for (int q = 0; q < n; ++q) take(col, p, q);
    });
  }
  if (lane < width) c_vals[cs + lane] = acc;
}

// Appends row i where `listed` (one atomic per block: one a warp on one address cost 32 us for the
// 10^6 rows of poisson2d5:1024, ncu). Every thread of the block calls it.
__device__ __forceinline__ void list_left_rows(bool listed, int64_t i, int32_t* left, int32_t* left_count) {
  __shared__ int32_t block_count, block_base;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  const unsigned warp_listed = __ballot_sync(kFullMask, listed);
  const int lane = threadIdx.x & 31;
  int32_t warp_base = 0;
  if (lane == 0 && warp_listed != 0) warp_base = atomicAdd(&block_count, __popc(warp_listed));
  warp_base = __shfl_sync(kFullMask, warp_base, 0);
  __syncthreads();
  if (threadIdx.x == 0) block_base = block_count > 0 ? atomicAdd(left_count, block_count) : 0;
  __syncthreads();
  if (listed) left[block_base + warp_base + __popc(warp_listed & ((1u << lane) - 1))] = int32_t(i);
}

// A thread per row: a row of at most kThreadRowEntries entries of A, kThreadRowProducts products
// and kThreadRowWidth entries of C (AP of the Galerkin product: 27 entries, one product each, on
// up to 8 entries of C) is walked in order by one thread, which keeps C's columns and sums in
// registers: each product is added to the register of its column (none: a product outside the
// pattern, left out). acc starts at 0 and adds each product: the fold of every other kernel, so
// the same bits. The rows it does not take are listed (`left`, block by block) for numeric_kernel.
// (A warp's walk of the AP row took 27 rounds of shuffles, broadcast_row: 180 us for its 262144
// rows, H200.) Loads go kBatch entries of A at a time, so a thread has several in flight.
constexpr int kThreadRowEntries = 32;
constexpr int kThreadRowWidth = 8;
constexpr int64_t kThreadRowProducts = 64;
constexpr int kBatch = 4;
template <typename V>
__global__ void __launch_bounds__(kThreads)
    thread_rows_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int64_t* __restrict__ c_row_ptr,
                       const int32_t* __restrict__ c_cols, V* __restrict__ c_vals, int32_t* __restrict__ left,
                       int32_t* __restrict__ left_count) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  int64_t as = 0, ae = 0, cs = 0, ce = 0;
  if (i < a.rows) {
    as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
    cs = __ldg(c_row_ptr + i), ce = __ldg(c_row_ptr + i + 1);
  }
  bool mine = i < a.rows && ae - as <= kThreadRowEntries && ce - cs <= kThreadRowWidth;
  if (mine) {  // u first: a row found too long on the way would have cost its walk
    int64_t u = 0;
    for (int64_t e0 = as; e0 < ae; e0 += kBatch) {
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        if (e0 + q >= ae) break;
        const int32_t k = __ldg(a.col_idx + e0 + q);
        u += __ldg(b.row_ptr + k + 1) - __ldg(b.row_ptr + k);
      }
    }
    mine = u <= kThreadRowProducts;
  }
  list_left_rows(i < a.rows && !mine, i, left, left_count);
  if (!mine || ce == cs) return;
  int32_t cols[kThreadRowWidth];
  V acc[kThreadRowWidth];
#pragma unroll
  for (int j = 0; j < kThreadRowWidth; ++j) {
    cols[j] = cs + j < ce ? __ldg(c_cols + cs + j) : -1;
    acc[j] = V(0);
  }
  auto add = [&](int32_t col, V p) {
#pragma unroll
    for (int j = 0; j < kThreadRowWidth; ++j)
      if (cols[j] == col) acc[j] = sum(acc[j], p);
  };
  for (int64_t e0 = as; e0 < ae; e0 += kBatch) {
    // A batch's rows of B and their first products loaded together, then added in order.
    int64_t bs[kBatch], be[kBatch];
    V av[kBatch];
    int32_t first_col[kBatch];
    V first_b[kBatch];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      bs[q] = be[q] = 0;
      av[q] = V(0);
      if (e0 + q < ae) {
        row_of_b(b, __ldg(a.col_idx + e0 + q), bs[q], be[q]);
        av[q] = __ldg(a.values + e0 + q);
      }
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      first_col[q] = -1;
      first_b[q] = V(0);
      if (be[q] > bs[q]) {
        first_col[q] = __ldg(b.col_idx + bs[q]);
        first_b[q] = __ldg(b.values + bs[q]);
      }
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      if (be[q] == bs[q]) continue;
      add(first_col[q], product(av[q], first_b[q]));
      for (int64_t r = bs[q] + 1; r < be[q]; ++r) add(__ldg(b.col_idx + r), product(av[q], __ldg(b.values + r)));
    }
  }
#pragma unroll
  for (int j = 0; j < kThreadRowWidth; ++j)
    if (cs + j < ce) c_vals[cs + j] = acc[j];
}

// Row i of C by its warp (lane: this thread's lane; row: the warp's shared row).
// [as, ae): its entries of A, [cs, ce): of C.
template <typename V>
__device__ __forceinline__ void numeric_row(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t i,
                                            int64_t as, int64_t ae, int64_t cs, int64_t ce,
                                            const int32_t* __restrict__ c_cols, V* c_vals, int32_t* long_rows,
                                            int32_t* long_count, SmallRow<V>& row, int lane) {
  const bool small = ce - cs <= 32, one_round = ae - as <= 32;
  // A row of at most 32 entries of A is one round: its entries' runs, loaded once, give u. A
  // longer one counts its products first.
  EntryRun<V> round_run;
  int64_t u = 0;
  if (one_round) {
    round_run = entry_run(a, b, as + lane, ae);
    u = round_run.length;
    for (int offset = 16; offset > 0; offset >>= 1) u += __shfl_xor_sync(kFullMask, u, offset);
  } else if (long_rows != nullptr) {
    u = warp_products(a, b, i, lane);
  }
  if (long_rows != nullptr && u > kLongProducts) {
    if (lane == 0) long_rows[atomicAdd(long_count, 1)] = int32_t(i);  // for long_rows_kernel
    return;
  }
  if (small && one_round && u <= kBroadcastProducts) {
    broadcast_row(b, round_run, cs, ce, c_cols, c_vals);
    return;
  }
  if (small) {
    if (lane < ce - cs) row.cols[lane] = __ldg(c_cols + cs + lane);
    row.vals[lane] = V(0);
  } else {
    for (int64_t q = cs + lane; q < ce; q += 32) c_vals[q] = V(0);
  }
  __syncwarp();
  for (int64_t e0 = as; e0 < ae; e0 += 32) {
    // 32 entries of A: their rows of B, folded in order into C's row (each product's entry found
    // by binary search; a column outside C's pattern: nothing to write).
    const EntryRun<V> run = one_round ? round_run : entry_run(a, b, e0 + lane, ae);
    const int64_t bs = run.start, length = run.length;
    const V av = run.a;
    if (small) {
      const int width = int(ce - cs);
      fold_rows_in_order(
          b, bs, length, av,
          [&](int32_t col) -> int64_t {
            const int at = int(lower_bound_in(row.cols, width, col));
            return at < width && row.cols[at] == col ? at : -1;
          },
          [&](int64_t at) { return row.vals[at]; }, [&](int64_t at, int32_t, V folded) { row.vals[at] = folded; });
    } else {
      fold_rows_in_order(
          b, bs, length, av,
          [&](int32_t col) -> int64_t {
            const int64_t at = cs + lower_bound_in(c_cols + cs, ce - cs, col);
            return at < ce && __ldg(c_cols + at) == col ? at : -1;
          },
          [&](int64_t at) { return c_vals[at]; }, [&](int64_t at, int32_t, V folded) { c_vals[at] = folded; });
    }
  }
  if (small && lane < ce - cs) c_vals[cs + lane] = row.vals[lane];
}

// rows (optional): the rows to take, thread_rows_kernel's list of *row_count (its length stays on
// the device); null: all rows.
template <typename V>
__global__ void __launch_bounds__(kThreads)
    numeric_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int64_t* __restrict__ c_row_ptr,
                   const int32_t* __restrict__ c_cols, V* c_vals, const int32_t* __restrict__ rows,
                   const int32_t* __restrict__ row_count, int32_t* long_rows, int32_t* long_count) {
  __shared__ SmallRow<V> small_rows[kWarps];
  SmallRow<V>& row = small_rows[threadIdx.x >> 5];
  const int lane = threadIdx.x & 31;
  const int64_t n = rows != nullptr ? *row_count : a.rows;
  for (int64_t j = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); j < n; j += int64_t(gridDim.x) * kWarps) {
    const int64_t i = rows != nullptr ? rows[j] : j;
    const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
    const int64_t cs = __ldg(c_row_ptr + i), ce = __ldg(c_row_ptr + i + 1);
    numeric_row(a, b, i, as, ae, cs, ce, c_cols, c_vals, long_rows, long_count, row, lane);
    __syncwarp();  // the row's shared memory is read before the next row overwrites it
  }
}

// c_vals[q] = acc[c_cols[q] - p0] for q in [first, last), kGatherLoads column loads in flight per
// thread (a load at a time left a row of 10^4 entries of C, bloweya, waiting on 40 round trips).
constexpr int kGatherLoads = 4;
template <typename V>
__device__ void gather_pass(const int32_t* __restrict__ c_cols, V* c_vals, int64_t first, int64_t last, int32_t p0,
                            const V* acc) {
  constexpr int64_t kThreads = block_dense::kDenseThreads;
  for (int64_t q0 = first + threadIdx.x; q0 < last; q0 += kThreads * kGatherLoads) {
    int32_t c[kGatherLoads];
#pragma unroll
    for (int u = 0; u < kGatherLoads; ++u)
      if (q0 + u * kThreads < last) c[u] = __ldg(c_cols + q0 + u * kThreads);
#pragma unroll
    for (int u = 0; u < kGatherLoads; ++u)
      if (q0 + u * kThreads < last) c_vals[q0 + u * kThreads] = acc[c[u] - p0];
  }
}

// A persistent grid over the long rows the warps listed (long_rows[0..*long_count)).
template <typename V>
__global__ void __launch_bounds__(block_dense::kDenseThreads)
    long_rows_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int64_t* __restrict__ c_row_ptr,
                     const int32_t* __restrict__ c_cols, V* c_vals, const int32_t* __restrict__ long_rows,
                     const int32_t* __restrict__ long_count, BlockDenseShape shape, unsigned long long* counter) {
  using namespace block_dense;
  if (*long_count == 0) return;  // most products have none: no scratch to clear
  extern __shared__ __align__(16) unsigned char dynamic[];
  const int32_t pass_width = shape.pass_width;
  const BlockDenseLayout<V> s = zeroed_scratch<V>(dynamic, b.cols, pass_width);
  const int32_t cols = int32_t(b.cols);
  const int64_t n = *long_count;
  for (int64_t item = next_item(counter); item < n; item = next_item(counter)) {
    const int64_t i = long_rows[item];
    const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
    const int64_t cs = __ldg(c_row_ptr + i), ce = __ldg(c_row_ptr + i + 1);
    for (int32_t p0 = 0; p0 < cols; p0 += pass_width) {
      const int32_t p1 = cols - p0 > pass_width ? p0 + pass_width : cols;
      add_pass(a, b, as, ae, p0, p1, pass_width >= cols, true, s.acc, s.bits, shape);
      // The pattern's entries in the pass (0 where no product lands), then every touched entry
      // cleared by its bit: products outside the pattern (a pattern with dropped entries) are
      // not written and leave nothing behind.
      const int64_t first = cs + (p0 > 0 ? lower_bound_in(c_cols + cs, ce - cs, p0) : 0);
      const int64_t last = p1 < cols ? cs + lower_bound_in(c_cols + cs, ce - cs, p1) : ce;
      gather_pass(c_cols, c_vals, first, last, p0, s.acc);
      __syncthreads();
      compact_pass<V>(p0, p1, s.acc, s.bits, nullptr, nullptr, 0, false);
    }
  }
}

}  // namespace

template <typename V>
void numeric_values(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int64_t* c_row_ptr,
                    const int32_t* c_cols, int64_t c_nnz, V* c_vals, const GpuContext& context,
                    bool short_rows_in_threads) {
  if (a.rows == 0 || c_nnz == 0) return;
  // The short rows by threads first, when rows of C average at most kThreadRowWidth entries and
  // rows of A at most kThreadRowEntries (else few rows would qualify, and the pass would cost more
  // than it saves: ~10 us on ca-AstroPh or P^T(AP), H200); the warps take the rows left.
  // (With flags of the rows taken instead of a list, the warps spent 36 us skipping AP's rows; a
  // list costs a load before the row's offsets, which only pays where the threads take most rows:
  // poisson2d5:1024, no row taken, 607 -> 660 us with the list, ncu, H200.)
  const bool threads = short_rows_in_threads && c_nnz <= kThreadRowWidth * a.rows &&
                       a.nnz <= kThreadRowEntries * a.rows && a.rows <= 2147483647;
  // The warps list the long rows for the block dense accumulator when B's columns fit it in a few
  // passes (a device count: no read back; the persistent grid is sized for all rows).
  const BlockDenseShape shape = block_dense_shape<V>(b.cols, size_t(100) << 10, 8);
  DeviceBuffer long_rows = gpuconv::buffer_of<int32_t>(shape ? a.rows : 0, context);
  DeviceBuffer long_count = gpuconv::buffer_of<int32_t>(shape ? 1 : 0, context);
  if (shape) SPARSETC_CUDA_CHECK(cudaMemsetAsync(long_count.data(), 0, sizeof(int32_t), context.stream));
  DeviceBuffer left = gpuconv::buffer_of<int32_t>(threads ? a.rows : 0, context);
  DeviceBuffer left_count = gpuconv::buffer_of<int32_t>(threads ? 1 : 0, context);
  const int64_t ctas = (a.rows + kWarps - 1) / kWarps;
  int64_t grid = ctas < 65536 * 16 ? ctas : 65536 * 16;
  if (threads) {
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(left_count.data(), 0, sizeof(int32_t), context.stream));
    thread_rows_kernel<V><<<unsigned((a.rows + kThreads - 1) / kThreads), kThreads, 0, context.stream>>>(
        a, b, c_row_ptr, c_cols, c_vals, left.as<int32_t>(), left_count.as<int32_t>());
    SPARSETC_CUDA_CHECK_LAUNCH();
    // Few rows are left, as a rule: a grid of a few waves strides over them (32768 blocks past
    // the list's end cost AP 22 us).
    grid = std::min<int64_t>(grid, 4 * block_dense::resident_blocks(numeric_kernel<V>, kThreads, 0));
  }
  numeric_kernel<V><<<unsigned(grid), kThreads, 0, context.stream>>>(
      a, b, c_row_ptr, c_cols, c_vals, threads ? left.as<const int32_t>() : nullptr,
      threads ? left_count.as<const int32_t>() : nullptr, shape ? long_rows.as<int32_t>() : nullptr,
      shape ? long_count.as<int32_t>() : nullptr);
  SPARSETC_CUDA_CHECK_LAUNCH();
  if (shape) {
    const unsigned blocks = block_dense::persistent_blocks(long_rows_kernel<V>, shape.shared_bytes, a.rows);
    DeviceBuffer counter = block_dense::zeroed_counter(context);
    long_rows_kernel<V><<<blocks, block_dense::kDenseThreads, shape.shared_bytes, context.stream>>>(
        a, b, c_row_ptr, c_cols, c_vals, long_rows.as<const int32_t>(), long_count.as<const int32_t>(),
        shape, counter.as<unsigned long long>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
}

template void numeric_values<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int64_t*,
                                    const int32_t*, int64_t, float*, const GpuContext&, bool);
template void numeric_values<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int64_t*,
                                     const int32_t*, int64_t, double*, const GpuContext&, bool);

}  // namespace sparsetc::detail::binned

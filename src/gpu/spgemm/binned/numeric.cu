// Numeric-only SpGEMM: the values of C for its known pattern (AMG Galerkin products recompute
// values every step with the same patterns). One warp per row of C: the warp walks the row's
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

template <typename V>
__global__ void __launch_bounds__(kThreads)
    numeric_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int64_t* __restrict__ c_row_ptr,
                   const int32_t* __restrict__ c_cols, V* c_vals, int32_t* long_rows, int32_t* long_count) {
  __shared__ SmallRow<V> small_rows[kWarps];
  SmallRow<V>& row = small_rows[threadIdx.x >> 5];
  const int lane = threadIdx.x & 31;
  for (int64_t i = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); i < a.rows; i += int64_t(gridDim.x) * kWarps) {
    const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
    // A row of more than 32 entries of A counts its products first; a shorter one counts them
    // in its one round below.
    if (long_rows != nullptr && ae - as > 32 && warp_products(a, b, i, lane) > kLongProducts) {
      if (lane == 0) long_rows[atomicAdd(long_count, 1)] = int32_t(i);  // for long_rows_kernel
      continue;
    }
    const int64_t cs = __ldg(c_row_ptr + i), ce = __ldg(c_row_ptr + i + 1);
    const bool small = ce - cs <= 32;
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
      const EntryRun<V> run = entry_run(a, b, e0 + lane, ae);
      const int64_t bs = run.start, length = run.length;
      const V av = run.a;
      if (long_rows != nullptr && ae - as <= 32) {  // its one round: the warp's sum is u
        int64_t u = length;
        for (int offset = 16; offset > 0; offset >>= 1) u += __shfl_xor_sync(kFullMask, u, offset);
        if (u > kLongProducts) {
          if (lane == 0) long_rows[atomicAdd(long_count, 1)] = int32_t(i);
          break;
        }
      }
      if (small) {
        const int width = int(ce - cs);
        for_products_in_order(b, bs, length, av, [&](bool valid, int32_t col, V p, int n) {
          int at = -1 - lane;  // distinct for idle lanes and products without an entry
          if (valid) {
            const int k = int(lower_bound_in(row.cols, width, col));
            if (k < width && row.cols[k] == col) at = k;
          }
          const unsigned peers = __match_any_sync(kFullMask, at);
          int most = __popc(peers);
          for (int offset = 16; offset > 0; offset >>= 1) most = max(most, __shfl_xor_sync(kFullMask, most, offset));
          if (2 * most > n) {
            // Many products on one entry (AP of the Galerkin product: up to 27 of 27): lane k
            // takes the round's products in order and adds those on entry k, n steps of two
            // shuffles instead of a leader's chain of shuffle rounds. The same left fold.
            V acc = lane < width ? row.vals[lane] : V(0);
            for (int q = 0; q < n; ++q) {
              const int k = __shfl_sync(kFullMask, at, q);
              const V v = __shfl_sync(kFullMask, p, q);
              if (k == lane) acc = sum(acc, v);
            }
            if (lane < width) row.vals[lane] = acc;
          } else {
            fold_peers(int64_t(at), peers, col, p, [&](int64_t k) { return row.vals[k]; },
                       [&](int64_t k, int32_t, V folded) { row.vals[k] = folded; });
          }
        });
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
    __syncwarp();  // the row's shared memory is read before the next row overwrites it
  }
}

// A persistent grid over the long rows the warps listed (long_rows[0..*long_count)).
template <typename V>
__global__ void __launch_bounds__(block_dense::kDenseThreads)
    long_rows_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int64_t* __restrict__ c_row_ptr,
                     const int32_t* __restrict__ c_cols, V* c_vals, const int32_t* __restrict__ long_rows,
                     const int32_t* __restrict__ long_count, int32_t pass_width, unsigned long long* counter) {
  using namespace block_dense;
  extern __shared__ __align__(16) unsigned char dynamic[];
  const BlockDenseLayout<V> s = zeroed_scratch<V>(dynamic, b.cols, pass_width);
  const int32_t cols = int32_t(b.cols);
  const int tid = threadIdx.x;
  const int64_t n = *long_count;
  for (int64_t item = next_item(counter); item < n; item = next_item(counter)) {
    const int64_t i = long_rows[item];
    const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
    const int64_t cs = __ldg(c_row_ptr + i), ce = __ldg(c_row_ptr + i + 1);
    for (int32_t p0 = 0; p0 < cols; p0 += pass_width) {
      const int32_t p1 = cols - p0 > pass_width ? p0 + pass_width : cols;
      add_pass(a, b, as, ae, p0, p1, pass_width >= cols, true, s.acc, s.bits);
      // The pattern's entries in the pass (0 where no product lands), then every touched entry
      // cleared by its bit: products outside the pattern (a pattern with dropped entries) are
      // not written and leave nothing behind.
      const int64_t first = cs + (p0 > 0 ? lower_bound_in(c_cols + cs, ce - cs, p0) : 0);
      const int64_t last = p1 < cols ? cs + lower_bound_in(c_cols + cs, ce - cs, p1) : ce;
      for (int64_t q = first + tid; q < last; q += kDenseThreads) c_vals[q] = s.acc[__ldg(c_cols + q) - p0];
      __syncthreads();
      compact_pass<V>(p0, p1, s.acc, s.bits, nullptr, nullptr, 0, false);
    }
  }
}

}  // namespace

template <typename V>
void numeric_values(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int64_t* c_row_ptr,
                    const int32_t* c_cols, int64_t c_nnz, V* c_vals, const GpuContext& context) {
  if (a.rows == 0 || c_nnz == 0) return;
  // The warps list the long rows for the block dense accumulator when B's columns fit it in a few
  // passes (a device count: no read back; the persistent grid is sized for all rows).
  const BlockDenseShape shape = block_dense_shape<V>(b.cols, size_t(100) << 10, 8);
  DeviceBuffer long_rows = gpuconv::buffer_of<int32_t>(shape ? a.rows : 0, context);
  DeviceBuffer long_count = gpuconv::buffer_of<int32_t>(shape ? 1 : 0, context);
  if (shape) SPARSETC_CUDA_CHECK(cudaMemsetAsync(long_count.data(), 0, sizeof(int32_t), context.stream));
  const int64_t ctas = (a.rows + kWarps - 1) / kWarps;
  numeric_kernel<V><<<unsigned(ctas < 65536 * 16 ? ctas : 65536 * 16), kThreads, 0, context.stream>>>(
      a, b, c_row_ptr, c_cols, c_vals, shape ? long_rows.as<int32_t>() : nullptr,
      shape ? long_count.as<int32_t>() : nullptr);
  SPARSETC_CUDA_CHECK_LAUNCH();
  if (shape) {
    const unsigned blocks = block_dense::persistent_blocks(long_rows_kernel<V>, shape.shared_bytes, a.rows);
    DeviceBuffer counter = block_dense::zeroed_counter(context);
    long_rows_kernel<V><<<blocks, block_dense::kDenseThreads, shape.shared_bytes, context.stream>>>(
        a, b, c_row_ptr, c_cols, c_vals, long_rows.as<const int32_t>(), long_count.as<const int32_t>(),
        shape.pass_width, counter.as<unsigned long long>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
}

template void numeric_values<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int64_t*,
                                    const int32_t*, int64_t, float*, const GpuContext&);
template void numeric_values<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int64_t*,
                                     const int32_t*, int64_t, double*, const GpuContext&);

}  // namespace sparsetc::detail::binned

// Stage 3, groups 4 and 5 (bins 35..37), an addition to the paper: one block per row adds the
// row's products into a dense accumulator in shared memory that spans B's columns (in a few passes
// of `pass_width` columns when they do not all fit), with one bit per column of B marking the
// columns the row touches. The set bits are then compacted in order, so the row comes out sorted
// without a sort, and every accumulator entry is cleared as it is read.
//
// Why: the ESC sort costs O(u log^2 u) however few distinct columns a row has, and the merge path
// spends a block-wide step per batch of products; a row of A meeting many rows of B (FEM rows of
// ~2000 products, hub rows of skewed graphs with up to 10^6) needs neither: an addition per product
// and a scan over the row's bits suffice.
//
// Determinism: the block adds the rows of B one after the other, in the order of A's entries,
// threads over a row of B's entries, and __syncthreads between rows of B. Within a row of B the
// columns are distinct (the caller requires it), so no two threads touch the same entry between
// two barriers: every value is the canonical left fold from zero, the bits of every other kernel.
// The loads of the next rows of B are issued before the barriers of the current ones (eight rows
// in flight), so the barrier, not the load latency, sets the pace of a step.
//
// Merge rows (bin 37) have a region of min(u, 4096) entries in C~: a symbolic pass first sets the
// row's bits (all its products at once, in any order: a bit is an OR) and counts them. A row that
// does not fit is sent to the growth step with needed = its exact length and, once grown, skips
// the symbolic pass (it knows its length). ESC rows (bins 35, 36) have room for u entries: they
// set their bits while they add.
#include <algorithm>

#include "gpu/spgemm/binned/block_dense.cuh"

namespace sparsetc::detail::binned {
namespace {

using namespace block_dense;
constexpr int kThreads = kDenseThreads;


// Sets the bits of every product of A's entries [as, ae) and returns the number of bits set, to
// every thread. A thread per entry of A walks its row of B (256 rows of B in flight, where a warp
// per entry would walk a long row of A's short rows of B one after the other); rows of B longer
// than kAloneLength are walked by the whole warp, one after the other, and rows of kBlockLength
// or more by the whole block (bloweya: a few entries of A, one of them on a row of B of 10^4
// entries, which one warp walked while seven waited).
constexpr int kAloneLength = 64;
constexpr int kBlockLength = 1024;
template <typename V>
__device__ int64_t set_row_bits(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae,
                                int64_t words, uint32_t* bits, int64_t& block_total) {
  using Reduce = cubns::BlockReduce<int64_t, kThreads>;
  __shared__ typename Reduce::TempStorage reduce;
  __shared__ int64_t shared_begin, shared_end;
  __shared__ int claimant;
  const int tid = threadIdx.x, lane = tid & 31;
  if (tid == 0) claimant = kThreads;
  __syncthreads();
  for (int64_t e0 = as; e0 < ae; e0 += kThreads) {  // block-uniform trip count
    const int64_t e = e0 + tid;
    int64_t bs = 0, be = 0;
    if (e < ae) row_of_b(b, __ldg(a.col_idx + e), bs, be);
    const bool alone = be - bs <= kAloneLength;
    bool block_row = be - bs >= kBlockLength;
    if (alone) {
      for (int64_t q0 = bs; q0 < be; q0 += kUnroll) {
        int32_t c[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          if (q0 + u < be) c[u] = __ldg(b.col_idx + q0 + u);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          if (q0 + u < be) set_bit(bits, c[u]);
      }
    }
    for (unsigned long_rows = __ballot_sync(kFullMask, !alone && !block_row); long_rows != 0; long_rows &= long_rows - 1) {
      const int owner = __ffs(long_rows) - 1;
      const int64_t row_begin = __shfl_sync(kFullMask, bs, owner), row_end = __shfl_sync(kFullMask, be, owner);
      for (int64_t q0 = row_begin + lane; q0 < row_end; q0 += 32 * kUnroll) {
        int32_t c[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          if (q0 + 32 * u < row_end) c[u] = __ldg(b.col_idx + q0 + 32 * u);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          if (q0 + 32 * u < row_end) set_bit(bits, c[u]);
      }
    }
    while (__syncthreads_or(block_row)) {  // one row of B at a time, the lowest thread's first
      if (block_row) atomicMin(&claimant, tid);
      __syncthreads();
      const bool claimed = tid == claimant;
      if (claimed) {
        shared_begin = bs;
        shared_end = be;
        block_row = false;
      }
      __syncthreads();
      if (claimed) claimant = kThreads;  // read by all before the barrier above
      const int64_t row_begin = shared_begin, row_end = shared_end;
      for (int64_t q0 = row_begin; q0 < row_end; q0 += int64_t(kThreads) * kUnroll) {  // block-uniform
        int32_t c[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          if (q0 + tid + kThreads * u < row_end) c[u] = __ldg(b.col_idx + q0 + tid + kThreads * u);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          if (q0 + tid + kThreads * u < row_end) set_bit(bits, c[u]);
      }
      __syncthreads();  // the row is read before the next claimant writes
    }
  }
  __syncthreads();
  int64_t mine = 0;
  for (int64_t w = tid; w < words; w += kThreads) mine += __popc(bits[w]);
  const int64_t total = Reduce(reduce).Sum(mine);
  if (tid == 0) block_total = total;
  __syncthreads();
  return block_total;
}

// Clears the bits of a row that is not written (its region is too small).
__device__ void clear_bits(uint32_t* bits, int64_t words) {
  for (int64_t w = threadIdx.x; w < words; w += kThreads) bits[w] = 0u;
  __syncthreads();
}

// Computes one row: the passes over its column span (block_column_span: from the smallest first
// to the largest last column of its rows of B), adding then compacting. Returns its length. Passes
// over the span only, not all of B's columns: a row on a band of B's columns takes one pass where B
// needs several (fp64 accumulators hold half the columns of fp32's), and its compaction scans the
// span's words only (H200, C API: cage11 fp64 0.63-0.67 → 0.59 ms, fp32 0.55-0.63 → 0.51; on
// others within the spread between runs, docs/performance.md).
template <typename V>
__device__ int64_t dense_row(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae,
                             ColumnSpan span, const BlockDenseShape& shape, bool bits_ready,
                             const BlockDenseLayout<V>& s, int32_t* out_cols, V* out_vals) {
  if (span.hi < span.lo) return 0;  // no products
  const int64_t cols = b.cols, pass_width = shape.pass_width, first = span.lo & ~int64_t(31);
  const bool one_pass = span.hi < first + pass_width;  // every product in the pass: no cutting of rows of B
  int64_t length = 0;
  for (int64_t p0 = first; p0 <= span.hi; p0 += pass_width) {
    const int64_t p1 = cols - p0 > pass_width ? p0 + pass_width : cols;
    add_pass(a, b, as, ae, int32_t(p0), int32_t(p1), one_pass, !bits_ready, s.acc, s.bits, shape);
    length = compact_pass(int32_t(p0), int32_t(p1), s.acc, s.bits, out_cols, out_vals, length, true);
  }
  return length;
}

template <typename V>
__global__ void __launch_bounds__(kThreads)
    esc_dense_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n,
                     const int32_t* __restrict__ listed, Temporary t, int64_t* __restrict__ count,
                     BlockDenseShape shape, unsigned long long* counter) {
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ ColumnSpan window;
  const BlockDenseLayout<V> s = zeroed_scratch<V>(dynamic, b.cols, shape.pass_width);
  const int64_t items = listed != nullptr ? int64_t(*listed) : n;
  for (int64_t item = next_item(counter); item < items; item = next_item(counter)) {
    const int64_t i = t.r0 + rows[item];
    const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
    const int64_t offset = t.cap_scan[i] - t.cap_scan[t.r0];
    const int64_t length = dense_row(a, b, as, ae, block_column_span(a, b, as, ae, window), shape, false, s,
                                     t.cols + offset, static_cast<V*>(t.vals) + offset);
    if (threadIdx.x == 0) count[i] = length;
  }
}

template <typename V>
__global__ void __launch_bounds__(kThreads)
    merge_dense_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, MergeRow<V>* states, const int32_t* __restrict__ list,
                       int64_t n, int32_t* __restrict__ overflow, int32_t* __restrict__ overflow_count,
                       int64_t* __restrict__ count, BlockDenseShape shape, int64_t narrow,
                       unsigned long long* counter) {
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ int64_t total;
  __shared__ ColumnSpan window;
  const int64_t words = (b.cols + 31) >> 5;
  const BlockDenseLayout<V> s = zeroed_scratch<V>(dynamic, b.cols, shape.pass_width);
  for (int64_t item = next_item(counter); item < n; item = next_item(counter)) {
    const int32_t index = list[item];
    MergeRow<V>& state = states[index];
    const int64_t row = state.row, as = state.a_pos, ae = __ldg(a.row_ptr + row + 1);
    const bool fresh = state.length == 0 && state.b_off == 0 && as == __ldg(a.row_ptr + row) && as < ae;
    if (!fresh || state.waiting) continue;  // the same for every thread
    // A narrow row meeting long rows of B stays with the merge kernel's dense mode, whose window
    // of `narrow` columns lives in shared memory next to three other blocks (band:16384:512, u =
    // 1025^2 onto 2049 columns: 22 ms there, 78 ms here).
    ColumnSpan span{1, 0};  // not measured yet (the same for every thread)
    if ((ae - as) * 32 <= state.bound) {
      span = block_column_span(a, b, as, ae, window);
      if (span.width() <= narrow && span.width() <= state.capacity) continue;
    }
    // The exact length: known after a growth (needed, exact), else from the bits of a symbolic pass.
    bool bits_ready = false;
    int64_t length = state.exact ? state.needed : 0;
    if (!state.exact || length > state.capacity) {
      length = set_row_bits(a, b, as, ae, words, s.bits, total);
      bits_ready = true;
    }
    if (length > state.capacity) {
      clear_bits(s.bits, words);
      if (threadIdx.x == 0) {
        state.needed = length;
        state.exact = 1;
        state.waiting = 1;
        overflow[atomicAdd(overflow_count, 1)] = index;
      }
      continue;
    }
    if (span.hi < span.lo) span = block_column_span(a, b, as, ae, window);
    const int64_t written = dense_row(a, b, as, ae, span, shape, bits_ready, s, state.cols, state.vals);
    if (threadIdx.x == 0) {
      state.a_pos = ae;
      state.length = written;
      count[row] = written;
    }
    __syncthreads();  // the state is final before the next item is taken
  }
}

}  // namespace

template <typename V>
BlockDenseShape block_dense_shape(int64_t b_cols, size_t shared_bytes, int max_passes) {
  BlockDenseShape shape;
  if (b_cols <= 0 || b_cols > 2147483647 - 32) return shape;
  const size_t static_bytes = sizeof(RunSlots<V>) + 1024;  // slots, scan and reduce storage
  const size_t bit_bytes = (size_t((b_cols + 31) >> 5) * sizeof(uint32_t) + 15) / 16 * 16;
  if (shared_bytes <= static_bytes + bit_bytes) return shape;
  const int64_t room = int64_t((shared_bytes - static_bytes - bit_bytes) / sizeof(V)) / 32 * 32;
  const int64_t width = std::min<int64_t>(room, (b_cols + 31) / 32 * 32);
  if (width < 32 || (b_cols + width - 1) / width > max_passes) return shape;
  shape.pass_width = int32_t(width);
  shape.passes = int32_t((b_cols + width - 1) / width);
  shape.shared_bytes = bit_bytes + size_t(width) * sizeof(V);
  return shape;
}

template <typename V>
void block_dense_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin,
                      int64_t end, const Temporary& t, int64_t* count, const BlockDenseShape& shape,
                      const GpuContext& context, const int32_t* listed) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  require(shape.pass_width > 0, SPARSETC_STATUS_INTERNAL_ERROR, "binned SpGEMM: no dense accumulator shape");
  const unsigned blocks = persistent_blocks(esc_dense_kernel<V>, shape.shared_bytes, n);
  DeviceBuffer counter = zeroed_counter(context);
  esc_dense_kernel<V><<<blocks, kThreads, shape.shared_bytes, context.stream>>>(
      a, b, rows + begin, n, listed, t, count, shape, counter.as<unsigned long long>());
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename V>
void block_dense_round(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, MergeRow<V>* states, const int32_t* list,
                       int64_t n, int32_t* overflow, int32_t* overflow_count, int64_t* count,
                       const BlockDenseShape& shape, const GpuContext& context) {
  if (n <= 0) return;
  require(shape.pass_width > 0, SPARSETC_STATUS_INTERNAL_ERROR, "binned SpGEMM: no dense accumulator shape");
  const unsigned blocks = persistent_blocks(merge_dense_kernel<V>, shape.shared_bytes, n);
  DeviceBuffer counter = zeroed_counter(context);
  merge_dense_kernel<V><<<blocks, kThreads, shape.shared_bytes, context.stream>>>(
      a, b, states, list, n, overflow, overflow_count, count, shape,
      int64_t(merge_dense_columns(sizeof(V))), counter.as<unsigned long long>());
  SPARSETC_CUDA_CHECK_LAUNCH();
}

#define SPARSETC_BINNED_BLOCK_DENSE(V)                                                                              \
  template BlockDenseShape block_dense_shape<V>(int64_t, size_t, int);                                              \
  template void block_dense_rows<V>(const DeviceCsrView<V>&, const DeviceCsrView<V>&, const int32_t*, int64_t,      \
                                    int64_t, const Temporary&, int64_t*, const BlockDenseShape&, const GpuContext&, \
                                    const int32_t*);                                                                \
  template void block_dense_round<V>(const DeviceCsrView<V>&, const DeviceCsrView<V>&, MergeRow<V>*,               \
                                     const int32_t*, int64_t, int32_t*, int32_t*, int64_t*, const BlockDenseShape&, \
                                     const GpuContext&);
SPARSETC_BINNED_BLOCK_DENSE(float)
SPARSETC_BINNED_BLOCK_DENSE(double)
#undef SPARSETC_BINNED_BLOCK_DENSE

}  // namespace sparsetc::detail::binned

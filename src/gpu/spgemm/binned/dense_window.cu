// Merge rows (bin 37) whose columns span a window too wide for shared memory but narrow enough for
// a slice of global memory (skewed graphs: rows of A meeting hub rows of B, results of thousands of
// columns spread over the whole width): instead of merging batch after batch into a long sorted
// level-2 sequence (each merge moving the sequence's tail), the row accumulates in a dense window.
//
// A persistent grid: block k owns window k (flags and values, `window` columns, L2-resident), zero
// between rows. A row's rows of B are added one after the other (a row of B has distinct columns,
// so its products land on distinct entries; a barrier between rows of B keeps each entry's fold in
// the order of A's entries, from zero: the canonical fold). Then tiles of 4096 columns are compacted
// in order (a thread reads 16 flags as one 16-byte load, a block scan numbers the touched ones) into
// the row's region, the window being cleared as it is read. A result longer than the region: the
// window is cleared, the row marked waiting and sent to the growth step with needed = its length.
#include <algorithm>

#include "gpu/device_properties.hpp"
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
constexpr int kTileItems = 16;                       // flags per thread per compaction tile
constexpr int kTile = kThreads * kTileItems;         // 4096 columns
constexpr int kMinRunLength = 8;                     // average products per row of B to use a window
constexpr size_t kScratchBytes = size_t(256) << 20;  // all windows together

template <typename V>
__global__ void __launch_bounds__(kThreads)
    window_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, MergeRow<V>* states, const int32_t* __restrict__ list,
                  int64_t n, int32_t* __restrict__ overflow, int32_t* __restrict__ overflow_count,
                  int64_t* __restrict__ count, uint8_t* flags_base, V* vals_base, int64_t window, int64_t narrowest) {
  using Scan = cubns::BlockScan<int64_t, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int64_t run_b[kThreads];
  __shared__ int32_t run_length[kThreads];
  __shared__ V run_a[kThreads];
  __shared__ ColumnSpan window_span;
  uint8_t* touched = flags_base + int64_t(blockIdx.x) * window;
  V* acc = vals_base + int64_t(blockIdx.x) * window;
  const int tid = threadIdx.x;

  for (int64_t item = blockIdx.x; item < n; item += gridDim.x) {
    const int32_t index = list[item];
    MergeRow<V>& state = states[index];
    const int64_t row = state.row, a_pos = state.a_pos, a_end = __ldg(a.row_ptr + row + 1);
    const bool fresh = state.length == 0 && state.b_off == 0 && a_pos == __ldg(a.row_ptr + row) && a_pos < a_end;
    if (!fresh) continue;  // the same for every thread
    const ColumnSpan span = block_column_span(a, b, a_pos, a_end, window_span);
    const int32_t first_col = span.lo;
    const int64_t width = span.width();
    if (width <= narrowest || width > window || (a_end - a_pos) * kMinRunLength > state.bound) continue;

    // Accumulate, one row of B after the other.
    for (int64_t e0 = a_pos; e0 < a_end; e0 += kThreads) {
      const int64_t e = e0 + tid;
      if (e < a_end) {
        int64_t bs, be;
        row_of_b(b, __ldg(a.col_idx + e), bs, be);
        run_b[tid] = bs;
        run_length[tid] = int32_t(be - bs);
        run_a[tid] = __ldg(a.values + e);
      }
      __syncthreads();
      const int entries = int(a_end - e0 < kThreads ? a_end - e0 : kThreads);
      for (int r = 0; r < entries; ++r) {
        const int64_t bs = run_b[r];
        const int length = run_length[r];
        const V av = run_a[r];
        for (int q = tid; q < length; q += kThreads) {
          const int64_t c = int64_t(__ldg(b.col_idx + bs + q)) - first_col;
          acc[c] = sum(acc[c], product(av, __ldg(b.values + bs + q)));
          touched[c] = 1;
        }
        __syncthreads();
      }
    }

    // Count, then write and clear (or only clear when the region is too small), tile by tile.
    int64_t total = 0;
    for (int64_t t0 = 0; t0 < width; t0 += kTile) {
      const uint4 f = *reinterpret_cast<const uint4*>(touched + t0 + tid * kTileItems);
      const uint32_t w[4] = {f.x, f.y, f.z, f.w};
      int64_t mine = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) mine += __popc(w[k] & 0x01010101u);
      int64_t tile_total;
      Scan(scan).ExclusiveSum(mine, mine, tile_total);
      __syncthreads();
      total += tile_total;
    }
    const bool fits = total <= state.capacity;
    int64_t base = 0;
    for (int64_t t0 = 0; t0 < width; t0 += kTile) {
      const int64_t first = t0 + tid * kTileItems;
      uint4* flag_words = reinterpret_cast<uint4*>(touched + first);
      const uint4 f = *flag_words;
      const uint32_t w[4] = {f.x, f.y, f.z, f.w};
      int64_t mine = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) mine += __popc(w[k] & 0x01010101u);
      int64_t position, tile_total;
      Scan(scan).ExclusiveSum(mine, position, tile_total);
      position += base;
      if (mine > 0) {
#pragma unroll
        for (int k = 0; k < kTileItems; ++k) {
          if ((w[k / 4] >> (8 * (k % 4))) & 1u) {
            if (fits) {
              state.cols[position] = first_col + int32_t(first + k);
              state.vals[position] = acc[first + k];
              ++position;
            }
            acc[first + k] = V(0);
          }
        }
        *flag_words = make_uint4(0, 0, 0, 0);
      }
      base += tile_total;
      __syncthreads();
    }
    if (tid == 0) {
      if (fits) {
        state.a_pos = a_end;
        state.length = total;
        count[row] = total;
      } else {
        state.needed = total;
        state.waiting = 1;
        overflow[atomicAdd(overflow_count, 1)] = index;
      }
    }
    __syncthreads();
  }
}

}  // namespace

template <typename V>
WindowScratch<V> make_window_scratch(int64_t merge_rows, int64_t cols, const GpuContext& context) {
  WindowScratch<V> scratch;
  scratch.blocks = std::min<int64_t>(merge_rows, int64_t(current_device_sm_count()) * 4);
  if (scratch.blocks <= 0) return scratch;
  const int64_t per_block = int64_t(kScratchBytes / size_t(scratch.blocks) / (1 + sizeof(V))) / kTile * kTile;
  const int64_t needed = (cols + kTile - 1) / kTile * kTile;
  scratch.window = std::min(per_block, needed);
  if (scratch.window < 2 * kTile) {  // not worth it
    scratch.window = 0;
    return scratch;
  }
  scratch.flags = gpuconv::buffer_of<uint8_t>(scratch.blocks * scratch.window, context);
  scratch.vals = gpuconv::buffer_of<V>(scratch.blocks * scratch.window, context);
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(scratch.flags.data(), 0, scratch.flags.size(), context.stream));
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(scratch.vals.data(), 0, scratch.vals.size(), context.stream));
  return scratch;
}

template <typename V>
void window_round(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, MergeRow<V>* states, const int32_t* list,
                  int64_t n, int32_t* overflow, int32_t* overflow_count, int64_t* count, WindowScratch<V>& scratch,
                  const GpuContext& context) {
  if (scratch.window == 0 || n <= 0) return;
  // Narrower rows stay with the merge kernel (its shared-memory window or the merge path).
  const int64_t narrowest = merge_dense_columns(sizeof(V));
  window_kernel<V><<<unsigned(std::min<int64_t>(n, scratch.blocks)), kThreads, 0, context.stream>>>(
      a, b, states, list, n, overflow, overflow_count, count, scratch.flags.template as<uint8_t>(),
      scratch.vals.template as<V>(), scratch.window, narrowest);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

#define SPARSETC_BINNED_WINDOW(V)                                                                                 \
  template WindowScratch<V> make_window_scratch<V>(int64_t, int64_t, const GpuContext&);                          \
  template void window_round<V>(const DeviceCsrView<V>&, const DeviceCsrView<V>&, MergeRow<V>*, const int32_t*,   \
                                int64_t, int32_t*, int32_t*, int64_t*, WindowScratch<V>&, const GpuContext&);
SPARSETC_BINNED_WINDOW(float)
SPARSETC_BINNED_WINDOW(double)
#undef SPARSETC_BINNED_WINDOW

}  // namespace sparsetc::detail::binned

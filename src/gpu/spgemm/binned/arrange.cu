// Stage 4 (paper, section 4.1, "arranging data"): the rows of a panel from C~ (and from the merge
// rows' regions) into the exact arrays, at the offsets of the scan of the final counts. Bins 1..36
// by groups of lanes a row when rows are short, else entry by entry along the merge path (bin 1's
// single product is computed here); one block per merge row.
#include <algorithm>

#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;

// A bin-1 row's one entry: the single product of the one entry of A that meets a non-empty row
// of B, written at position j.
template <typename V>
__device__ __forceinline__ void write_single_product(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t i,
                                                     int64_t j, int32_t* cols, V* vals) {
  for (int64_t p = __ldg(a.row_ptr + i), end = __ldg(a.row_ptr + i + 1); p < end; ++p) {
    int64_t bs, be;
    row_of_b(b, __ldg(a.col_idx + p), bs, be);
    if (be == bs) continue;
    cols[j] = __ldg(b.col_idx + bs);
    vals[j] = sum(V(0), product(__ldg(a.values + p), __ldg(b.values + bs)));
    return;
  }
}

// Entry j of the piece, in row `local` of the panel: copied from C~ (bins 2..36), or the single
// product of a bin-1 row; merge rows are copied by their own kernel.
template <typename V>
struct ArrangeEntry {
  DeviceCsrView<V> a, b;
  const uint8_t* bin;
  Temporary t;
  const int64_t* piece_ptr;
  int32_t* cols;
  V* vals;
  __device__ void operator()(int64_t j, int64_t local) const {
    const int64_t i = t.r0 + local;
    const int b_i = bin[i];
    if (b_i == kMergeBin) return;
    if (b_i == 1) {
      write_single_product(a, b, i, j, cols, vals);
      return;
    }
    const int64_t from = t.cap_scan[i] - t.cap_scan[t.r0] + (j - piece_ptr[local]);
    cols[j] = t.cols[from];
    vals[j] = static_cast<const V*>(t.vals)[from];
  }
};

// Rows of the panel by groups of LANES lanes, kRowsPerGroup consecutive rows a group at a time
// (their offsets loaded together, then their first LANES entries, so a group has that many copies
// in flight): a group copies its rows' entries from C~ (bins 2..36) LANES consecutive entries per
// step, coalesced without a merge-path search per entry (H200, 2D Poisson, 13.6M entries: 128 us
// that way, plus its corner kernel), or computes the single product of a bin-1 row; merge rows
// are copied by their own kernel. LANES is about the panel's mean row length.
constexpr int kRowsPerGroup = 4;
constexpr int64_t kWarpCopy = 256;  // a row this long is copied by the whole warp
template <typename V, int LANES>
__global__ void __launch_bounds__(kThreads)
    arrange_rows_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const uint8_t* __restrict__ bin, Temporary t,
                        int64_t rows, const int64_t* __restrict__ piece_ptr, int32_t* __restrict__ cols,
                        V* __restrict__ vals) {
  constexpr int kWarpRows = 32 / LANES * kRowsPerGroup;
  const int lane = threadIdx.x & 31, member = lane % LANES;
  const auto* t_vals = static_cast<const V*>(t.vals);
  const int64_t warps = int64_t(gridDim.x) * (kThreads / 32);
  // Warp-uniform trip count: the warp takes over its groups' long rows (an ESC row of 8192 entries
  // would keep a group of 4 lanes busy for 2048 steps).
  for (int64_t first = (int64_t(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32) * kWarpRows; first < rows;
       first += warps * kWarpRows) {
    const int64_t local0 = first + (lane / LANES) * kRowsPerGroup;
    int64_t out[kRowsPerGroup], length[kRowsPerGroup], from[kRowsPerGroup];
    int kind[kRowsPerGroup];  // 0: copy from C~ (or nothing), 1: one product, 2: merge row or none
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r) {
      const int64_t local = local0 + r, i = t.r0 + local;
      const int b_i = local < rows ? int(bin[i]) : kMergeBin;
      kind[r] = b_i == kMergeBin ? 2 : b_i == 1 ? 1 : 0;
      out[r] = length[r] = from[r] = 0;
      if (kind[r] != 2) {
        out[r] = piece_ptr[local];
        length[r] = piece_ptr[local + 1] - out[r];
        from[r] = t.cap_scan[i] - t.cap_scan[t.r0];
      }
    }
    int32_t c[kRowsPerGroup];
    V v[kRowsPerGroup];
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r)
      if (kind[r] == 0 && member < length[r] && length[r] <= kWarpCopy) {
        c[r] = t.cols[from[r] + member];
        v[r] = t_vals[from[r] + member];
      }
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r) {
      if (kind[r] == 0 && length[r] <= kWarpCopy) {
        if (member < length[r]) {
          cols[out[r] + member] = c[r];
          vals[out[r] + member] = v[r];
        }
        for (int64_t q = member + LANES; q < length[r]; q += LANES) {
          cols[out[r] + q] = t.cols[from[r] + q];
          vals[out[r] + q] = t_vals[from[r] + q];
        }
      } else if (kind[r] == 1 && member == 0) {
        write_single_product(a, b, t.r0 + local0 + r, out[r], cols, vals);
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r) {
      const bool long_row = member == 0 && kind[r] == 0 && length[r] > kWarpCopy;
      for (unsigned left = __ballot_sync(kFullMask, long_row); left != 0; left &= left - 1) {
        const int owner = __ffs(left) - 1;
        const int64_t o = __shfl_sync(kFullMask, out[r], owner), n = __shfl_sync(kFullMask, length[r], owner),
                      f = __shfl_sync(kFullMask, from[r], owner);
        for (int64_t q = lane; q < n; q += 32) {
          cols[o + q] = t.cols[f + q];
          vals[o + q] = t_vals[f + q];
        }
      }
    }
  }
}

template <typename V, int LANES>
void launch_arrange_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const uint8_t* bin,
                         const Temporary& t, int64_t rows, const int64_t* piece_ptr, int32_t* cols, V* vals,
                         const GpuContext& context) {
  const int64_t per_block = kThreads / LANES * kRowsPerGroup;
  const int64_t blocks = std::min<int64_t>((rows + per_block - 1) / per_block, 65536 * 2);
  arrange_rows_kernel<V, LANES><<<unsigned(std::max<int64_t>(blocks, 1)), kThreads, 0, context.stream>>>(
      a, b, bin, t, rows, piece_ptr, cols, vals);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename V>
__global__ void __launch_bounds__(kThreads)
    arrange_merge_kernel(const MergeRow<V>* __restrict__ states, int64_t r0, const int64_t* __restrict__ piece_ptr,
                         int32_t* __restrict__ cols, V* __restrict__ vals) {
  const MergeRow<V>& s = states[blockIdx.x];
  const int64_t out = piece_ptr[s.row - r0];
  for (int64_t q = threadIdx.x; q < s.length; q += kThreads) {
    cols[out + q] = s.cols[q];
    vals[out + q] = s.vals[q];
  }
}

}  // namespace

void exclusive_scan_counts(const int64_t* count, int64_t* out, int64_t n, const GpuContext& context) {
  gpuconv::exclusive_scan_total(count, out, n, context);
}

template <typename V>
void arrange(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const uint8_t* bin, const Temporary& t, int64_t r1,
             const int64_t* piece_ptr, int64_t piece_nnz, const MergeRow<V>* states, int64_t merge_rows, int32_t* cols,
             V* vals, const GpuContext& context) {
  // Short rows by groups of lanes (a warp a row up to 32 entries on average: rgg_n_2_15_s0, 28 a
  // row, spent 8 us in the merge path's corner search and 16 us copying); longer ones entry by
  // entry along the merge path of (row ends, entries), which balances rows of very different
  // lengths (wiki-Vote, 220 entries a row on average: 69 against 94 us the other way).
  const int64_t rows = r1 - t.r0;
  if (piece_nnz > 0) {
    const int64_t mean = (piece_nnz + rows - 1) / rows;
    if (mean <= 4) launch_arrange_rows<V, 4>(a, b, bin, t, rows, piece_ptr, cols, vals, context);
    else if (mean <= 8) launch_arrange_rows<V, 8>(a, b, bin, t, rows, piece_ptr, cols, vals, context);
    else if (mean <= 16) launch_arrange_rows<V, 16>(a, b, bin, t, rows, piece_ptr, cols, vals, context);
    else if (mean <= 32) launch_arrange_rows<V, 32>(a, b, bin, t, rows, piece_ptr, cols, vals, context);
    else
      gpuconv::for_each_entry_with_row(piece_ptr, rows, piece_nnz, context,
                                       ArrangeEntry<V>{a, b, bin, t, piece_ptr, cols, vals});
  }
  if (merge_rows > 0) {
    arrange_merge_kernel<V><<<unsigned(merge_rows), kThreads, 0, context.stream>>>(states, t.r0, piece_ptr, cols, vals);
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
}

template void arrange<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const uint8_t*, const Temporary&,
                             int64_t, const int64_t*, int64_t, const MergeRow<float>*, int64_t, int32_t*, float*,
                             const GpuContext&);
template void arrange<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const uint8_t*,
                              const Temporary&, int64_t, const int64_t*, int64_t, const MergeRow<double>*, int64_t,
                              int32_t*, double*, const GpuContext&);

}  // namespace sparsetc::detail::binned

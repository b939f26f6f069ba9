// Stage 4 (paper, section 4.1, "arranging data"): the rows of a panel from C~ (and from the merge
// rows' regions) into the exact arrays, at the offsets of the scan of the final counts. Bins 1..36
// go entry by entry along the merge path of (row ends, entries), so short and long rows cost the
// same per thread and the copies are coalesced (bin 1's single product is computed here); one
// block per merge row.
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;

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
    if (b_i == 1) {  // the one entry of A that meets a non-empty row of B
      for (int64_t p = __ldg(a.row_ptr + i), end = __ldg(a.row_ptr + i + 1); p < end; ++p) {
        int64_t bs, be;
        row_of_b(b, __ldg(a.col_idx + p), bs, be);
        if (be == bs) continue;
        cols[j] = __ldg(b.col_idx + bs);
        vals[j] = sum(V(0), product(__ldg(a.values + p), __ldg(b.values + bs)));
        return;
      }
      return;
    }
    const int64_t from = t.cap_scan[i] - t.cap_scan[t.r0] + (j - piece_ptr[local]);
    cols[j] = t.cols[from];
    vals[j] = static_cast<const V*>(t.vals)[from];
  }
};

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
  gpuconv::for_each_entry_with_row(piece_ptr, r1 - t.r0, piece_nnz, context,
                                   ArrangeEntry<V>{a, b, bin, t, piece_ptr, cols, vals});
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

// CSR <-> CSC on the device: the transpose of a compressed structure.
//
// The entries are sorted stably by inner index (digit_sort.cuh: wide-digit LSD passes, the first
// reading the compressed arrays as they are, the last writing the output lists), so every output
// list comes out sorted by outer index: deterministic, no atomics on positions. The last pass also
// counts each list's entries (one atomic per run of equal index in a staged tile), and out_ptr is
// the scan of those counts. Values move as raw words, so any value type transposes exactly.
// Bytes per entry (two passes, up to 4M lists; double values): the index read twice per pass,
// 12 + 16 bytes moved by the first pass, 16 + 12 by the second. (Measured on an H200: the former
// CUB radix sort with a gather took 1.1-1.4x cuSPARSE's csr2csc time; see docs/performance.md.)
#include <cstdint>
#include <type_traits>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/digit_sort.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int64_t kMaxEntries = (int64_t(1) << 33) - 1;

template <typename PO>
__global__ void __launch_bounds__(kThreads) offsets_kernel(const int64_t* __restrict__ in, PO* __restrict__ out, int64_t n,
                                                           int64_t base) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    out[i] = PO(in[i] + base);
}

// The transpose with the caller's offset type O on input, PO on output, value words W; in_base
// is subtracted from the input offsets and indices, out_base added to the output ones.
template <typename O, typename W, typename PO>
void transpose_words(int64_t outer, int64_t inner, int64_t nnz, const O* ptr, const int32_t* idx, const W* val,
                     int64_t in_base, PO* out_ptr, int32_t* out_idx, W* out_val, int64_t out_base,
                     const GpuContext& context, int max_digit_bits = kMaxDigitBits) {
  require(outer <= kMaxInt32 && inner <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW,
          "GPU transpose: dimensions ", outer, " x ", inner, " exceed int32 indices");
  require(nnz <= kMaxEntries, SPARSETC_STATUS_SIZE_OVERFLOW, "GPU transpose: ", nnz, " entries exceed 2^33");
  const bool canonical = std::is_same_v<PO, int64_t> && out_base == 0;
  DeviceBuffer scanned = canonical ? DeviceBuffer() : buffer_of<int64_t>(inner + 1, context);
  int64_t* list_starts = canonical ? reinterpret_cast<int64_t*>(out_ptr) : scanned.as<int64_t>();
  DeviceBuffer counts = buffer_of<uint32_t>(inner, context);
  zero(counts.as<uint32_t>(), inner, context.stream);
  SortSink<W> sink;
  sink.row = reinterpret_cast<uint32_t*>(out_idx);
  sink.val = out_val;
  sink.row_base = uint32_t(out_base);
  sink.col_counts = counts.as<uint32_t>();
  sort_entries(CsrSource<O, W>{ptr, idx, val, outer, in_base}, nnz, 1, bits_for(uint64_t(inner)), sink, context,
               max_digit_bits);
  exclusive_scan_total(counts.as<const uint32_t>(), list_starts, inner, context);
  if (!canonical) {
    offsets_kernel<PO><<<ctas_for(inner + 1, int64_t(kThreads) * 8), kThreads, 0, context.stream>>>(
        list_starts, out_ptr, inner + 1, out_base);
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
}

template <typename O, typename W>
void transpose_user_typed(int64_t outer, int64_t inner, int64_t nnz, const void* ptr, const int32_t* idx,
                          const void* val, int64_t in_base, sparsetc_index_type_t out_ptr_type, int64_t out_base,
                          DeviceBuffer& out_ptr, DeviceBuffer& out_idx, DeviceBuffer& out_val,
                          const GpuContext& context) {
  out_idx = buffer_of<int32_t>(nnz, context);
  out_val = buffer_of<W>(nnz, context);
  const O* p = static_cast<const O*>(ptr);
  const W* v = static_cast<const W*>(val);
  if (out_ptr_type == SPARSETC_INDEX_32) {
    out_ptr = buffer_of<int32_t>(inner + 1, context);
    transpose_words<O, W, int32_t>(outer, inner, nnz, p, idx, v, in_base, out_ptr.as<int32_t>(),
                                   out_idx.as<int32_t>(), out_val.as<W>(), out_base, context);
  } else {
    out_ptr = buffer_of<int64_t>(inner + 1, context);
    transpose_words<O, W, int64_t>(outer, inner, nnz, p, idx, v, in_base, out_ptr.as<int64_t>(),
                                   out_idx.as<int32_t>(), out_val.as<W>(), out_base, context);
  }
}

template <typename O>
void transpose_user_offsets(int64_t outer, int64_t inner, int64_t nnz, const void* ptr, const int32_t* idx,
                            const void* val, size_t value_size, int64_t in_base, sparsetc_index_type_t out_ptr_type,
                            int64_t out_base, DeviceBuffer& out_ptr, DeviceBuffer& out_idx, DeviceBuffer& out_val,
                            const GpuContext& context) {
  switch (value_size) {
    case 2:
      return transpose_user_typed<O, uint16_t>(outer, inner, nnz, ptr, idx, val, in_base, out_ptr_type, out_base,
                                               out_ptr, out_idx, out_val, context);
    case 4:
      return transpose_user_typed<O, uint32_t>(outer, inner, nnz, ptr, idx, val, in_base, out_ptr_type, out_base,
                                               out_ptr, out_idx, out_val, context);
    default:
      require(value_size == 8, SPARSETC_STATUS_INVALID_VALUE, "GPU transpose: values of ", value_size, " bytes");
      return transpose_user_typed<O, unsigned long long>(outer, inner, nnz, ptr, idx, val, in_base, out_ptr_type,
                                                         out_base, out_ptr, out_idx, out_val, context);
  }
}

}  // namespace

template <typename V>
void transpose_compressed(int64_t outer, int64_t inner, int64_t nnz, const int64_t* ptr, const int32_t* idx,
                          const V* val, DeviceBuffer& out_ptr, DeviceBuffer& out_idx, DeviceBuffer& out_val,
                          const GpuContext& context, int max_digit_bits) {
  using W = word_t<V>;
  require(outer <= kMaxInt32 && inner <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW,
          "GPU transpose: dimensions ", outer, " x ", inner, " exceed int32 indices");
  require(nnz <= kMaxEntries, SPARSETC_STATUS_SIZE_OVERFLOW, "GPU transpose: ", nnz, " entries exceed 2^33");
  out_ptr = buffer_of<int64_t>(inner + 1, context);
  out_idx = buffer_of<int32_t>(nnz, context);
  out_val = buffer_of<V>(nnz, context);
  transpose_words<int64_t, W, int64_t>(outer, inner, nnz, ptr, idx, reinterpret_cast<const W*>(val),
                                       0, out_ptr.as<int64_t>(), out_idx.as<int32_t>(), out_val.as<W>(), 0, context,
                                       max_digit_bits);
}

void transpose_user_arrays(int64_t outer, int64_t inner, int64_t nnz, const void* ptr, sparsetc_index_type_t ptr_type,
                           const int32_t* idx, int64_t in_base, const void* val, size_t value_size,
                           sparsetc_index_type_t out_ptr_type, int64_t out_base, DeviceBuffer& out_ptr,
                           DeviceBuffer& out_idx, DeviceBuffer& out_val, const GpuContext& context) {
  if (ptr_type == SPARSETC_INDEX_32)
    transpose_user_offsets<int32_t>(outer, inner, nnz, ptr, idx, val, value_size, in_base, out_ptr_type, out_base,
                                    out_ptr, out_idx, out_val, context);
  else
    transpose_user_offsets<int64_t>(outer, inner, nnz, ptr, idx, val, value_size, in_base, out_ptr_type, out_base,
                                    out_ptr, out_idx, out_val, context);
}

template void transpose_compressed<float>(int64_t, int64_t, int64_t, const int64_t*, const int32_t*, const float*,
                                          DeviceBuffer&, DeviceBuffer&, DeviceBuffer&, const GpuContext&, int);
template void transpose_compressed<double>(int64_t, int64_t, int64_t, const int64_t*, const int32_t*, const double*,
                                           DeviceBuffer&, DeviceBuffer&, DeviceBuffer&, const GpuContext&, int);

}  // namespace gpuconv

template <typename V>
DeviceCsc<V> gpu_csr_to_csc(const DeviceCsrView<V>& csr, const GpuContext& context) {
  DeviceCsc<V> csc;
  csc.rows = csr.rows;
  csc.cols = csr.cols;
  csc.nnz = csr.nnz;
  gpuconv::transpose_compressed(csr.rows, csr.cols, csr.nnz, csr.row_ptr, csr.col_idx, csr.values, csc.col_ptr,
                                csc.row_idx, csc.values, context);
  return csc;
}

template <typename V>
DeviceCsr<V> gpu_csc_to_csr(const DeviceCscView<V>& csc, const GpuContext& context) {
  DeviceCsr<V> csr;
  csr.rows = csc.rows;
  csr.cols = csc.cols;
  csr.nnz = csc.nnz;
  gpuconv::transpose_compressed(csc.cols, csc.rows, csc.nnz, csc.col_ptr, csc.row_idx, csc.values, csr.row_ptr,
                                csr.col_idx, csr.values, context);
  return csr;
}

template DeviceCsc<float> gpu_csr_to_csc<float>(const DeviceCsrView<float>&, const GpuContext&);
template DeviceCsc<double> gpu_csr_to_csc<double>(const DeviceCsrView<double>&, const GpuContext&);
template DeviceCsr<float> gpu_csc_to_csr<float>(const DeviceCscView<float>&, const GpuContext&);
template DeviceCsr<double> gpu_csc_to_csr<double>(const DeviceCscView<double>&, const GpuContext&);

}  // namespace sparsetc::detail

// CSR <-> CSC on the device: the transpose of a compressed structure.
//
// Every output list comes out sorted by outer index, deterministically. Values move as raw words,
// so any value type transposes exactly. Square structures are probed (one read-back); symmetric
// ones whose mirror lists lie near take mirror_transpose.cuh (one pass that gathers each value from
// its mirror entry; one read-back of its verdict) unless they are narrow bands, which take
// local_transpose.cuh (a count, then one read and one write; one read-back of its verdict) as
// other structures within a narrow band do. The others are sorted stably by inner index (no
// atomics on positions), by one of two sorts chosen by the number of lists:
//  - up to 2048 lists (11-bit keys): one pass of digit_sort.cuh, straight from the compressed
//    arrays into the output lists; the pass counts each list's entries (one atomic per run of
//    equal index in a staged tile) and out_ptr is the scan of those counts;
//  - more lists: a stable cub::DeviceRadixSort by inner index (only the bits the inner dimension
//    needs: 3 passes up to 2^24) of the entries, each carrying (outer index << 33 | entry number);
//    out_ptr[c] is a binary search for c in the sorted indices; then one pass writes the outer
//    indices and gathers the values.
// (Measured on an H200 with 13-14M entries and 0.5-1M lists: two passes of 10-bit digits of
// digit_sort.cuh took 0.84-1.0 ms against 0.68-0.81 ms for the radix sort, whose onesweep passes
// keep more entries in flight; carrying a 4-byte entry number and gathering the outer index from
// a per-entry array was 5-10% faster on banded matrices but 10-25% slower on uniform and R-MAT
// ones, whose gathers are random.)
#include <cstdint>
#include <type_traits>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/digit_sort.cuh"
#include "gpu/convert/local_transpose.cuh"
#include "gpu/convert/mirror_transpose.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int64_t kMaxEntries = (int64_t(1) << 33) - 1;
constexpr int kEntryBits = 33;
constexpr uint64_t kEntryMask = (uint64_t(1) << kEntryBits) - 1;

template <typename PO>
__global__ void __launch_bounds__(kThreads)
    offsets_kernel(const int64_t* __restrict__ in, PO* __restrict__ out, int64_t n, int64_t base) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    out[i] = PO(in[i] + base);
}

template <typename O>
struct ZeroBasedOffsets {  // the caller's offsets as int64 from 0
  const O* in;
  int64_t base;
  int64_t* out;
  __device__ void operator()(int64_t i) const { out[i] = int64_t(in[i]) - base; }
};

struct Carry {
  uint64_t* carry;
  __device__ void operator()(int64_t j, int64_t i) const { carry[j] = (uint64_t(i) << kEntryBits) | uint64_t(j); }
};

template <typename PO>
struct ListStarts {  // out_ptr[c] = base + the first position of key c + key_base in the sorted keys
  const uint32_t* sorted;
  int64_t nnz;
  uint32_t key_base;
  int64_t base;
  PO* out_ptr;
  __device__ void operator()(int64_t c) const {
    out_ptr[c] = PO(lower_bound(sorted, 0, nnz, uint32_t(c) + key_base) + base);
  }
};

template <typename W>
struct Gather {
  const uint64_t* carry;
  const W* val;
  uint32_t base;
  int32_t* out_idx;
  W* out_val;
  __device__ void operator()(int64_t p) const {
    const uint64_t c = carry[p];
    out_idx[p] = int32_t(uint32_t(c >> kEntryBits) + base);
    out_val[p] = val[c & kEntryMask];
  }
};

// The transpose with the caller's offset type O on input, PO on output, value words W; in_base
// is subtracted from the input offsets and indices, out_base added to the output ones.
template <typename O, typename W, typename PO>
void transpose_words(int64_t outer, int64_t inner, int64_t nnz, const O* ptr, const int32_t* idx, const W* val,
                     int64_t in_base, PO* out_ptr, int32_t* out_idx, W* out_val, int64_t out_base,
                     const GpuContext& context, const TransposeOptions& options = {}) {
  const int engine_digit_bits = options.digit_bits;
  if (options.took_mirror) *options.took_mirror = false;
  if (options.took_local) *options.took_local = false;
  require(outer <= kMaxInt32 && inner <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW,
          "GPU transpose: dimensions ", outer, " x ", inner, " exceed int32 indices");
  require(nnz <= kMaxEntries, SPARSETC_STATUS_SIZE_OVERFLOW, "GPU transpose: ", nnz, " entries exceed 2^33");
  const int key_bits = bits_for(uint64_t(inner));
  if (nnz == 0 || key_bits <= kMaxDigitBits || engine_digit_bits > 0) {
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
    sort_entries(CsrSource<O, W>{ptr, idx, val, outer, in_base}, nnz, FastDivider(1), key_bits, sink, context,
                 engine_digit_bits > 0 ? engine_digit_bits : kMaxDigitBits);
    exclusive_scan_total(counts.as<const uint32_t>(), list_starts, inner, context);
    if (!canonical) {
      offsets_kernel<PO><<<ctas_for(inner + 1, int64_t(kThreads) * 8), kThreads, 0, context.stream>>>(
          list_starts, out_ptr, inner + 1, out_base);
      SPARSETC_CUDA_CHECK_LAUNCH();
    }
    return;
  }
  // The mirror pass and the sort's merge-path walk need zero-based int64 offsets.
  DeviceBuffer converted;
  const int64_t* row_ptr = nullptr;
  auto zero_based_offsets = [&] {
    if (row_ptr) return;
    row_ptr = reinterpret_cast<const int64_t*>(ptr);
    if (!std::is_same_v<O, int64_t> || in_base != 0) {
      converted = buffer_of<int64_t>(outer + 1, context);
      for_each_index(outer + 1, context, ZeroBasedOffsets<O>{ptr, in_base, converted.as<int64_t>()});
      row_ptr = converted.as<const int64_t>();
    }
  };
  // Square structures are probed first (one read-back): a symmetric one whose mirror lists lie
  // near takes the mirror transpose, unless the local transpose could take it (narrow bands,
  // where it is faster: 0.20 against 0.26 ms on band:1000000:6, H200); a list too wide for the
  // local transpose spares its attempt (35-45 us of a refusal: the stencils, scattered matrices).
  bool try_local = options.local, try_mirror = false;
  StructureProbe probe;
  if (options.mirror && outer == inner && nnz >= std::max<int64_t>(options.mirror_options.min_entries, 1)) {
    zero_based_offsets();
    probe = probe_structure(outer, nnz, row_ptr, idx, in_base, sizeof(W), context);
    try_mirror = probe.symmetric && probe.near;
    try_local = try_local && local_transpose_admits_span(probe.widest, nnz, inner, options.local_options);
  }
  auto mirror = [&] {
    const bool mirrored = transpose_mirror<W, PO>(outer, nnz, row_ptr, idx, val, in_base, out_ptr, out_idx, out_val,
                                                  out_base, probe, context);
    if (options.took_mirror) *options.took_mirror = mirrored;
    return mirrored;
  };
  if (try_mirror && !try_local && mirror()) return;
  const bool local = try_local && transpose_local<O, W, PO>(outer, inner, nnz, ptr, idx, val, in_base, out_ptr,
                                                            out_idx, out_val, out_base, context,
                                                            options.local_options);
  if (options.took_local) *options.took_local = local;
  if (local) return;
  if (try_mirror && try_local && mirror()) return;  // the local transpose refused it
  zero_based_offsets();
  DeviceBuffer carry = buffer_of<uint64_t>(nnz, context);
  for_each_entry_with_row(row_ptr, outer, nnz, context, Carry{carry.as<uint64_t>()});
  converted = DeviceBuffer();
  DeviceBuffer sorted_idx = buffer_of<uint32_t>(nnz, context);
  DeviceBuffer sorted_carry = buffer_of<uint64_t>(nnz, context);
  const uint32_t* keys = reinterpret_cast<const uint32_t*>(idx);  // non-negative: same order, base included
  run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceRadixSort::SortPairs(temp, bytes, keys, sorted_idx.as<uint32_t>(), carry.as<const uint64_t>(),
                                             sorted_carry.as<uint64_t>(), nnz, 0,
                                             bits_for(uint64_t(inner + in_base)), context.stream);
  });
  carry = DeviceBuffer();
  for_each_index(inner + 1, context,
                 ListStarts<PO>{sorted_idx.as<const uint32_t>(), nnz, uint32_t(in_base), out_base, out_ptr});
  for_each_index(nnz, context,
                 Gather<W>{sorted_carry.as<const uint64_t>(), val, uint32_t(out_base), out_idx, out_val});
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
                          const GpuContext& context, const TransposeOptions& options) {
  using W = word_t<V>;
  require(outer <= kMaxInt32 && inner <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW,
          "GPU transpose: dimensions ", outer, " x ", inner, " exceed int32 indices");
  require(nnz <= kMaxEntries, SPARSETC_STATUS_SIZE_OVERFLOW, "GPU transpose: ", nnz, " entries exceed 2^33");
  out_ptr = buffer_of<int64_t>(inner + 1, context);
  out_idx = buffer_of<int32_t>(nnz, context);
  out_val = buffer_of<V>(nnz, context);
  transpose_words<int64_t, W, int64_t>(outer, inner, nnz, ptr, idx, reinterpret_cast<const W*>(val),
                                       0, out_ptr.as<int64_t>(), out_idx.as<int32_t>(), out_val.as<W>(), 0, context,
                                       options);
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
                                          DeviceBuffer&, DeviceBuffer&, DeviceBuffer&, const GpuContext&,
                                          const TransposeOptions&);
template void transpose_compressed<double>(int64_t, int64_t, int64_t, const int64_t*, const int32_t*, const double*,
                                           DeviceBuffer&, DeviceBuffer&, DeviceBuffer&, const GpuContext&,
                                           const TransposeOptions&);

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

// CSR <-> CSC on the device: the transpose of a compressed structure.
//
// A stable LSD radix sort by inner index (cub::DeviceRadixSort, only the bits the inner dimension
// needs: 2 passes up to 65536, 3 up to 2^24) of the entries, each carrying (outer index << 33 |
// entry number) as its value; the input is in outer order and the sort is stable, so every output
// list comes out sorted by outer index, whatever the schedule: deterministic, no atomics, no hot
// spot on long lists. out_ptr[c] is a binary search for c in the sorted inner indices; then one
// pass writes the outer indices and gathers the values.
// Bytes: write the carried values (8 B/entry), the sort's passes (12 B read + 12 B written per
// entry and pass, plus its histogram pass), the gather (8 B read, one value gathered, 4 + sizeof(V)
// written). No read back. (Measured on an H200: carrying a 4-byte entry number instead and
// gathering the outer index from a per-entry array was 5-10% faster on banded matrices but 10-25%
// slower on uniform and R-MAT ones, whose gathers are random.)
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int kEntryBits = 33;
constexpr uint64_t kEntryMask = (uint64_t(1) << kEntryBits) - 1;

struct Carry {
  uint64_t* carry;
  __device__ void operator()(int64_t j, int64_t i) const { carry[j] = (uint64_t(i) << kEntryBits) | uint64_t(j); }
};


struct ListStarts {
  const uint32_t* sorted;
  int64_t nnz;
  int64_t* out_ptr;
  __device__ void operator()(int64_t c) const { out_ptr[c] = lower_bound(sorted, 0, nnz, uint32_t(c)); }
};

template <typename V>
struct Gather {
  const uint64_t* carry;
  const V* val;
  int32_t* out_idx;
  V* out_val;
  __device__ void operator()(int64_t p) const {
    const uint64_t c = carry[p];
    out_idx[p] = int32_t(c >> kEntryBits);
    out_val[p] = val[c & kEntryMask];
  }
};

}  // namespace

template <typename V>
void transpose_compressed(int64_t outer, int64_t inner, int64_t nnz, const int64_t* ptr, const int32_t* idx,
                          const V* val, DeviceBuffer& out_ptr, DeviceBuffer& out_idx, DeviceBuffer& out_val,
                          const GpuContext& context) {
  require(outer <= kMaxInt32 && inner <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW,
          "GPU transpose: dimensions ", outer, " x ", inner, " exceed int32 indices");
  require(nnz <= int64_t(kEntryMask), SPARSETC_STATUS_SIZE_OVERFLOW, "GPU transpose: ", nnz, " entries exceed 2^33");
  out_ptr = buffer_of<int64_t>(inner + 1, context);
  out_idx = buffer_of<int32_t>(nnz, context);
  out_val = buffer_of<V>(nnz, context);
  if (nnz == 0) {
    zero(out_ptr.as<int64_t>(), inner + 1, context.stream);
    return;
  }
  DeviceBuffer carry = buffer_of<uint64_t>(nnz, context);
  for_each_entry_with_row(ptr, outer, nnz, context, Carry{carry.as<uint64_t>()});
  DeviceBuffer sorted_idx = buffer_of<uint32_t>(nnz, context);
  DeviceBuffer sorted_carry = buffer_of<uint64_t>(nnz, context);
  const uint32_t* keys = reinterpret_cast<const uint32_t*>(idx);  // non-negative: same order
  const int end_bit = bits_for(uint64_t(inner));
  if (end_bit == 0) {  // one list
    copy_device_to_device(sorted_idx.data(), keys, size_t(nnz) * sizeof(uint32_t), context.stream);
    copy_device_to_device(sorted_carry.data(), carry.data(), size_t(nnz) * sizeof(uint64_t), context.stream);
  } else {
    run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceRadixSort::SortPairs(temp, bytes, keys, sorted_idx.as<uint32_t>(), carry.as<const uint64_t>(),
                                               sorted_carry.as<uint64_t>(), nnz, 0, end_bit, context.stream);
    });
  }
  carry = DeviceBuffer();
  for_each_index(inner + 1, context, ListStarts{sorted_idx.as<const uint32_t>(), nnz, out_ptr.as<int64_t>()});
  for_each_index(nnz, context,
                 Gather<V>{sorted_carry.as<const uint64_t>(), val, out_idx.as<int32_t>(), out_val.as<V>()});
}

template void transpose_compressed<float>(int64_t, int64_t, int64_t, const int64_t*, const int32_t*, const float*,
                                          DeviceBuffer&, DeviceBuffer&, DeviceBuffer&, const GpuContext&);
template void transpose_compressed<double>(int64_t, int64_t, int64_t, const int64_t*, const int32_t*, const double*,
                                           DeviceBuffer&, DeviceBuffer&, DeviceBuffer&, const GpuContext&);

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

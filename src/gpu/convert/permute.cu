// Row permutation (gather) on the device: row i of the result is row permutation[i].
//
// The new offsets are a scan of the gathered row lengths, and a merge-path walk over the new
// structure copies every entry (reads and writes coalesced along the rows, balanced whatever the
// lengths). The check runs alongside: each target row records its first position (atomicMin, one
// per row, no hot counter); the first position out of range and the first repeat are read back
// at the end (one sync) and reported as the host reports them (invalid rows are clamped in the
// meantime, so nothing reads out of bounds).
#include <cstdint>
#include <vector>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;

struct FirstPosition {
  const int64_t* perm;
  int64_t rows;
  ull* first;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p >= 0 && p < rows) atomicMin(first + p, ull(i));
  }
};

struct FindBad {  // [0]: the first position out of range, [1]: the first repeat
  const int64_t* perm;
  int64_t rows;
  const ull* first;
  ull* bad;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p < 0 || p >= rows) atomicMin(bad, ull(i));
    else if (first[p] != ull(i)) atomicMin(bad + 1, ull(i));
  }
};

// Rows outside [0, rows) read row 0 (the result is thrown away then: the check fails).
__device__ __forceinline__ int64_t valid_row(const int64_t* perm, int64_t i, int64_t rows) {
  const int64_t p = perm[i];
  return p >= 0 && p < rows ? p : 0;
}

struct RowLengths {
  const int64_t* perm;
  int64_t rows;
  const int64_t* row_ptr;
  int64_t* lengths;
  __device__ void operator()(int64_t i) const {
    const int64_t p = valid_row(perm, i, rows);
    lengths[i] = row_ptr[p + 1] - row_ptr[p];
  }
};

template <typename V>
struct CopyEntries {
  const int64_t* perm;
  int64_t rows;
  const int64_t* row_ptr;
  const int64_t* new_ptr;
  const int32_t* col_idx;
  const V* values;
  int32_t* out_col;
  V* out_val;
  __device__ void operator()(int64_t j, int64_t i) const {
    if (i >= rows) return;  // only when the permutation is invalid (then reported)
    const int64_t p = valid_row(perm, i, rows), offset = j - new_ptr[i];
    if (offset >= row_ptr[p + 1] - row_ptr[p]) return;  // likewise
    const int64_t src = row_ptr[p] + offset;
    out_col[j] = col_idx[src];
    out_val[j] = values[src];
  }
};

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const int64_t* d_permutation, const GpuContext& context) {
  using namespace gpuconv;
  const int64_t rows = csr.rows;
  require(d_permutation != nullptr || rows == 0, SPARSETC_STATUS_NULL_POINTER, "the permutation is NULL");
  DeviceCsr<V> out;
  out.rows = rows;
  out.cols = csr.cols;
  out.nnz = csr.nnz;
  out.row_ptr = buffer_of<int64_t>(rows + 1, context);
  out.col_idx = buffer_of<int32_t>(csr.nnz, context);
  out.values = buffer_of<V>(csr.nnz, context);
  // The check (the host's checks and messages: out of range first, then repeats) is enqueued
  // first and read back last, so the copy runs meanwhile.
  DeviceBuffer first = buffer_of<ull>(rows + 2, context);  // [rows], [rows + 1]: the first bad positions
  ull* f = first.as<ull>();
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(f, 0xff, size_t(rows + 2) * sizeof(ull), context.stream));
  for_each_index(rows, context, FirstPosition{d_permutation, rows, f});
  for_each_index(rows, context, FindBad{d_permutation, rows, f, f + rows});
  DeviceBuffer lengths = buffer_of<int64_t>(rows, context);
  for_each_index(rows, context, RowLengths{d_permutation, rows, csr.row_ptr, lengths.as<int64_t>()});
  exclusive_scan_total(lengths.as<const int64_t>(), out.row_ptr.template as<int64_t>(), rows, context);
  for_each_entry_with_row(out.row_ptr.template as<const int64_t>(), rows, csr.nnz, context,
                          CopyEntries<V>{d_permutation, rows, csr.row_ptr, out.row_ptr.template as<const int64_t>(),
                                         csr.col_idx, csr.values, out.col_idx.template as<int32_t>(),
                                         out.values.template as<V>()});
  ull bad[2];
  copy_device_to_host(bad, f + rows, sizeof bad, context.stream);
  if (bad[0] != ~0ull) {
    const int64_t i = int64_t(bad[0]), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is out of range [0, ", rows,
         ")");
  }
  if (bad[1] != ~0ull) {
    const int64_t i = int64_t(bad[1]), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is repeated (also permutation[",
         int64_t(read_back(f + p, context.stream)), "])");
  }
  return out;
}

template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const std::vector<int64_t>& permutation,
                              const GpuContext& context) {
  require(int64_t(permutation.size()) == csr.rows, SPARSETC_STATUS_INVALID_VALUE, "permute_rows: the permutation has ",
          permutation.size(), " entries for ", csr.rows, " rows (wrong length)");
  DeviceBuffer d_perm = gpuconv::buffer_of<int64_t>(csr.rows, context);
  copy_host_to_device(d_perm.data(), permutation.data(), permutation.size() * sizeof(int64_t), context.stream);
  return gpu_permute_rows(csr, d_perm.as<const int64_t>(), context);
}

template DeviceCsr<float> gpu_permute_rows<float>(const DeviceCsrView<float>&, const int64_t*, const GpuContext&);
template DeviceCsr<double> gpu_permute_rows<double>(const DeviceCsrView<double>&, const int64_t*, const GpuContext&);
template DeviceCsr<float> gpu_permute_rows<float>(const DeviceCsrView<float>&, const std::vector<int64_t>&,
                                                  const GpuContext&);
template DeviceCsr<double> gpu_permute_rows<double>(const DeviceCsrView<double>&, const std::vector<int64_t>&,
                                                    const GpuContext&);

}  // namespace sparsetc::detail

// The operands of the binned SpGEMM: any device matrix to the canonical device CSR of op(M), with
// every row sorted. gpu_normalize sorts COO and transposes CSC; CSR is taken as it is (read in
// place when already in the canonical index form and value type), so under a
// relaxed validation level its rows may be unsorted: one pass checks, and only then a stable
// segmented sort fixes them (repeats stay, each one more product).
#include <type_traits>

#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

// flags[0]: a column below its predecessor (unsorted row); flags[1]: equal to it (repeat).
struct FlagOrder {
  const int32_t* cols;
  const int64_t* row_ptr;
  int32_t* flags;
  __device__ void operator()(int64_t j, int64_t i) const {
    if (j == row_ptr[i]) return;
    if (cols[j] < cols[j - 1]) flags[0] = 1;
    else if (cols[j] == cols[j - 1]) flags[1] = 1;
  }
};

struct RowOrder {
  bool sorted = true, unique = true;
};

template <typename V>
RowOrder row_order(const DeviceCsr<V>& m, const GpuContext& context) {
  if (m.nnz == 0) return {};
  DeviceBuffer flags = gpuconv::buffer_of<int32_t>(2, context);
  gpuconv::zero(flags.as<int32_t>(), 2, context.stream);
  gpuconv::for_each_entry_with_row(m.row_ptr.template as<const int64_t>(), m.rows, m.nnz, context,
                                   FlagOrder{m.col_idx.template as<const int32_t>(),
                                             m.row_ptr.template as<const int64_t>(), flags.as<int32_t>()});
  int32_t host[2];
  copy_device_to_host(host, flags.data(), sizeof host, context.stream);
  return {host[0] == 0, host[1] == 0};
}

template <typename V>
void sort_rows(DeviceCsr<V>& m, const GpuContext& context) {
  DeviceBuffer cols = gpuconv::buffer_of<int32_t>(m.nnz, context), vals = gpuconv::buffer_of<V>(m.nnz, context);
  const int64_t* ptr = m.row_ptr.template as<const int64_t>();
  gpuconv::run_cub("cub::DeviceSegmentedSort::StableSortPairs", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceSegmentedSort::StableSortPairs(temp, bytes, m.col_idx.template as<const int32_t>(), cols.as<int32_t>(),
                                                       m.values.template as<const V>(), vals.as<V>(), m.nnz, m.rows, ptr,
                                                       ptr + 1, context.stream);
  });
  m.col_idx = std::move(cols);
  m.values = std::move(vals);
}

struct WidenOffsets {
  const int32_t* src;
  int64_t* dst;
  __device__ void operator()(int64_t i) const { dst[i] = int64_t(src[i]); }
};

// A zero-based CSR with int32 column indices and values of type V is read in place (its column
// indices and values borrowed, its offsets borrowed when int64, else widened): no copy of the
// entries, two launches fewer per operand (the arrays outlive the plan, which holds the matrix).
template <typename V>
bool read_in_place(const RawSparse& raw, DeviceCsr<V>& csr, const GpuContext& context) {
  constexpr sparsetc_value_type_t kType = std::is_same_v<V, double> ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  if (raw.format != SPARSETC_FORMAT_CSR || raw.index_type != SPARSETC_INDEX_32 || raw.base != SPARSETC_BASE_ZERO ||
      raw.value_type != kType || (raw.offset_type != SPARSETC_INDEX_32 && raw.offset_type != SPARSETC_INDEX_64) ||
      raw.rows < 0 || raw.nnz < 0 || raw.cols < 0 || raw.cols > 2147483647)
    return false;
  csr.rows = raw.rows;
  csr.cols = raw.cols;
  csr.nnz = raw.nnz;
  csr.col_idx = DeviceBuffer::borrow(raw.indices, size_t(raw.nnz) * sizeof(int32_t));
  csr.values = DeviceBuffer::borrow(raw.values, size_t(raw.nnz) * sizeof(V));
  if (raw.offset_type == SPARSETC_INDEX_64) {
    csr.row_ptr = DeviceBuffer::borrow(raw.offsets, size_t(raw.rows + 1) * sizeof(int64_t));
  } else {
    csr.row_ptr = gpuconv::buffer_of<int64_t>(raw.rows + 1, context);
    gpuconv::for_each_index(raw.rows + 1, context,
                            WidenOffsets{static_cast<const int32_t*>(raw.offsets), csr.row_ptr.template as<int64_t>()});
  }
  return true;
}

}  // namespace

template <typename V>
DeviceCsr<V> prepare_operand(const RawSparse& raw, sparsetc_duplicates_t duplicates, bool transpose,
                             const GpuContext& context, bool* rows_unique) {
  DeviceCsr<V> csr;
  if (!read_in_place(raw, csr, context)) csr = gpu_normalize<V>(raw, duplicates, context);
  bool unique = true;
  if (raw.format == SPARSETC_FORMAT_CSR) {  // COO and CSC come out sorted and unique
    const RowOrder order = row_order(csr, context);
    if (!order.sorted) {
      sort_rows(csr, context);
      unique = row_order(csr, context).unique;  // a repeat may have been out of place
    } else {
      unique = order.unique;
    }
  }
  if (rows_unique) *rows_unique = unique;  // a repeated entry of M is one of M^T too
  if (!transpose) return csr;
  DeviceCsc<V> csc = gpu_csr_to_csc<V>(csr.view(), context);  // the CSC of M is the CSR of M^T
  DeviceCsr<V> t;
  t.rows = csc.cols;
  t.cols = csc.rows;
  t.nnz = csc.nnz;
  t.row_ptr = std::move(csc.col_ptr);
  t.col_idx = std::move(csc.row_idx);
  t.values = std::move(csc.values);
  return t;
}

template DeviceCsr<float> prepare_operand<float>(const RawSparse&, sparsetc_duplicates_t, bool, const GpuContext&,
                                                 bool*);
template DeviceCsr<double> prepare_operand<double>(const RawSparse&, sparsetc_duplicates_t, bool, const GpuContext&,
                                                   bool*);

}  // namespace sparsetc::detail::binned

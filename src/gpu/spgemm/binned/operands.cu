// The operands of the binned SpGEMM: any device matrix to the canonical device CSR of op(M), with
// every row sorted. gpu_normalize sorts COO and transposes CSC; CSR is taken as it is, so under a
// relaxed validation level its rows may be unsorted: one pass checks, and only then a stable
// segmented sort fixes them (repeats stay, each one more product).
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

struct FlagDescent {
  const int32_t* cols;
  const int64_t* row_ptr;
  int32_t* flag;
  __device__ void operator()(int64_t j, int64_t i) const {
    if (j > row_ptr[i] && cols[j] < cols[j - 1]) *flag = 1;
  }
};

template <typename V>
bool rows_sorted(const DeviceCsr<V>& m, const GpuContext& context) {
  if (m.nnz == 0) return true;
  DeviceBuffer flag = gpuconv::buffer_of<int32_t>(1, context);
  gpuconv::zero(flag.as<int32_t>(), 1, context.stream);
  gpuconv::for_each_entry_with_row(m.row_ptr.template as<const int64_t>(), m.rows, m.nnz, context,
                                   FlagDescent{m.col_idx.template as<const int32_t>(), m.row_ptr.template as<const int64_t>(),
                                               flag.as<int32_t>()});
  return gpuconv::read_back(flag.as<const int32_t>(), context.stream) == 0;
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

}  // namespace

template <typename V>
DeviceCsr<V> prepare_operand(const RawSparse& raw, sparsetc_duplicates_t duplicates, bool transpose,
                             const GpuContext& context) {
  DeviceCsr<V> csr = gpu_normalize<V>(raw, duplicates, context);
  if (raw.format == SPARSETC_FORMAT_CSR && !rows_sorted(csr, context)) sort_rows(csr, context);
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

template DeviceCsr<float> prepare_operand<float>(const RawSparse&, sparsetc_duplicates_t, bool, const GpuContext&);
template DeviceCsr<double> prepare_operand<double>(const RawSparse&, sparsetc_duplicates_t, bool, const GpuContext&);

}  // namespace sparsetc::detail::binned

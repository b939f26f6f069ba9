// sparsetc_matrix_convert for device matrices on a GPU handle: normalize to the canonical device
// CSR, transpose for CSC, write the caller's types — all on the handle's stream.
#include "core/error.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {

std::unique_ptr<sparsetc_matrix_s> convert_on_device(sparsetc_handle_s& handle, sparsetc_matrix_s& source,
                                                     sparsetc_format_t format, sparsetc_index_type_t offset_type,
                                                     sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                                     sparsetc_value_type_t value_type) {
  require(format == SPARSETC_FORMAT_CSR || format == SPARSETC_FORMAT_CSC, SPARSETC_STATUS_NOT_SUPPORTED,
          "device conversion to COO goes through the host");
  const GpuContext context = handle.gpu();
  // Values pass through double: every value type converts to it and back exactly.
  DeviceCsr<double> csr = gpu_normalize<double>(source.layout, source.duplicates, context);
  ExportedArrays arrays;
  if (format == SPARSETC_FORMAT_CSR) {
    arrays = gpu_export_compressed<double>(csr.rows, csr.nnz, csr.row_ptr.as<int64_t>(), csr.col_idx.as<int32_t>(),
                                           csr.values.as<double>(), offset_type, index_type, base, value_type,
                                           context);
  } else {
    DeviceCsc<double> csc = gpu_csr_to_csc<double>(csr.view(), context);
    arrays = gpu_export_compressed<double>(csc.cols, csc.nnz, csc.col_ptr.as<int64_t>(), csc.row_idx.as<int32_t>(),
                                           csc.values.as<double>(), offset_type, index_type, base, value_type,
                                           context);
  }
  auto result = std::make_unique<sparsetc_matrix_s>();
  result->layout = RawSparse{format,      csr.rows,   csr.cols, csr.nnz,   arrays.offsets.data(),
                             arrays.indices.data(), arrays.values.data(), offset_type, index_type, base,
                             value_type};
  result->memory = SPARSETC_MEMORY_DEVICE;
  result->ownership = SPARSETC_COPY;
  result->device = handle.device;
  result->duplicates = source.duplicates;
  result->device_offsets = std::move(arrays.offsets);
  result->device_indices = std::move(arrays.indices);
  result->device_values = std::move(arrays.values);
  result->row_permutation = source.row_permutation;  // still the same reordered matrix
  result->group_ptr = source.group_ptr;
  return result;
}

}  // namespace sparsetc::detail

// sparsetc_matrix_convert for device matrices on a GPU handle, all on the handle's stream. CSR <->
// CSC with int32 indices on both sides and unchanged value type: one transpose straight from the
// caller's arrays into the result's types. Otherwise: normalize to the canonical device CSR,
// transpose for CSC, write the caller's types.
#include <cstdint>

#include "core/error.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kMaxInt32 = 2147483647;

// The direct path, where it gives exactly the arrays (and errors) of the general one: a
// transpose, indices that stay int32, values moved unchanged, and no limit of the general path
// hit (those keep its messages).
bool transposes_directly(const RawSparse& raw, sparsetc_format_t format, sparsetc_index_type_t offset_type,
                         sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                         sparsetc_value_type_t value_type) {
  const bool transpose = (raw.format == SPARSETC_FORMAT_CSR && format == SPARSETC_FORMAT_CSC) ||
                         (raw.format == SPARSETC_FORMAT_CSC && format == SPARSETC_FORMAT_CSR);
  return transpose && raw.index_type == SPARSETC_INDEX_32 && index_type == SPARSETC_INDEX_32 &&
         (raw.offset_type == SPARSETC_INDEX_32 || raw.offset_type == SPARSETC_INDEX_64) &&
         (raw.base == SPARSETC_BASE_ZERO || raw.base == SPARSETC_BASE_ONE) && raw.value_type == value_type &&
         is_valid_value_type(value_type) && raw.rows >= 0 && raw.cols >= 0 && raw.nnz >= 0 &&
         raw.rows + base <= kMaxInt32 && raw.cols + base <= kMaxInt32 && raw.nnz < (int64_t(1) << 33) &&
         (offset_type == SPARSETC_INDEX_64 || raw.nnz + base <= kMaxInt32);
}

}  // namespace

std::unique_ptr<sparsetc_matrix_s> convert_on_device(sparsetc_handle_s& handle, sparsetc_matrix_s& source,
                                                     sparsetc_format_t format, sparsetc_index_type_t offset_type,
                                                     sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                                     sparsetc_value_type_t value_type) {
  require(format == SPARSETC_FORMAT_CSR || format == SPARSETC_FORMAT_CSC, SPARSETC_STATUS_NOT_SUPPORTED,
          "device conversion to COO goes through the host");
  const GpuContext context = handle.gpu();
  const RawSparse& raw = source.layout;
  if (transposes_directly(raw, format, offset_type, index_type, base, value_type)) {
    const bool from_csr = raw.format == SPARSETC_FORMAT_CSR;
    DeviceBuffer offsets, indices, values;
    gpuconv::transpose_user_arrays(from_csr ? raw.rows : raw.cols, from_csr ? raw.cols : raw.rows, raw.nnz,
                                   raw.offsets, raw.offset_type, static_cast<const int32_t*>(raw.indices), raw.base,
                                   raw.values, value_size(value_type), offset_type, base, offsets, indices, values,
                                   context);
    auto result = std::make_unique<sparsetc_matrix_s>();
    result->layout = RawSparse{format,        raw.rows,     raw.cols,    raw.nnz,    offsets.data(), indices.data(),
                               values.data(), offset_type, index_type, base,       value_type};
    result->memory = SPARSETC_MEMORY_DEVICE;
    result->ownership = SPARSETC_COPY;
    result->device = handle.device;
    result->duplicates = source.duplicates;
    result->device_offsets = std::move(offsets);
    result->device_indices = std::move(indices);
    result->device_values = std::move(values);
    result->row_permutation = source.row_permutation;
    result->group_ptr = source.group_ptr;
    return result;
  }
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

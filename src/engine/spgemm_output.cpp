#include "engine/spgemm_output.hpp"

#include <utility>

#include "engine/handle.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"

namespace sparsetc::detail {

std::unique_ptr<sparsetc_matrix_s> make_device_csr_output(sparsetc_handle_s& handle, int64_t rows, int64_t cols,
                                                          int64_t nnz, const int64_t* row_ptr, const int32_t* col_idx,
                                                          DeviceBuffer values, sparsetc_index_base_t base,
                                                          sparsetc_value_type_t value_type) {
  const GpuContext context = handle.gpu();
  const sparsetc_index_type_t offsets = spgemm_offset_type(nnz, base);
  auto out = std::make_unique<sparsetc_matrix_s>();
  out->memory = SPARSETC_MEMORY_DEVICE;
  out->ownership = SPARSETC_COPY;
  out->device = handle.device;
  out->device_offsets = binned::export_offsets(row_ptr, rows, offsets, int(base), context);
  out->device_indices = binned::export_indices(col_idx, nnz, int(base), context);
  out->device_values = std::move(values);
  out->layout = RawSparse{SPARSETC_FORMAT_CSR,
                          rows,
                          cols,
                          nnz,
                          out->device_offsets.data(),
                          out->device_indices.data(),
                          out->device_values.data(),
                          offsets,
                          SPARSETC_INDEX_32,
                          base,
                          value_type};
  return out;
}

}  // namespace sparsetc::detail

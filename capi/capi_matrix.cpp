// Sparse matrix entry points: creation from arrays, files and generators; conversion, copies,
// queries, value updates, checks and destruction.
#include <algorithm>
#include <cstring>
#include <memory>

#include "capi_guard.hpp"
#include "core/types.hpp"
#include "engine/matrix.hpp"
#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "io/matrix_market.hpp"

using namespace sparsetc;

namespace {

sparsetc_status_t create(sparsetc_handle_t handle, sparsetc_matrix_t* matrix, const char* function,
                         const detail::RawSparse& raw, sparsetc_memory_t memory, sparsetc_ownership_t ownership) {
  return capi::guarded(handle, function, [&] {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(matrix, "matrix");
    *matrix = nullptr;
    *matrix = detail::make_matrix(*handle, raw, memory, ownership).release();
  });
}

// Wraps a canonical host CSR as a new owning matrix in the caller's memory space and types.
std::unique_ptr<sparsetc_matrix_s> from_canonical(sparsetc_handle_s& handle, const detail::CsrMatrix<double>& csr,
                                                  sparsetc_format_t format, sparsetc_index_type_t offset_type,
                                                  sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                                  sparsetc_value_type_t value_type, sparsetc_memory_t memory) {
  if (format == SPARSETC_FORMAT_COO) offset_type = index_type;  // COO's "offsets" are its row indices
  auto host = std::make_unique<sparsetc_matrix_s>();
  host->host_storage = detail::export_csr(csr, format, offset_type, index_type, base, value_type);
  host->layout = detail::RawSparse{format,     csr.rows,   csr.cols,   csr.nnz(), host->host_storage.offsets.data(),
                                   host->host_storage.indices.data(), host->host_storage.values.data(),
                                   offset_type, index_type, base, value_type};
  if (memory == SPARSETC_MEMORY_HOST) return host;
  return detail::copy_matrix_to(handle, *host, SPARSETC_MEMORY_DEVICE);
}

detail::CsrMatrix<double> canonical_f64(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix) {
  if (matrix.memory == SPARSETC_MEMORY_HOST) return *detail::canonical_csr<double>(matrix, matrix.duplicates);
  detail::HostView view = detail::host_view(handle, matrix);
  return detail::import_csr<double>(view.raw, matrix.duplicates);
}

}  // namespace

extern "C" {

sparsetc_status_t sparsetc_matrix_create_csr(sparsetc_handle_t handle, sparsetc_matrix_t* matrix, int64_t rows,
                                             int64_t cols, int64_t nnz, const void* row_offsets,
                                             const void* col_indices, const void* values,
                                             sparsetc_index_type_t offset_type, sparsetc_index_type_t index_type,
                                             sparsetc_index_base_t base, sparsetc_value_type_t value_type,
                                             sparsetc_memory_t memory, sparsetc_ownership_t ownership) {
  detail::RawSparse raw{SPARSETC_FORMAT_CSR, rows, cols, nnz, row_offsets, col_indices, values,
                        offset_type, index_type, base, value_type};
  return create(handle, matrix, __func__, raw, memory, ownership);
}

sparsetc_status_t sparsetc_matrix_create_csc(sparsetc_handle_t handle, sparsetc_matrix_t* matrix, int64_t rows,
                                             int64_t cols, int64_t nnz, const void* col_offsets,
                                             const void* row_indices, const void* values,
                                             sparsetc_index_type_t offset_type, sparsetc_index_type_t index_type,
                                             sparsetc_index_base_t base, sparsetc_value_type_t value_type,
                                             sparsetc_memory_t memory, sparsetc_ownership_t ownership) {
  detail::RawSparse raw{SPARSETC_FORMAT_CSC, rows, cols, nnz, col_offsets, row_indices, values,
                        offset_type, index_type, base, value_type};
  return create(handle, matrix, __func__, raw, memory, ownership);
}

sparsetc_status_t sparsetc_matrix_create_coo(sparsetc_handle_t handle, sparsetc_matrix_t* matrix, int64_t rows,
                                             int64_t cols, int64_t nnz, const void* row_indices,
                                             const void* col_indices, const void* values,
                                             sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                             sparsetc_value_type_t value_type, sparsetc_memory_t memory,
                                             sparsetc_ownership_t ownership) {
  detail::RawSparse raw{SPARSETC_FORMAT_COO, rows, cols, nnz, row_indices, col_indices, values,
                        index_type, index_type, base, value_type};
  return create(handle, matrix, __func__, raw, memory, ownership);
}

sparsetc_status_t sparsetc_matrix_read_mtx(sparsetc_handle_t handle, const char* path,
                                           sparsetc_value_type_t value_type, sparsetc_index_type_t index_type,
                                           sparsetc_matrix_t* matrix) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(path, "path");
    capi::require_pointer(matrix, "matrix");
    *matrix = nullptr;
    detail::require(detail::is_valid_value_type(value_type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ",
                    value_type);
    detail::require(detail::is_valid_index_type(index_type), SPARSETC_STATUS_INVALID_VALUE, "unknown index type ",
                    index_type);
    // Matrix Market files may repeat an entry; the format's convention is to add them.
    auto csr = detail::coo_to_csr(detail::read_matrix_market(path), SPARSETC_DUPLICATES_SUM);
    *matrix = from_canonical(*handle, csr, SPARSETC_FORMAT_CSR, index_type, index_type, SPARSETC_BASE_ZERO,
                             value_type, SPARSETC_MEMORY_HOST)
                  .release();
  });
}

sparsetc_status_t sparsetc_matrix_write_mtx(sparsetc_handle_t handle, sparsetc_matrix_t matrix, const char* path) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(matrix, "matrix");
    capi::require_pointer(path, "path");
    detail::write_matrix_market(path, canonical_f64(*handle, *matrix));
  });
}

sparsetc_status_t sparsetc_matrix_generate(sparsetc_handle_t handle, const char* spec, uint64_t seed,
                                           sparsetc_value_type_t value_type, sparsetc_matrix_t* matrix) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(spec, "spec");
    capi::require_pointer(matrix, "matrix");
    *matrix = nullptr;
    detail::require(detail::is_valid_value_type(value_type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ",
                    value_type);
    auto csr = detail::generate(spec, seed);
    *matrix = from_canonical(*handle, csr, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_64, SPARSETC_INDEX_32,
                             SPARSETC_BASE_ZERO, value_type, SPARSETC_MEMORY_HOST)
                  .release();
  });
}

sparsetc_status_t sparsetc_matrix_copy_to(sparsetc_handle_t handle, sparsetc_matrix_t source,
                                          sparsetc_memory_t memory, sparsetc_matrix_t* copy) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(source, "source");
    capi::require_pointer(copy, "copy");
    *copy = nullptr;
    *copy = detail::copy_matrix_to(*handle, *source, memory).release();
  });
}

sparsetc_status_t sparsetc_matrix_convert(sparsetc_handle_t handle, sparsetc_matrix_t source,
                                          sparsetc_format_t format, sparsetc_index_type_t offset_type,
                                          sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                          sparsetc_value_type_t value_type, sparsetc_matrix_t* result) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(source, "source");
    capi::require_pointer(result, "result");
    *result = nullptr;
    detail::require(format == SPARSETC_FORMAT_CSR || format == SPARSETC_FORMAT_CSC || format == SPARSETC_FORMAT_COO,
                    SPARSETC_STATUS_INVALID_VALUE, "unknown format ", format);
    detail::require(detail::is_valid_index_type(offset_type) && detail::is_valid_index_type(index_type),
                    SPARSETC_STATUS_INVALID_VALUE, "unknown index type");
    detail::require(detail::is_valid_base(base), SPARSETC_STATUS_INVALID_VALUE, "unknown index base ", base);
    detail::require(detail::is_valid_value_type(value_type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ",
                    value_type);
    if (source->memory == SPARSETC_MEMORY_DEVICE && handle->backend == SPARSETC_BACKEND_GPU &&
        (format == SPARSETC_FORMAT_CSR || format == SPARSETC_FORMAT_CSC)) {
      *result = detail::convert_on_device(*handle, *source, format, offset_type, index_type, base, value_type)
                    .release();
      return;
    }
    // Host matrices, and device matrices to COO, convert through the host engine.
    auto csr = canonical_f64(*handle, *source);
    auto converted = from_canonical(*handle, csr, format, offset_type, index_type, base, value_type, source->memory);
    converted->row_permutation = source->row_permutation;  // still the same reordered matrix
    converted->group_ptr = source->group_ptr;
    *result = converted.release();
  });
}

sparsetc_status_t sparsetc_matrix_get_info(sparsetc_matrix_t matrix, sparsetc_matrix_info_t* info) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(matrix, "matrix");
    capi::require_pointer(info, "info");
    detail::require(info->struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
                    "info->struct_size is not set (set it to sizeof(sparsetc_matrix_info_t))");
    const detail::RawSparse& r = matrix->layout;
    sparsetc_matrix_info_t full{info->struct_size, r.rows, r.cols, r.nnz, r.format, r.offset_type, r.index_type,
                                r.base, r.value_type, matrix->memory, matrix->ownership};
    std::memcpy(info, &full, std::min(info->struct_size, sizeof full));  // append-only: older callers get a prefix
  });
}

sparsetc_status_t sparsetc_matrix_get_arrays(sparsetc_matrix_t matrix, void** offsets_or_rows, void** indices,
                                             void** values) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(matrix, "matrix");
    if (offsets_or_rows) *offsets_or_rows = const_cast<void*>(matrix->layout.offsets);
    if (indices) *indices = const_cast<void*>(matrix->layout.indices);
    if (values) *values = const_cast<void*>(matrix->layout.values);
  });
}

sparsetc_status_t sparsetc_matrix_set_values(sparsetc_handle_t handle, sparsetc_matrix_t matrix,
                                             const void* values) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(matrix, "matrix");
    detail::set_matrix_values(*handle, *matrix, values);
  });
}

sparsetc_status_t sparsetc_matrix_check(sparsetc_handle_t handle, sparsetc_matrix_t matrix,
                                        sparsetc_validation_t level) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(matrix, "matrix");
    detail::check_matrix(*handle, *matrix, level);
  });
}

sparsetc_status_t sparsetc_matrix_destroy(sparsetc_matrix_t matrix) {
  return SPARSETC_GUARD(nullptr, { delete matrix; });
}

}  // extern "C"

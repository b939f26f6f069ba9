#include "engine/matrix.hpp"

#include <cstring>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "formats/values.hpp"
#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {
namespace {

struct ArrayBytes {
  size_t offsets, indices, values;
};

ArrayBytes array_bytes(const RawSparse& raw) {
  const int64_t offset_count = raw.format == SPARSETC_FORMAT_CSR   ? raw.rows + 1
                               : raw.format == SPARSETC_FORMAT_CSC ? raw.cols + 1
                                                                   : raw.nnz;
  return {size_t(offset_count) * index_size(raw.offset_type), size_t(raw.nnz) * index_size(raw.index_type),
          size_t(raw.nnz) * value_size(raw.value_type)};
}

std::vector<unsigned char> copy_bytes(const void* src, size_t bytes) {
  std::vector<unsigned char> out(bytes);
  if (bytes) std::memcpy(out.data(), src, bytes);
  return out;
}

void point_at_host_storage(sparsetc_matrix_s& m) {
  m.layout.offsets = m.host_storage.offsets.data();
  m.layout.indices = m.host_storage.indices.empty() ? nullptr : m.host_storage.indices.data();
  m.layout.values = m.host_storage.values.empty() ? nullptr : m.host_storage.values.data();
}

void point_at_device_storage(sparsetc_matrix_s& m) {
  m.layout.offsets = m.device_offsets.data();
  m.layout.indices = m.device_indices.data();
  m.layout.values = m.device_values.data();
}

void require_gpu(const sparsetc_handle_s& handle, const char* what) {
  require(handle.backend == SPARSETC_BACKEND_GPU, SPARSETC_STATUS_NOT_SUPPORTED, what,
          " needs a handle on the GPU backend (this handle runs on the CPU)");
  handle.activate();
}

}  // namespace

HostView host_view(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix) {
  HostView view;
  view.raw = matrix.layout;
  if (matrix.memory == SPARSETC_MEMORY_HOST) return view;
  require_gpu(handle, "reading a device matrix");
  const ArrayBytes bytes = array_bytes(matrix.layout);
  SPARSETC_LOG(debug, "downloading a ", matrix.layout.rows, "x", matrix.layout.cols, " device matrix (",
               bytes.offsets + bytes.indices + bytes.values, " bytes) to the host");
  view.copy.offsets.resize(bytes.offsets);
  view.copy.indices.resize(bytes.indices);
  view.copy.values.resize(bytes.values);
  copy_device_to_host(view.copy.offsets.data(), matrix.layout.offsets, bytes.offsets, handle.stream);
  copy_device_to_host(view.copy.indices.data(), matrix.layout.indices, bytes.indices, handle.stream);
  copy_device_to_host(view.copy.values.data(), matrix.layout.values, bytes.values, handle.stream);
  view.raw.offsets = view.copy.offsets.data();
  view.raw.indices = view.copy.indices.data();
  view.raw.values = view.copy.values.data();
  return view;
}

std::unique_ptr<sparsetc_matrix_s> make_matrix(sparsetc_handle_s& handle, const RawSparse& raw,
                                               sparsetc_memory_t memory, sparsetc_ownership_t ownership) {
  require(is_valid_memory(memory), SPARSETC_STATUS_INVALID_VALUE, "unknown memory space ", memory);
  require(ownership == SPARSETC_COPY || ownership == SPARSETC_BORROW, SPARSETC_STATUS_INVALID_VALUE,
          "unknown ownership ", ownership);
  // Argument checks are always made: without them a bad pointer would crash instead of failing.
  const sparsetc_validation_t level =
      handle.validation > SPARSETC_VALIDATE_ARGUMENTS ? handle.validation : SPARSETC_VALIDATE_ARGUMENTS;
  validate_raw(raw, SPARSETC_VALIDATE_ARGUMENTS, handle.duplicates);

  auto matrix = std::make_unique<sparsetc_matrix_s>();
  matrix->layout = raw;
  matrix->memory = memory;
  matrix->ownership = ownership;
  matrix->duplicates = handle.duplicates;
  const ArrayBytes bytes = array_bytes(raw);

  if (memory == SPARSETC_MEMORY_HOST) {
    if (level > SPARSETC_VALIDATE_ARGUMENTS) validate_raw(raw, level, handle.duplicates);
    if (ownership == SPARSETC_COPY) {
      matrix->host_storage.offsets = copy_bytes(raw.offsets, bytes.offsets);
      matrix->host_storage.indices = copy_bytes(raw.indices, bytes.indices);
      matrix->host_storage.values = copy_bytes(raw.values, bytes.values);
      point_at_host_storage(*matrix);
    }
    return matrix;
  }

  require_gpu(handle, "a matrix in device memory");
  matrix->device = handle.device;
  for (const void* p : {raw.offsets, raw.indices, raw.values})
    require(p == nullptr || is_device_pointer(p), SPARSETC_STATUS_INVALID_VALUE,
            "an array of a SPARSETC_MEMORY_DEVICE matrix is not device memory");
  if (level > SPARSETC_VALIDATE_ARGUMENTS) {
    // Structure checks read the arrays on the host for now (a documented synchronisation).
    HostView view = host_view(handle, *matrix);
    validate_raw(view.raw, level, handle.duplicates);
  }
  if (ownership == SPARSETC_COPY) {
    matrix->device_offsets = DeviceBuffer(bytes.offsets, handle.gpu());
    matrix->device_indices = DeviceBuffer(bytes.indices, handle.gpu());
    matrix->device_values = DeviceBuffer(bytes.values, handle.gpu());
    copy_device_to_device(matrix->device_offsets.data(), raw.offsets, bytes.offsets, handle.stream);
    copy_device_to_device(matrix->device_indices.data(), raw.indices, bytes.indices, handle.stream);
    copy_device_to_device(matrix->device_values.data(), raw.values, bytes.values, handle.stream);
    // The caller may free its arrays as soon as we return: finish reading them.
    SPARSETC_CUDA_CHECK(cudaStreamSynchronize(handle.stream));
    point_at_device_storage(*matrix);
  }
  return matrix;
}

template <typename V>
std::unique_ptr<sparsetc_matrix_s> make_host_matrix(const CsrMatrix<V>& csr, sparsetc_index_type_t offset_type,
                                                    sparsetc_index_type_t index_type,
                                                    sparsetc_value_type_t value_type) {
  auto matrix = std::make_unique<sparsetc_matrix_s>();
  matrix->host_storage = export_csr(csr, SPARSETC_FORMAT_CSR, offset_type, index_type, SPARSETC_BASE_ZERO, value_type);
  matrix->layout.format = SPARSETC_FORMAT_CSR;
  matrix->layout.rows = csr.rows;
  matrix->layout.cols = csr.cols;
  matrix->layout.nnz = csr.nnz();
  matrix->layout.offset_type = offset_type;
  matrix->layout.index_type = index_type;
  matrix->layout.base = SPARSETC_BASE_ZERO;
  matrix->layout.value_type = value_type;
  point_at_host_storage(*matrix);
  return matrix;
}

template <typename V>
std::shared_ptr<const CsrMatrix<V>> canonical_csr(sparsetc_matrix_s& matrix, sparsetc_duplicates_t duplicates) {
  require(matrix.memory == SPARSETC_MEMORY_HOST, SPARSETC_STATUS_NOT_SUPPORTED,
          "the host engine needs a host matrix (use sparsetc_matrix_copy_to)");
  std::lock_guard<std::mutex> lock(matrix.cache_mutex);
  auto& slot = [&]() -> std::shared_ptr<const CsrMatrix<V>>& {
    if constexpr (std::is_same_v<V, float>) return matrix.csr_f32;
    else return matrix.csr_f64;
  }();
  if (!slot) slot = std::make_shared<const CsrMatrix<V>>(import_csr<V>(matrix.layout, duplicates));
  return slot;
}

std::unique_ptr<sparsetc_matrix_s> copy_matrix_to(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix,
                                                  sparsetc_memory_t memory) {
  require(is_valid_memory(memory), SPARSETC_STATUS_INVALID_VALUE, "unknown memory space ", memory);
  const ArrayBytes bytes = array_bytes(matrix.layout);
  auto copy = std::make_unique<sparsetc_matrix_s>();
  copy->layout = matrix.layout;
  copy->memory = memory;
  copy->ownership = SPARSETC_COPY;
  copy->duplicates = matrix.duplicates;
  // A copy of a reordered matrix is the same reordered matrix: multiplies still answer in the
  // original row order (or refuse where a path cannot yet).
  copy->row_permutation = matrix.row_permutation;
  copy->group_ptr = matrix.group_ptr;
  if (memory == SPARSETC_MEMORY_HOST) {
    if (matrix.memory == SPARSETC_MEMORY_HOST) {
      copy->host_storage.offsets = copy_bytes(matrix.layout.offsets, bytes.offsets);
      copy->host_storage.indices = copy_bytes(matrix.layout.indices, bytes.indices);
      copy->host_storage.values = copy_bytes(matrix.layout.values, bytes.values);
    } else {
      copy->host_storage = std::move(host_view(handle, matrix).copy);
    }
    point_at_host_storage(*copy);
    return copy;
  }
  require_gpu(handle, "a matrix in device memory");
  copy->device = handle.device;
  copy->device_offsets = DeviceBuffer(bytes.offsets, handle.gpu());
  copy->device_indices = DeviceBuffer(bytes.indices, handle.gpu());
  copy->device_values = DeviceBuffer(bytes.values, handle.gpu());
  auto move = matrix.memory == SPARSETC_MEMORY_HOST ? copy_host_to_device : copy_device_to_device;
  move(copy->device_offsets.data(), matrix.layout.offsets, bytes.offsets, handle.stream);
  move(copy->device_indices.data(), matrix.layout.indices, bytes.indices, handle.stream);
  move(copy->device_values.data(), matrix.layout.values, bytes.values, handle.stream);
  if (matrix.memory == SPARSETC_MEMORY_HOST) {
    // The source may be freed as soon as we return: finish reading it.
    SPARSETC_CUDA_CHECK(cudaStreamSynchronize(handle.stream));
  }
  point_at_device_storage(*copy);
  return copy;
}

void set_matrix_values(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix, const void* values) {
  const size_t bytes = size_t(matrix.layout.nnz) * value_size(matrix.layout.value_type);
  require(values != nullptr || bytes == 0, SPARSETC_STATUS_NULL_POINTER, "values is NULL but nnz = ",
          matrix.layout.nnz);
  if (matrix.memory == SPARSETC_MEMORY_HOST) {
    if (handle.validation >= SPARSETC_VALIDATE_VALUES) {
      int64_t bad = find_non_finite(values, matrix.layout.value_type, matrix.layout.nnz);
      require(bad < 0, SPARSETC_STATUS_NAN_OR_INF, "value at entry ", bad, " is NaN or Inf");
    }
    if (matrix.ownership == SPARSETC_COPY) {
      if (bytes) std::memcpy(matrix.host_storage.values.data(), values, bytes);
    } else {
      matrix.layout.values = values;
    }
  } else {
    require_gpu(handle, "a matrix in device memory");
    require(is_device_pointer(values) || bytes == 0, SPARSETC_STATUS_INVALID_VALUE,
            "the new values of a device matrix are not in device memory");
    if (matrix.ownership == SPARSETC_COPY) {
      copy_device_to_device(matrix.device_values.data(), values, bytes, handle.stream);
      SPARSETC_CUDA_CHECK(cudaStreamSynchronize(handle.stream));  // the caller may free `values` now
    } else {
      matrix.layout.values = values;
    }
  }
  mark_values_changed(matrix);
}

void mark_values_changed(sparsetc_matrix_s& matrix) {
  std::lock_guard<std::mutex> lock(matrix.cache_mutex);
  matrix.csr_f32.reset();
  matrix.csr_f64.reset();
  ++matrix.values_version;
}

void check_matrix(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix, sparsetc_validation_t level) {
  require(level >= SPARSETC_VALIDATE_NONE && level <= SPARSETC_VALIDATE_VALUES, SPARSETC_STATUS_INVALID_VALUE,
          "unknown validation level ", level);
  HostView view = host_view(handle, matrix);
  validate_raw(view.raw, level, matrix.duplicates);
}

template std::unique_ptr<sparsetc_matrix_s> make_host_matrix<float>(const CsrMatrix<float>&, sparsetc_index_type_t,
                                                                    sparsetc_index_type_t, sparsetc_value_type_t);
template std::unique_ptr<sparsetc_matrix_s> make_host_matrix<double>(const CsrMatrix<double>&,
                                                                     sparsetc_index_type_t, sparsetc_index_type_t,
                                                                     sparsetc_value_type_t);
template std::shared_ptr<const CsrMatrix<float>> canonical_csr<float>(sparsetc_matrix_s&, sparsetc_duplicates_t);
template std::shared_ptr<const CsrMatrix<double>> canonical_csr<double>(sparsetc_matrix_s&, sparsetc_duplicates_t);

}  // namespace sparsetc::detail

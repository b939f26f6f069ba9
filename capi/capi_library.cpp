// Library-wide entry points: versions, status strings, devices, logging, last error.
#include <cstring>

#include "capi_guard.hpp"
#include "core/logging.hpp"
#include "gpu/device_memory.hpp"

#ifndef SPARSETC_GIT_REVISION
#define SPARSETC_GIT_REVISION "unknown"
#endif

namespace sparsetc::capi {

std::string& thread_last_error() {
  thread_local std::string message;
  return message;
}

sparsetc_status_t record_failure(sparsetc_handle_s* handle, const char* function, sparsetc_status_t status,
                                 const char* message) noexcept {
  try {
    std::string text = std::string(function) + ": " + message;
    if (handle) handle->last_error = text;
    thread_last_error() = text;
    SPARSETC_LOG(warn, text, " [", sparsetc_get_status_name(status), "]");
  } catch (...) {
    // Out of memory while recording: the status alone still reaches the caller.
  }
  return status;
}

void copy_string(const std::string& text, char* buffer, size_t buffer_size) {
  if (!buffer || buffer_size == 0) return;
  const size_t n = text.size() < buffer_size - 1 ? text.size() : buffer_size - 1;
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

}  // namespace sparsetc::capi

using namespace sparsetc;

namespace {
struct StatusText {
  sparsetc_status_t status;
  const char* name;
  const char* text;
};
constexpr StatusText kStatusTexts[] = {
    {SPARSETC_STATUS_SUCCESS, "SPARSETC_STATUS_SUCCESS", "success"},
    {SPARSETC_STATUS_NOT_INITIALIZED, "SPARSETC_STATUS_NOT_INITIALIZED", "the handle or object is not initialized"},
    {SPARSETC_STATUS_ALLOC_FAILED, "SPARSETC_STATUS_ALLOC_FAILED", "out of host or device memory"},
    {SPARSETC_STATUS_INVALID_VALUE, "SPARSETC_STATUS_INVALID_VALUE", "an argument has an invalid value"},
    {SPARSETC_STATUS_ARCH_MISMATCH, "SPARSETC_STATUS_ARCH_MISMATCH", "the device does not support the operation"},
    {SPARSETC_STATUS_MAPPING_ERROR, "SPARSETC_STATUS_MAPPING_ERROR", "memory mapping error"},
    {SPARSETC_STATUS_EXECUTION_FAILED, "SPARSETC_STATUS_EXECUTION_FAILED", "a kernel failed to execute"},
    {SPARSETC_STATUS_INTERNAL_ERROR, "SPARSETC_STATUS_INTERNAL_ERROR", "internal error"},
    {SPARSETC_STATUS_MATRIX_TYPE_NOT_SUPPORTED, "SPARSETC_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
     "the matrix type is not supported"},
    {SPARSETC_STATUS_ZERO_PIVOT, "SPARSETC_STATUS_ZERO_PIVOT", "zero pivot"},
    {SPARSETC_STATUS_NOT_SUPPORTED, "SPARSETC_STATUS_NOT_SUPPORTED", "the operation or combination is not supported"},
    {SPARSETC_STATUS_INSUFFICIENT_RESOURCES, "SPARSETC_STATUS_INSUFFICIENT_RESOURCES",
     "insufficient resources for the operation"},
    {SPARSETC_STATUS_NULL_POINTER, "SPARSETC_STATUS_NULL_POINTER", "a required pointer is NULL"},
    {SPARSETC_STATUS_DIMENSION_MISMATCH, "SPARSETC_STATUS_DIMENSION_MISMATCH", "matrix dimensions do not agree"},
    {SPARSETC_STATUS_INVALID_INDEX, "SPARSETC_STATUS_INVALID_INDEX", "an index is out of range"},
    {SPARSETC_STATUS_UNSORTED_INDICES, "SPARSETC_STATUS_UNSORTED_INDICES", "indices are not sorted"},
    {SPARSETC_STATUS_DUPLICATE_ENTRY, "SPARSETC_STATUS_DUPLICATE_ENTRY", "a (row, column) entry is repeated"},
    {SPARSETC_STATUS_INVALID_ROW_OFFSETS, "SPARSETC_STATUS_INVALID_ROW_OFFSETS", "the offsets array is invalid"},
    {SPARSETC_STATUS_NAN_OR_INF, "SPARSETC_STATUS_NAN_OR_INF", "a value is NaN or infinite"},
    {SPARSETC_STATUS_VALUE_OUT_OF_RANGE, "SPARSETC_STATUS_VALUE_OUT_OF_RANGE",
     "a value does not fit the requested precision"},
    {SPARSETC_STATUS_TYPE_MISMATCH, "SPARSETC_STATUS_TYPE_MISMATCH", "argument types do not agree"},
    {SPARSETC_STATUS_INVALID_STATE, "SPARSETC_STATUS_INVALID_STATE", "the call is out of order"},
    {SPARSETC_STATUS_WORKSPACE_TOO_SMALL, "SPARSETC_STATUS_WORKSPACE_TOO_SMALL", "the workspace is too small"},
    {SPARSETC_STATUS_CUDA_ERROR, "SPARSETC_STATUS_CUDA_ERROR", "a CUDA runtime call failed"},
    {SPARSETC_STATUS_CUSPARSE_ERROR, "SPARSETC_STATUS_CUSPARSE_ERROR", "a cuSPARSE call failed"},
    {SPARSETC_STATUS_CUBLAS_ERROR, "SPARSETC_STATUS_CUBLAS_ERROR", "a cuBLAS call failed"},
    {SPARSETC_STATUS_IO_ERROR, "SPARSETC_STATUS_IO_ERROR", "a file cannot be opened, read or written"},
    {SPARSETC_STATUS_FILE_FORMAT_ERROR, "SPARSETC_STATUS_FILE_FORMAT_ERROR", "a file does not parse"},
    {SPARSETC_STATUS_NO_DEVICE, "SPARSETC_STATUS_NO_DEVICE", "no usable CUDA device"},
    {SPARSETC_STATUS_SIZE_OVERFLOW, "SPARSETC_STATUS_SIZE_OVERFLOW", "a size does not fit the index type"},
    {SPARSETC_STATUS_UNKNOWN_EXCEPTION, "SPARSETC_STATUS_UNKNOWN_EXCEPTION", "unknown internal exception"},
};
const StatusText* find_status(sparsetc_status_t status) {
  for (const auto& s : kStatusTexts)
    if (s.status == status) return &s;
  return nullptr;
}
}  // namespace

extern "C" {

sparsetc_status_t sparsetc_get_version(int32_t* major, int32_t* minor, int32_t* patch) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(major, "major");
    capi::require_pointer(minor, "minor");
    capi::require_pointer(patch, "patch");
    *major = SPARSETC_VERSION_MAJOR;
    *minor = SPARSETC_VERSION_MINOR;
    *patch = SPARSETC_VERSION_PATCH;
  });
}

sparsetc_status_t sparsetc_get_abi_version(int32_t* abi) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(abi, "abi");
    *abi = SPARSETC_ABI_VERSION;
  });
}

sparsetc_status_t sparsetc_get_build_info(char* buffer, size_t buffer_size) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(buffer, "buffer");
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    capi::copy_string(detail::str("sparsetc ", SPARSETC_VERSION_MAJOR, ".", SPARSETC_VERSION_MINOR, ".",
                                  SPARSETC_VERSION_PATCH, " (abi ", SPARSETC_ABI_VERSION, ", git ",
                                  SPARSETC_GIT_REVISION, ") CUDA runtime ", runtime / 1000, ".",
                                  (runtime % 1000) / 10, ", built for sm_", SPARSETC_CUDA_ARCHITECTURES),
                      buffer, buffer_size);
  });
}

const char* sparsetc_get_status_name(sparsetc_status_t status) {
  const StatusText* s = find_status(status);
  return s ? s->name : "SPARSETC_STATUS_UNKNOWN";
}

const char* sparsetc_get_status_string(sparsetc_status_t status) {
  const StatusText* s = find_status(status);
  return s ? s->text : "unknown status";
}

sparsetc_status_t sparsetc_get_device_count(int32_t* count) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(count, "count");
    *count = detail::cuda_device_count();
  });
}

sparsetc_status_t sparsetc_set_log_level(int32_t level) {
  return SPARSETC_GUARD(nullptr, { detail::set_log_level(level); });
}

sparsetc_status_t sparsetc_set_log_callback(sparsetc_log_callback_t callback, void* user_data) {
  return SPARSETC_GUARD(nullptr, { detail::set_log_callback(callback, user_data); });
}

sparsetc_status_t sparsetc_get_last_error(sparsetc_handle_t handle, char* buffer, size_t buffer_size) {
  if (!buffer || buffer_size == 0) return SPARSETC_STATUS_NULL_POINTER;
  capi::copy_string(handle ? handle->last_error : capi::thread_last_error(), buffer, buffer_size);
  return SPARSETC_STATUS_SUCCESS;
}

}  // extern "C"

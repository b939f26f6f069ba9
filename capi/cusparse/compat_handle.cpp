// Handle calls of the cuSPARSE-shaped API: a context owns a sparsetc GPU handle on the device
// current at creation (as a cuSPARSE handle is bound to it) and mirrors the stream and pointer mode.
#include <cuda_runtime_api.h>

#include "compat_support.hpp"
#include "sparsetc/sparsetc_cusparse.h"

using namespace sparsetc;
using namespace sparsetc::compat;

extern "C" {

sparsetc_cusparseStatus_t sparsetc_cusparseCreate(sparsetc_cusparseHandle_t* handle) {
  return guarded(nullptr, __func__, [&] {
    detail::require(handle != nullptr, SPARSETC_STATUS_INVALID_VALUE, "handle is NULL");
    *handle = nullptr;
    int device = 0;
    detail::require(cudaGetDevice(&device) == cudaSuccess, SPARSETC_STATUS_NOT_INITIALIZED, "no usable CUDA device");
    auto engine = std::make_shared<Engine>();
    engine->device = device;
    check(sparsetc_create_with_backend(&engine->handle, SPARSETC_BACKEND_GPU, device), *engine);
    // cuSPARSE trusts its inputs: no structure checks (they would download the arrays), and COO
    // repeats are summed, as cuSPARSE's SpMM does.
    check(sparsetc_set_validation(engine->handle, SPARSETC_VALIDATE_ARGUMENTS), *engine);
    check(sparsetc_set_duplicates(engine->handle, SPARSETC_DUPLICATES_SUM), *engine);
    auto context = std::make_unique<sparsetc_cusparseContext>();
    context->engine = std::move(engine);
    *handle = context.release();
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseDestroy(sparsetc_cusparseHandle_t handle) {
  // Descriptors keep the engine alive for the objects they cached; it goes with the last of them.
  return guarded(nullptr, __func__, [&] { delete &context_of(handle); });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSetStream(sparsetc_cusparseHandle_t handle, cudaStream_t streamId) {
  return guarded(handle, __func__, [&] { context_of(handle).stream = streamId; });
}

sparsetc_cusparseStatus_t sparsetc_cusparseGetStream(sparsetc_cusparseHandle_t handle, cudaStream_t* streamId) {
  return guarded(handle, __func__, [&] {
    detail::require(streamId != nullptr, SPARSETC_STATUS_INVALID_VALUE, "streamId is NULL");
    *streamId = context_of(handle).stream;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSetPointerMode(sparsetc_cusparseHandle_t handle,
                                                          sparsetc_cusparsePointerMode_t mode) {
  return guarded(handle, __func__, [&] {
    detail::require(mode == SPARSETC_CUSPARSE_POINTER_MODE_HOST || mode == SPARSETC_CUSPARSE_POINTER_MODE_DEVICE,
                    SPARSETC_STATUS_INVALID_VALUE, "unknown pointer mode ", int(mode));
    context_of(handle).pointer_mode = mode;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseGetPointerMode(sparsetc_cusparseHandle_t handle,
                                                          sparsetc_cusparsePointerMode_t* mode) {
  return guarded(handle, __func__, [&] {
    detail::require(mode != nullptr, SPARSETC_STATUS_INVALID_VALUE, "mode is NULL");
    *mode = context_of(handle).pointer_mode;
  });
}

const char* sparsetc_cusparseGetErrorName(sparsetc_cusparseStatus_t status) {
  switch (status) {
    case SPARSETC_CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
    case SPARSETC_CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
    case SPARSETC_CUSPARSE_STATUS_ALLOC_FAILED: return "CUSPARSE_STATUS_ALLOC_FAILED";
    case SPARSETC_CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
    case SPARSETC_CUSPARSE_STATUS_ARCH_MISMATCH: return "CUSPARSE_STATUS_ARCH_MISMATCH";
    case SPARSETC_CUSPARSE_STATUS_MAPPING_ERROR: return "CUSPARSE_STATUS_MAPPING_ERROR";
    case SPARSETC_CUSPARSE_STATUS_EXECUTION_FAILED: return "CUSPARSE_STATUS_EXECUTION_FAILED";
    case SPARSETC_CUSPARSE_STATUS_INTERNAL_ERROR: return "CUSPARSE_STATUS_INTERNAL_ERROR";
    case SPARSETC_CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case SPARSETC_CUSPARSE_STATUS_ZERO_PIVOT: return "CUSPARSE_STATUS_ZERO_PIVOT";
    case SPARSETC_CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
    case SPARSETC_CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES";
  }
  return "<unrecognized>";
}

const char* sparsetc_cusparseGetErrorString(sparsetc_cusparseStatus_t status) {
  // sparsetc's own strings for the shared codes 0..11.
  return sparsetc_get_status_string(static_cast<sparsetc_status_t>(status));
}

sparsetc_cusparseStatus_t sparsetc_cusparse_get_last_error(sparsetc_cusparseHandle_t handle, char* buffer,
                                                           size_t buffer_size) {
  if (!buffer || buffer_size == 0) return SPARSETC_CUSPARSE_STATUS_INVALID_VALUE;
  const std::string& message = handle ? handle->last_error : thread_last_error();
  const size_t n = message.size() < buffer_size - 1 ? message.size() : buffer_size - 1;
  message.copy(buffer, n);
  buffer[n] = '\0';
  return SPARSETC_CUSPARSE_STATUS_SUCCESS;
}

}  // extern "C"

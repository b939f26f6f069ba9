// Shared pieces of the cuSPARSE-shaped API: the call guard (exceptions -> cuSPARSE status codes
// plus a message kept on the handle), the mapping of cuSPARSE enumerations onto sparsetc's, and
// the binding of a sparse descriptor to a borrowed sparsetc matrix.
#pragma once

#include <string>

#include "compat_objects.hpp"
#include "core/error.hpp"

namespace sparsetc::compat {

// sparsetc's status as cuSPARSE's: 0..11 are equal; the extensions map to the nearest code.
sparsetc_cusparseStatus_t to_cusparse_status(sparsetc_status_t status) noexcept;

std::string& thread_last_error();

// Runs a body; a detail::Error (or any exception) becomes a status, its message is kept on the
// handle (and per thread). NOT_SUPPORTED is thrown only before any work is done: the preload
// library forwards such calls to the real cuSPARSE.
template <typename Body>
sparsetc_cusparseStatus_t guarded(sparsetc_cusparseContext* context, const char* function, Body&& body) noexcept {
  std::string message;
  sparsetc_status_t status = SPARSETC_STATUS_SUCCESS;
  try {
    body();
  } catch (const detail::Error& e) {
    status = e.status();
    message = e.what();
  } catch (const std::bad_alloc&) {
    status = SPARSETC_STATUS_ALLOC_FAILED;
    message = "out of host memory";
  } catch (const std::exception& e) {
    status = SPARSETC_STATUS_INTERNAL_ERROR;
    message = e.what();
  } catch (...) {
    status = SPARSETC_STATUS_UNKNOWN_EXCEPTION;
    message = "unknown exception";
  }
  if (status != SPARSETC_STATUS_SUCCESS) message = std::string(function) + ": " + message;
  try {
    if (context) context->last_error = message;
    thread_last_error() = message;
  } catch (...) {
  }
  return to_cusparse_status(status);
}

// Throws the engine's failure (its status and message) when a sparsetc call fails.
void check(sparsetc_status_t status, const Engine& engine);

sparsetc_cusparseContext& context_of(sparsetc_cusparseHandle_t handle);
// The engine handle of a context, on the context's stream.
Engine& engine_of(sparsetc_cusparseContext& context);

// cuSPARSE enumerations -> sparsetc's (NOT_SUPPORTED for what sparsetc does not take).
sparsetc_value_type_t value_type_of(cudaDataType type, const char* what);
sparsetc_index_type_t index_type_of(sparsetc_cusparseIndexType_t type, const char* what);
sparsetc_operation_t operation_of(sparsetc_cusparseOperation_t op, const char* what);
const char* data_type_name(cudaDataType type);

// The borrowed sparsetc matrix over a descriptor's arrays on the context's engine: reused while
// its pattern arrays and sizes stay, given new values by sparsetc_matrix_set_values when
// `reread_values` or when the descriptor's values changed.
MatrixPtr bind_matrix(sparsetc_cusparseContext& context, const sparsetc_cusparseSpMatDescr& descr,
                      bool reread_values);

// SPARSETC_CUSPARSE_VALUES: "reread" (default) reads A's values at every SpMM as cuSPARSE does (the
// plan then prefers the cuSPARSE path, which reads A in place); "stable" lets AUTO take sparsetc's
// kernels on a copy kept until pointers change or SpMatSetValues is called.
bool spmm_rereads_values();

// A scalar of the compute type (float or double) read from host or device memory (device: a
// copy back on the context's stream and a wait for it).
double read_scalar(const sparsetc_cusparseContext& context, const void* scalar, sparsetc_value_type_t type,
                   const char* name);

}  // namespace sparsetc::compat

#include "compat_support.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "gpu/cuda_check.hpp"

namespace sparsetc::compat {

sparsetc_cusparseStatus_t to_cusparse_status(sparsetc_status_t status) noexcept {
  if (status >= SPARSETC_STATUS_SUCCESS && status <= SPARSETC_STATUS_INSUFFICIENT_RESOURCES)
    return static_cast<sparsetc_cusparseStatus_t>(status);
  switch (status) {
    case SPARSETC_STATUS_CUDA_ERROR:
      return SPARSETC_CUSPARSE_STATUS_EXECUTION_FAILED;
    case SPARSETC_STATUS_NO_DEVICE:
      return SPARSETC_CUSPARSE_STATUS_NOT_INITIALIZED;
    case SPARSETC_STATUS_CUSPARSE_ERROR:
    case SPARSETC_STATUS_CUBLAS_ERROR:
    case SPARSETC_STATUS_IO_ERROR:
    case SPARSETC_STATUS_FILE_FORMAT_ERROR:
    case SPARSETC_STATUS_UNKNOWN_EXCEPTION:
      return SPARSETC_CUSPARSE_STATUS_INTERNAL_ERROR;
    default:  // argument, structure, state and size problems
      return SPARSETC_CUSPARSE_STATUS_INVALID_VALUE;
  }
}

std::string& thread_last_error() {
  thread_local std::string message;
  return message;
}

void check(sparsetc_status_t status, const Engine& engine) {
  if (status == SPARSETC_STATUS_SUCCESS) return;
  char message[1024] = {0};
  sparsetc_get_last_error(engine.handle, message, sizeof message);
  if (message[0] == '\0') sparsetc_get_last_error(nullptr, message, sizeof message);
  throw detail::Error(status, message);
}

sparsetc_cusparseContext& context_of(sparsetc_cusparseHandle_t handle) {
  detail::require(handle != nullptr, SPARSETC_STATUS_NOT_INITIALIZED, "handle is NULL");
  return *handle;
}

Engine& engine_of(sparsetc_cusparseContext& context) {
  Engine& engine = *context.engine;
  check(sparsetc_set_stream(engine.handle, context.stream), engine);
  return engine;
}

sparsetc_value_type_t value_type_of(cudaDataType type, const char* what) {
  switch (type) {
    case CUDA_R_32F: return SPARSETC_VALUE_F32;
    case CUDA_R_64F: return SPARSETC_VALUE_F64;
    case CUDA_R_16F: return SPARSETC_VALUE_F16;
    case CUDA_R_16BF: return SPARSETC_VALUE_BF16;
    default:
      detail::fail(SPARSETC_STATUS_NOT_SUPPORTED, what, ": value type ", data_type_name(type),
                   " (sparsetc takes real f32, f64, f16 and bf16)");
  }
}

sparsetc_index_type_t index_type_of(sparsetc_cusparseIndexType_t type, const char* what) {
  detail::require(type == SPARSETC_CUSPARSE_INDEX_32I || type == SPARSETC_CUSPARSE_INDEX_64I,
                  SPARSETC_STATUS_NOT_SUPPORTED, what, ": index type ", int(type), " (sparsetc takes 32I and 64I)");
  return type == SPARSETC_CUSPARSE_INDEX_32I ? SPARSETC_INDEX_32 : SPARSETC_INDEX_64;
}

sparsetc_operation_t operation_of(sparsetc_cusparseOperation_t op, const char* what) {
  // Real types only reach the engine, where the conjugate transpose is the transpose.
  detail::require(op >= SPARSETC_CUSPARSE_OPERATION_NON_TRANSPOSE &&
                      op <= SPARSETC_CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE,
                  SPARSETC_STATUS_INVALID_VALUE, what, ": unknown operation ", int(op));
  return op == SPARSETC_CUSPARSE_OPERATION_NON_TRANSPOSE ? SPARSETC_OP_NON_TRANSPOSE : SPARSETC_OP_TRANSPOSE;
}

const char* data_type_name(cudaDataType type) {
  switch (type) {
    case CUDA_R_32F: return "CUDA_R_32F";
    case CUDA_R_64F: return "CUDA_R_64F";
    case CUDA_R_16F: return "CUDA_R_16F";
    case CUDA_R_16BF: return "CUDA_R_16BF";
    case CUDA_C_32F: return "CUDA_C_32F";
    case CUDA_C_64F: return "CUDA_C_64F";
    case CUDA_R_8I: return "CUDA_R_8I";
    case CUDA_R_32I: return "CUDA_R_32I";
    default: return "a cudaDataType";
  }
}

MatrixPtr bind_matrix(sparsetc_cusparseContext& context, const sparsetc_cusparseSpMatDescr& d, bool reread_values) {
  Engine& engine = engine_of(context);
  MatrixPtr& bound = d.matrix;
  if (bound && bound->engine == context.engine && bound->rows == d.rows && bound->cols == d.cols &&
      bound->nnz == d.nnz && bound->offsets == d.offsets && bound->indices == d.indices) {
    if (reread_values || d.values_changed || bound->values != d.values) {
      check(sparsetc_matrix_set_values(engine.handle, bound->matrix, d.values), engine);
      bound->values = d.values;
      d.values_changed = false;
    }
    return bound;
  }
  detail::require(d.format == SPARSETC_CUSPARSE_FORMAT_CSR || d.format == SPARSETC_CUSPARSE_FORMAT_CSC ||
                      d.format == SPARSETC_CUSPARSE_FORMAT_COO,
                  SPARSETC_STATUS_NOT_SUPPORTED, "sparse format ", int(d.format), " (sparsetc takes CSR, CSC and COO)");
  const sparsetc_value_type_t value_type = value_type_of(d.value_type, "sparse matrix");
  const sparsetc_index_type_t offset_type = index_type_of(d.offset_type, "sparse matrix offsets");
  const sparsetc_index_type_t index_type = index_type_of(d.index_type, "sparse matrix indices");
  auto made = std::make_shared<EngineMatrix>();
  made->engine = context.engine;
  const auto base = static_cast<sparsetc_index_base_t>(d.base);
  sparsetc_status_t status;
  if (d.format == SPARSETC_CUSPARSE_FORMAT_COO)
    status = sparsetc_matrix_create_coo(engine.handle, &made->matrix, d.rows, d.cols, d.nnz, d.offsets, d.indices,
                                        d.values, index_type, base, value_type, SPARSETC_MEMORY_DEVICE,
                                        SPARSETC_BORROW);
  else if (d.format == SPARSETC_CUSPARSE_FORMAT_CSC)
    status = sparsetc_matrix_create_csc(engine.handle, &made->matrix, d.rows, d.cols, d.nnz, d.offsets, d.indices,
                                        d.values, offset_type, index_type, base, value_type, SPARSETC_MEMORY_DEVICE,
                                        SPARSETC_BORROW);
  else
    status = sparsetc_matrix_create_csr(engine.handle, &made->matrix, d.rows, d.cols, d.nnz, d.offsets, d.indices,
                                        d.values, offset_type, index_type, base, value_type, SPARSETC_MEMORY_DEVICE,
                                        SPARSETC_BORROW);
  check(status, engine);
  made->rows = d.rows;
  made->cols = d.cols;
  made->nnz = d.nnz;
  made->offsets = d.offsets;
  made->indices = d.indices;
  made->values = d.values;
  d.values_changed = false;
  d.spmm.reset();  // planned for the matrix being replaced
  bound = made;
  return bound;
}

bool spmm_rereads_values() {
  static const bool reread = [] {
    const char* v = std::getenv("SPARSETC_CUSPARSE_VALUES");
    return !(v && std::strcmp(v, "stable") == 0);
  }();
  return reread;
}

double read_scalar(const sparsetc_cusparseContext& context, const void* scalar, sparsetc_value_type_t type,
                   const char* name) {
  detail::require(scalar != nullptr, SPARSETC_STATUS_NULL_POINTER, name, " is NULL");
  const size_t bytes = type == SPARSETC_VALUE_F64 ? sizeof(double) : sizeof(float);
  unsigned char raw[sizeof(double)] = {0};
  if (context.pointer_mode == SPARSETC_CUSPARSE_POINTER_MODE_DEVICE) {
    // The engine takes alpha and beta by value: a documented read-back (sparsetc_cusparse.h).
    SPARSETC_CUDA_CHECK(cudaMemcpyAsync(raw, scalar, bytes, cudaMemcpyDeviceToHost, context.stream));
    SPARSETC_CUDA_CHECK(cudaStreamSynchronize(context.stream));
  } else {
    std::memcpy(raw, scalar, bytes);
  }
  if (type == SPARSETC_VALUE_F64) {
    double v;
    std::memcpy(&v, raw, sizeof v);
    return v;
  }
  float v;
  std::memcpy(&v, raw, sizeof v);
  return double(v);
}

}  // namespace sparsetc::compat

#include "gpu/spmm/vbr_cublas/cublas_context.hpp"

#include <cstring>

#include "core/error.hpp"

namespace sparsetc::detail {

void throw_cublas_error(cublasStatus_t error, const char* call, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  sparsetc_status_t status = SPARSETC_STATUS_CUBLAS_ERROR;
  if (error == CUBLAS_STATUS_ALLOC_FAILED) status = SPARSETC_STATUS_ALLOC_FAILED;
  if (error == CUBLAS_STATUS_NOT_SUPPORTED) status = SPARSETC_STATUS_NOT_SUPPORTED;
  if (error == CUBLAS_STATUS_ARCH_MISMATCH) status = SPARSETC_STATUS_ARCH_MISMATCH;
  fail(status, "cuBLAS error ", cublasGetStatusName(error), " (", cublasGetStatusString(error), ") in ", call, " at ",
       base ? base + 1 : file, ":", line);
}

CublasContext::CublasContext(const GpuContext& context, size_t workspace_bytes)
    : stream_(context.stream), workspace_(workspace_bytes, context) {
  SPARSETC_CUBLAS_CHECK(cublasCreate(&handle_));
  try {
    SPARSETC_CUBLAS_CHECK(cublasSetStream(handle_, stream_));
    SPARSETC_CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
    SPARSETC_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.data(), workspace_.size()));
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

CublasContext::~CublasContext() {
  if (handle_) cublasDestroy(handle_);
}

cublasHandle_t CublasContext::on(cudaStream_t stream) {
  if (stream != stream_) {
    // cublasSetStream resets the workspace to cuBLAS's default pool: hand ours back.
    SPARSETC_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    SPARSETC_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.data(), workspace_.size()));
    stream_ = stream;
  }
  return handle_;
}

}  // namespace sparsetc::detail

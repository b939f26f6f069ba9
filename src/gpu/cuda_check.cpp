#include "gpu/cuda_check.hpp"

#include <cstring>

namespace sparsetc::detail {

[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  sparsetc_status_t status = SPARSETC_STATUS_CUDA_ERROR;
  if (error == cudaErrorMemoryAllocation) status = SPARSETC_STATUS_ALLOC_FAILED;
  if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver) status = SPARSETC_STATUS_NO_DEVICE;
  fail(status, "CUDA error ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ") in ", call, " at ",
       base ? base + 1 : file, ":", line);
}

[[noreturn]] void throw_cusparse_error(cusparseStatus_t error, const char* call, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  sparsetc_status_t status = SPARSETC_STATUS_CUSPARSE_ERROR;
  // cuSPARSE's own codes 1..11 have the same meaning and value as ours; keep the precise ones.
  if (error == CUSPARSE_STATUS_ALLOC_FAILED || error == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES ||
      error == CUSPARSE_STATUS_NOT_SUPPORTED || error == CUSPARSE_STATUS_ARCH_MISMATCH)
    status = sparsetc_status_t(error);
  fail(status, "cuSPARSE error ", cusparseGetErrorName(error), " (", cusparseGetErrorString(error), ") in ", call,
       " at ", base ? base + 1 : file, ":", line);
}

}  // namespace sparsetc::detail

// Every CUDA runtime and cuSPARSE call goes through these checks: a failure becomes an Error with
// the call, the file and line, and the library's own explanation.
#pragma once

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "core/error.hpp"

namespace sparsetc::detail {

[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line);

}  // namespace sparsetc::detail

#define SPARSETC_CUDA_CHECK(call)                                                                    \
  do {                                                                                              \
    cudaError_t sparsetc_cuda_status_ = (call);                                                     \
    if (sparsetc_cuda_status_ != cudaSuccess)                                                       \
      ::sparsetc::detail::throw_cuda_error(sparsetc_cuda_status_, #call, __FILE__, __LINE__);       \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define SPARSETC_CUDA_CHECK_LAUNCH() SPARSETC_CUDA_CHECK(cudaGetLastError())

#define SPARSETC_CUSPARSE_CHECK(call)                                                                \
  do {                                                                                              \
    cusparseStatus_t sparsetc_cusparse_status_ = (call);                                            \
    if (sparsetc_cusparse_status_ != CUSPARSE_STATUS_SUCCESS)                                       \
      ::sparsetc::detail::throw_cusparse_error(sparsetc_cusparse_status_, #call, __FILE__, __LINE__); \
  } while (0)

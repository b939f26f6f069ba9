// One cuBLAS handle owned by a VBR-cuBLAS plan: bound to the sparsetc handle's stream, with its
// workspace taken from the plan's allocator (DeviceBuffer), so cuBLAS allocates nothing of its own
// during a multiply and its results are reproducible run to run.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "gpu/device_memory.hpp"
#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {

// cuBLAS failures as Errors: CUBLAS_ERROR, except ALLOC_FAILED, NOT_SUPPORTED and ARCH_MISMATCH,
// which keep their (equal) meaning in our status codes.
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

class CublasContext {
 public:
  // Creates the handle on context.stream with a workspace of `workspace_bytes`.
  CublasContext(const GpuContext& context, size_t workspace_bytes);
  ~CublasContext();
  CublasContext(const CublasContext&) = delete;
  CublasContext& operator=(const CublasContext&) = delete;

  // The handle, set to `stream` (the caller's handle may have been given a new stream since).
  cublasHandle_t on(cudaStream_t stream);

 private:
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace sparsetc::detail

#define SPARSETC_CUBLAS_CHECK(call)                                                                  \
  do {                                                                                              \
    cublasStatus_t sparsetc_cublas_status_ = (call);                                                \
    if (sparsetc_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                           \
      ::sparsetc::detail::throw_cublas_error(sparsetc_cublas_status_, #call, __FILE__, __LINE__);   \
  } while (0)

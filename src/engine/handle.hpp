// The library context behind sparsetc_handle_t.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "sparsetc/sparsetc_types.h"

#include "gpu/allocators.hpp"
#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {
class CusparseContext;
}

struct sparsetc_handle_s {
  sparsetc_backend_t backend = SPARSETC_BACKEND_CPU;
  int device = -1;                  // CUDA ordinal on the GPU backend
  cudaStream_t stream = nullptr;    // the caller's stream; the library never creates one
  sparsetc_validation_t validation = SPARSETC_VALIDATE_STRUCTURE;
  sparsetc_duplicates_t duplicates = SPARSETC_DUPLICATES_ERROR;
  int threads = 0;                  // CPU engine threads (0 = all)
  std::string last_error;           // message of the last failure, empty after a success
  std::unique_ptr<sparsetc::detail::CusparseContext> cusparse;  // created at first use
  // Device memory: the handle's pool, or the caller's allocator, behind the accounting.
  std::unique_ptr<sparsetc::detail::PoolAllocator> pool;
  std::unique_ptr<sparsetc::detail::CallbackAllocator> user_allocator;
  sparsetc::detail::TrackingAllocator memory;

  sparsetc_handle_s();
  ~sparsetc_handle_s();
  // Makes the handle's device current for the calling thread (GPU backend only).
  void activate() const;
  sparsetc::detail::CusparseContext& cusparse_context();
  // Where device work of this handle runs and allocates.
  sparsetc::detail::GpuContext gpu() { return {stream, &memory}; }
};

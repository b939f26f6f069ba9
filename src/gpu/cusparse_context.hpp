// One cuSPARSE handle per sparsetc handle, bound to its stream at every use.
#pragma once

#include <cuda_runtime_api.h>
#include <cusparse.h>

namespace sparsetc::detail {

class CusparseContext {
 public:
  CusparseContext();
  ~CusparseContext();
  CusparseContext(const CusparseContext&) = delete;
  CusparseContext& operator=(const CusparseContext&) = delete;
  // The handle, set to `stream`.
  cusparseHandle_t on(cudaStream_t stream);

 private:
  cusparseHandle_t handle_ = nullptr;
};

}  // namespace sparsetc::detail

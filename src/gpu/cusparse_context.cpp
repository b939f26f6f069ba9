#include "gpu/cusparse_context.hpp"

#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {

CusparseContext::CusparseContext() { SPARSETC_CUSPARSE_CHECK(cusparseCreate(&handle_)); }

CusparseContext::~CusparseContext() {
  if (handle_) cusparseDestroy(handle_);
}

cusparseHandle_t CusparseContext::on(cudaStream_t stream) {
  SPARSETC_CUSPARSE_CHECK(cusparseSetStream(handle_, stream));
  return handle_;
}

}  // namespace sparsetc::detail

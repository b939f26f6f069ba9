// Intercepted SpMM: served by sparsetc (sparsetc_cusparseSpMM* on descriptors made from cuSPARSE's
// own) when it takes the case, forwarded to the real cuSPARSE otherwise.
#include <string>

#include "preload_state.hpp"

using namespace sparsetc::preload;

#define PRELOAD_API extern "C" __attribute__((visibility("default")))

namespace {

// Device-resident alpha/beta would cost sparsetc a synchronisation: cuSPARSE keeps those calls.
void require_host_scalars(cusparseHandle_t handle) {
  cusparsePointerMode_t mode = CUSPARSE_POINTER_MODE_HOST;
  if (REAL(cusparseGetPointerMode)(handle, &mode) != CUSPARSE_STATUS_SUCCESS || mode != CUSPARSE_POINTER_MODE_HOST)
    throw Unsupported("alpha and beta are in device memory (CUSPARSE_POINTER_MODE_DEVICE)");
}

std::string describe_spmm(sparsetc_cusparseConstSpMatDescr_t A, const CompatDense& C, cudaDataType compute) {
  int64_t rows = 0, cols = 0, ld = 0;
  void* values = nullptr;
  cudaDataType type = CUDA_R_32F;
  sparsetc_cusparseOrder_t order = SPARSETC_CUSPARSE_ORDER_COL;
  {
    InsideSparsetc inside;
    sparsetc_cusparseDnMatGet(C.get(), &rows, &cols, &ld, &values, &type, &order);
  }
  return describe(A) + ", N " + std::to_string(cols) + ", compute " +
         (compute == CUDA_R_64F ? "CUDA_R_64F" : compute == CUDA_R_32F ? "CUDA_R_32F" : "other");
}

#define SPMM_ARGS(A, B, C)                                                                                   \
  static_cast<sparsetc_cusparseOperation_t>(opA), static_cast<sparsetc_cusparseOperation_t>(opB), alpha, A, B, \
      beta, C, computeType, static_cast<sparsetc_cusparseSpMMAlg_t>(alg)

}  // namespace

PRELOAD_API cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t handle, cusparseOperation_t opA,
                                                     cusparseOperation_t opB, const void* alpha,
                                                     cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                                                     const void* beta, cusparseDnMatDescr_t matC,
                                                     cudaDataType computeType, cusparseSpMMAlg_t alg,
                                                     size_t* bufferSize) {
  auto forward = [&] {
    ForwardedSparse a(matA);
    return REAL(cusparseSpMM_bufferSize)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg,
                                         bufferSize);
  };
  if (inside_sparsetc()) return REAL(cusparseSpMM_bufferSize)(handle, opA, opB, alpha, matA, matB, beta, matC,
                                                              computeType, alg, bufferSize);
  if (!intercepts(kSpmm)) return forward();
  return serve_or_forward("cusparseSpMM_bufferSize", [&] {
    require_host_scalars(handle);
    sparsetc_cusparseHandle_t h = compat_handle(handle);
    sparsetc_cusparseSpMatDescr_t A = compat_sparse(matA);
    CompatDense B(matB), C(matC);
    size_t ours = 0;
    sparsetc_cusparseStatus_t status;
    {
      InsideSparsetc inside;
      status = sparsetc_cusparseSpMM_bufferSize(h, SPMM_ARGS(A, B.get(), C.get()), &ours);
    }
    const cusparseStatus_t result = finish("cusparseSpMM_bufferSize", h, status, describe_spmm(A, C, computeType));
    // sparsetc plans here and needs no buffer; cuSPARSE's size is reported so that a later call
    // forwarded (say, in device pointer mode) still gets the buffer it needs.
    if (result == CUSPARSE_STATUS_SUCCESS && forward() != CUSPARSE_STATUS_SUCCESS) *bufferSize = ours;
    return result;
  }, forward);
}

PRELOAD_API cusparseStatus_t cusparseSpMM_preprocess(cusparseHandle_t handle, cusparseOperation_t opA,
                                                     cusparseOperation_t opB, const void* alpha,
                                                     cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                                                     const void* beta, cusparseDnMatDescr_t matC,
                                                     cudaDataType computeType, cusparseSpMMAlg_t alg,
                                                     void* externalBuffer) {
  auto forward = [&] {
    ForwardedSparse a(matA);
    return REAL(cusparseSpMM_preprocess)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg,
                                         externalBuffer);
  };
  if (inside_sparsetc()) return REAL(cusparseSpMM_preprocess)(handle, opA, opB, alpha, matA, matB, beta, matC,
                                                              computeType, alg, externalBuffer);
  if (!intercepts(kSpmm)) return forward();
  return serve_or_forward("cusparseSpMM_preprocess", [&] {
    require_host_scalars(handle);
    sparsetc_cusparseHandle_t h = compat_handle(handle);
    sparsetc_cusparseSpMatDescr_t A = compat_sparse(matA);
    CompatDense B(matB), C(matC);
    sparsetc_cusparseStatus_t status;
    {
      InsideSparsetc inside;
      status = sparsetc_cusparseSpMM_preprocess(h, SPMM_ARGS(A, B.get(), C.get()), externalBuffer);
    }
    return finish("cusparseSpMM_preprocess", h, status, describe_spmm(A, C, computeType));
  }, forward);
}

PRELOAD_API cusparseStatus_t cusparseSpMM(cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                                          const void* alpha, cusparseConstSpMatDescr_t matA,
                                          cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
                                          cudaDataType computeType, cusparseSpMMAlg_t alg, void* externalBuffer) {
  auto forward = [&] {
    ForwardedSparse a(matA);
    return REAL(cusparseSpMM)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg, externalBuffer);
  };
  if (inside_sparsetc())
    return REAL(cusparseSpMM)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, externalBuffer);
  if (!intercepts(kSpmm)) return forward();
  return serve_or_forward("cusparseSpMM", [&] {
    require_host_scalars(handle);
    sparsetc_cusparseHandle_t h = compat_handle(handle);
    sparsetc_cusparseSpMatDescr_t A = compat_sparse(matA);
    CompatDense B(matB), C(matC);
    sparsetc_cusparseStatus_t status;
    {
      InsideSparsetc inside;
      status = sparsetc_cusparseSpMM(h, SPMM_ARGS(A, B.get(), C.get()), externalBuffer);
    }
    return finish("cusparseSpMM", h, status, describe_spmm(A, C, computeType));
  }, forward);
}

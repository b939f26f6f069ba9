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

// The sparsetc operands of one SpMM call, made from cuSPARSE's descriptors.
struct SpmmOperands {
  sparsetc_cusparseHandle_t handle;
  sparsetc_cusparseSpMatDescr_t A;
  const CompatDense& B;
  const CompatDense& C;
};

// Every SpMM stage takes the same path: straight to cuSPARSE from inside sparsetc (`raw`); to
// cuSPARSE with a refreshed A when SpMM is not intercepted or sparsetc declines (`forward`);
// otherwise `ours(operands)` inside sparsetc, logged by finish(), then `after(result)`.
template <typename Raw, typename Forward, typename Ours, typename After>
cusparseStatus_t spmm_stage(const char* function, cusparseHandle_t handle, cusparseConstSpMatDescr_t matA,
                            cusparseConstDnMatDescr_t matB, cusparseDnMatDescr_t matC, cudaDataType compute, Raw&& raw,
                            Forward&& forward, Ours&& ours, After&& after) noexcept {
  if (inside_sparsetc()) return raw();
  if (!intercepts(kSpmm)) return forward();
  return serve_or_forward(function, [&] {
    require_host_scalars(handle);
    const CompatDense B(matB), C(matC);
    const SpmmOperands o{compat_handle(handle), compat_sparse(matA), B, C};
    sparsetc_cusparseStatus_t status;
    {
      InsideSparsetc inside;
      status = ours(o);
    }
    const cusparseStatus_t result = finish(function, o.handle, status, describe_spmm(o.A, C, compute));
    after(result);
    return result;
  }, forward);
}

constexpr auto kNothingAfter = [](cusparseStatus_t) {};

}  // namespace

PRELOAD_API cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t handle, cusparseOperation_t opA,
                                                     cusparseOperation_t opB, const void* alpha,
                                                     cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                                                     const void* beta, cusparseDnMatDescr_t matC,
                                                     cudaDataType computeType, cusparseSpMMAlg_t alg,
                                                     size_t* bufferSize) {
  size_t ours = 0;
  return spmm_stage(
      "cusparseSpMM_bufferSize", handle, matA, matB, matC, computeType,
      [&] {
        return REAL(cusparseSpMM_bufferSize)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
                                             bufferSize);
      },
      [&] {
        ForwardedSparse a(matA);
        return REAL(cusparseSpMM_bufferSize)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg,
                                             bufferSize);
      },
      [&](const SpmmOperands& o) {
        return sparsetc_cusparseSpMM_bufferSize(o.handle, SPMM_ARGS(o.A, o.B.get(), o.C.get()), &ours);
      },
      // sparsetc plans here and needs no buffer; cuSPARSE's size is reported so that a later call
      // forwarded (say, in device pointer mode) still gets the buffer it needs.
      [&](cusparseStatus_t result) {
        if (result != CUSPARSE_STATUS_SUCCESS) return;
        ForwardedSparse a(matA);
        if (REAL(cusparseSpMM_bufferSize)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg,
                                          bufferSize) != CUSPARSE_STATUS_SUCCESS)
          *bufferSize = ours;
      });
}

PRELOAD_API cusparseStatus_t cusparseSpMM_preprocess(cusparseHandle_t handle, cusparseOperation_t opA,
                                                     cusparseOperation_t opB, const void* alpha,
                                                     cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                                                     const void* beta, cusparseDnMatDescr_t matC,
                                                     cudaDataType computeType, cusparseSpMMAlg_t alg,
                                                     void* externalBuffer) {
  return spmm_stage(
      "cusparseSpMM_preprocess", handle, matA, matB, matC, computeType,
      [&] {
        return REAL(cusparseSpMM_preprocess)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
                                             externalBuffer);
      },
      [&] {
        ForwardedSparse a(matA);
        return REAL(cusparseSpMM_preprocess)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg,
                                             externalBuffer);
      },
      [&](const SpmmOperands& o) {
        return sparsetc_cusparseSpMM_preprocess(o.handle, SPMM_ARGS(o.A, o.B.get(), o.C.get()), externalBuffer);
      },
      kNothingAfter);
}

PRELOAD_API cusparseStatus_t cusparseSpMM(cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                                          const void* alpha, cusparseConstSpMatDescr_t matA,
                                          cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
                                          cudaDataType computeType, cusparseSpMMAlg_t alg, void* externalBuffer) {
  return spmm_stage(
      "cusparseSpMM", handle, matA, matB, matC, computeType,
      [&] {
        return REAL(cusparseSpMM)(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, externalBuffer);
      },
      [&] {
        ForwardedSparse a(matA);
        return REAL(cusparseSpMM)(handle, opA, opB, alpha, a.get(), matB, beta, matC, computeType, alg,
                                  externalBuffer);
      },
      [&](const SpmmOperands& o) {
        return sparsetc_cusparseSpMM(o.handle, SPMM_ARGS(o.A, o.B.get(), o.C.get()), externalBuffer);
      },
      kNothingAfter);
}

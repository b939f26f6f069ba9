// Intercepted descriptor calls: each runs the real cuSPARSE function, then keeps the side table
// right: purged at destruction (addresses are reused), nnz overlaid for products sparsetc made
// (cuSPARSE's descriptor still counts 0 entries), new values passed on.
#include "preload_state.hpp"

using namespace sparsetc::preload;

#define PRELOAD_API extern "C" __attribute__((visibility("default")))

PRELOAD_API cusparseStatus_t cusparseDestroy(cusparseHandle_t handle) {
  if (!inside_sparsetc()) {
    std::lock_guard<std::recursive_mutex> lock(serve_mutex());
    forget_handle(handle);
  }
  return REAL(cusparseDestroy)(handle);
}

PRELOAD_API cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t spMatDescr) {
  if (!inside_sparsetc()) {
    std::lock_guard<std::recursive_mutex> lock(serve_mutex());
    forget_sparse(spMatDescr);
  }
  return REAL(cusparseDestroySpMat)(spMatDescr);
}

PRELOAD_API cusparseStatus_t cusparseSpGEMM_destroyDescr(cusparseSpGEMMDescr_t descr) {
  if (!inside_sparsetc()) {
    std::lock_guard<std::recursive_mutex> lock(serve_mutex());
    forget_spgemm(descr);
  }
  return REAL(cusparseSpGEMM_destroyDescr)(descr);
}

PRELOAD_API cusparseStatus_t cusparseSpMatSetValues(cusparseSpMatDescr_t spMatDescr, void* values) {
  const cusparseStatus_t status = REAL(cusparseSpMatSetValues)(spMatDescr, values);
  if (status == CUSPARSE_STATUS_SUCCESS && !inside_sparsetc()) {
    std::lock_guard<std::recursive_mutex> lock(serve_mutex());
    sparse_values_set(spMatDescr, values);
  }
  return status;
}

PRELOAD_API cusparseStatus_t cusparseSpMatGetSize(cusparseConstSpMatDescr_t spMatDescr, int64_t* rows, int64_t* cols,
                                                  int64_t* nnz) {
  const cusparseStatus_t status = REAL(cusparseSpMatGetSize)(spMatDescr, rows, cols, nnz);
  if (status == CUSPARSE_STATUS_SUCCESS && nnz && *nnz == 0) {
    const int64_t overlaid = overlay_nnz(spMatDescr);
    if (overlaid >= 0) *nnz = overlaid;
  }
  return status;
}

PRELOAD_API cusparseStatus_t cusparseCsrGet(cusparseSpMatDescr_t spMatDescr, int64_t* rows, int64_t* cols,
                                            int64_t* nnz, void** csrRowOffsets, void** csrColInd, void** csrValues,
                                            cusparseIndexType_t* csrRowOffsetsType, cusparseIndexType_t* csrColIndType,
                                            cusparseIndexBase_t* idxBase, cudaDataType* valueType) {
  const cusparseStatus_t status = REAL(cusparseCsrGet)(spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd,
                                                       csrValues, csrRowOffsetsType, csrColIndType, idxBase, valueType);
  if (status == CUSPARSE_STATUS_SUCCESS && nnz && *nnz == 0) {
    const int64_t overlaid = overlay_nnz(spMatDescr);
    if (overlaid >= 0) *nnz = overlaid;
  }
  return status;
}

PRELOAD_API cusparseStatus_t cusparseConstCsrGet(cusparseConstSpMatDescr_t spMatDescr, int64_t* rows, int64_t* cols,
                                                 int64_t* nnz, const void** csrRowOffsets, const void** csrColInd,
                                                 const void** csrValues, cusparseIndexType_t* csrRowOffsetsType,
                                                 cusparseIndexType_t* csrColIndType, cusparseIndexBase_t* idxBase,
                                                 cudaDataType* valueType) {
  const cusparseStatus_t status = REAL(cusparseConstCsrGet)(spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd,
                                                            csrValues, csrRowOffsetsType, csrColIndType, idxBase,
                                                            valueType);
  if (status == CUSPARSE_STATUS_SUCCESS && nnz && *nnz == 0) {
    const int64_t overlaid = overlay_nnz(spMatDescr);
    if (overlaid >= 0) *nnz = overlaid;
  }
  return status;
}

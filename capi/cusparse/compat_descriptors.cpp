// Sparse and dense descriptors of the cuSPARSE-shaped API. They record the caller's description
// (device arrays are borrowed, never copied or checked here, as in cuSPARSE); sparsetc objects
// are made from them at the first multiply.
#include "compat_support.hpp"
#include "sparsetc/sparsetc_cusparse.h"

using namespace sparsetc;
using namespace sparsetc::compat;

namespace {

sparsetc_cusparseSpMatDescr* make_sparse(sparsetc_cusparseFormat_t format, int64_t rows, int64_t cols, int64_t nnz,
                                         const void* offsets, const void* indices, const void* values,
                                         sparsetc_cusparseIndexType_t offset_type,
                                         sparsetc_cusparseIndexType_t index_type, sparsetc_cusparseIndexBase_t base,
                                         cudaDataType value_type) {
  detail::require(rows >= 0 && cols >= 0 && nnz >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative size (rows ", rows,
                  ", cols ", cols, ", nnz ", nnz, ")");
  detail::require(base == SPARSETC_CUSPARSE_INDEX_BASE_ZERO || base == SPARSETC_CUSPARSE_INDEX_BASE_ONE,
                  SPARSETC_STATUS_INVALID_VALUE, "unknown index base ", int(base));
  auto d = std::make_unique<sparsetc_cusparseSpMatDescr>();
  d->format = format;
  d->rows = rows;
  d->cols = cols;
  d->nnz = nnz;
  d->offsets = const_cast<void*>(offsets);
  d->indices = const_cast<void*>(indices);
  d->values = const_cast<void*>(values);
  d->offset_type = offset_type;
  d->index_type = index_type;
  d->base = base;
  d->value_type = value_type;
  return d.release();
}

sparsetc_cusparseDnMatDescr* make_dense(int64_t rows, int64_t cols, int64_t ld, const void* values,
                                        cudaDataType value_type, sparsetc_cusparseOrder_t order) {
  detail::require(rows >= 0 && cols >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative size");
  detail::require(order == SPARSETC_CUSPARSE_ORDER_COL || order == SPARSETC_CUSPARSE_ORDER_ROW,
                  SPARSETC_STATUS_INVALID_VALUE, "unknown order ", int(order));
  const int64_t least = order == SPARSETC_CUSPARSE_ORDER_COL ? rows : cols;
  detail::require(ld >= least && ld >= 1, SPARSETC_STATUS_INVALID_VALUE, "ld ", ld, " is below ", least);
  auto d = std::make_unique<sparsetc_cusparseDnMatDescr>();
  d->rows = rows;
  d->cols = cols;
  d->ld = ld;
  d->values = const_cast<void*>(values);
  d->value_type = value_type;
  d->order = order;
  return d.release();
}

}  // namespace

extern "C" {

sparsetc_cusparseStatus_t sparsetc_cusparseCreateCsr(sparsetc_cusparseSpMatDescr_t* spMatDescr, int64_t rows,
                                                     int64_t cols, int64_t nnz, void* csrRowOffsets, void* csrColInd,
                                                     void* csrValues, sparsetc_cusparseIndexType_t csrRowOffsetsType,
                                                     sparsetc_cusparseIndexType_t csrColIndType,
                                                     sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "spMatDescr is NULL");
    *spMatDescr = make_sparse(SPARSETC_CUSPARSE_FORMAT_CSR, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues,
                              csrRowOffsetsType, csrColIndType, idxBase, valueType);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCreateConstCsr(sparsetc_cusparseConstSpMatDescr_t* spMatDescr,
                                                          int64_t rows, int64_t cols, int64_t nnz,
                                                          const void* csrRowOffsets, const void* csrColInd,
                                                          const void* csrValues,
                                                          sparsetc_cusparseIndexType_t csrRowOffsetsType,
                                                          sparsetc_cusparseIndexType_t csrColIndType,
                                                          sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "spMatDescr is NULL");
    *spMatDescr = make_sparse(SPARSETC_CUSPARSE_FORMAT_CSR, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues,
                              csrRowOffsetsType, csrColIndType, idxBase, valueType);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCreateCsc(sparsetc_cusparseSpMatDescr_t* spMatDescr, int64_t rows,
                                                     int64_t cols, int64_t nnz, void* cscColOffsets, void* cscRowInd,
                                                     void* cscValues, sparsetc_cusparseIndexType_t cscColOffsetsType,
                                                     sparsetc_cusparseIndexType_t cscRowIndType,
                                                     sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "spMatDescr is NULL");
    *spMatDescr = make_sparse(SPARSETC_CUSPARSE_FORMAT_CSC, rows, cols, nnz, cscColOffsets, cscRowInd, cscValues,
                              cscColOffsetsType, cscRowIndType, idxBase, valueType);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCreateCoo(sparsetc_cusparseSpMatDescr_t* spMatDescr, int64_t rows,
                                                     int64_t cols, int64_t nnz, void* cooRowInd, void* cooColInd,
                                                     void* cooValues, sparsetc_cusparseIndexType_t cooIdxType,
                                                     sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "spMatDescr is NULL");
    *spMatDescr = make_sparse(SPARSETC_CUSPARSE_FORMAT_COO, rows, cols, nnz, cooRowInd, cooColInd, cooValues,
                              cooIdxType, cooIdxType, idxBase, valueType);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseDestroySpMat(sparsetc_cusparseConstSpMatDescr_t spMatDescr) {
  return guarded(nullptr, __func__, [&] { delete spMatDescr; });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpMatGetSize(sparsetc_cusparseConstSpMatDescr_t spMatDescr, int64_t* rows,
                                                        int64_t* cols, int64_t* nnz) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr && rows && cols && nnz, SPARSETC_STATUS_INVALID_VALUE, "a NULL argument");
    *rows = spMatDescr->rows;
    *cols = spMatDescr->cols;
    *nnz = spMatDescr->nnz;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpMatGetFormat(sparsetc_cusparseConstSpMatDescr_t spMatDescr,
                                                          sparsetc_cusparseFormat_t* format) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr && format, SPARSETC_STATUS_INVALID_VALUE, "a NULL argument");
    *format = spMatDescr->format;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpMatSetValues(sparsetc_cusparseSpMatDescr_t spMatDescr, void* values) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "spMatDescr is NULL");
    detail::require(values != nullptr || spMatDescr->nnz == 0, SPARSETC_STATUS_INVALID_VALUE, "values is NULL");
    spMatDescr->values = values;
    spMatDescr->values_changed = true;  // also for the same pointer: the caller says they changed
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCsrGet(sparsetc_cusparseSpMatDescr_t spMatDescr, int64_t* rows,
                                                  int64_t* cols, int64_t* nnz, void** csrRowOffsets, void** csrColInd,
                                                  void** csrValues, sparsetc_cusparseIndexType_t* csrRowOffsetsType,
                                                  sparsetc_cusparseIndexType_t* csrColIndType,
                                                  sparsetc_cusparseIndexBase_t* idxBase, cudaDataType* valueType) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr && rows && cols && nnz && csrRowOffsets && csrColInd && csrValues &&
                        csrRowOffsetsType && csrColIndType && idxBase && valueType,
                    SPARSETC_STATUS_INVALID_VALUE, "a NULL argument");
    detail::require(spMatDescr->format == SPARSETC_CUSPARSE_FORMAT_CSR, SPARSETC_STATUS_INVALID_VALUE,
                    "the descriptor is not CSR");
    *rows = spMatDescr->rows;
    *cols = spMatDescr->cols;
    *nnz = spMatDescr->nnz;
    *csrRowOffsets = spMatDescr->offsets;
    *csrColInd = spMatDescr->indices;
    *csrValues = spMatDescr->values;
    *csrRowOffsetsType = spMatDescr->offset_type;
    *csrColIndType = spMatDescr->index_type;
    *idxBase = spMatDescr->base;
    *valueType = spMatDescr->value_type;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCsrSetPointers(sparsetc_cusparseSpMatDescr_t spMatDescr,
                                                          void* csrRowOffsets, void* csrColInd, void* csrValues) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "spMatDescr is NULL");
    detail::require(spMatDescr->format == SPARSETC_CUSPARSE_FORMAT_CSR, SPARSETC_STATUS_INVALID_VALUE,
                    "the descriptor is not CSR");
    detail::require(csrRowOffsets != nullptr, SPARSETC_STATUS_INVALID_VALUE, "csrRowOffsets is NULL");
    spMatDescr->offsets = csrRowOffsets;
    spMatDescr->indices = csrColInd;
    spMatDescr->values = csrValues;
    spMatDescr->values_changed = true;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCreateDnMat(sparsetc_cusparseDnMatDescr_t* dnMatDescr, int64_t rows,
                                                       int64_t cols, int64_t ld, void* values, cudaDataType valueType,
                                                       sparsetc_cusparseOrder_t order) {
  return guarded(nullptr, __func__, [&] {
    detail::require(dnMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "dnMatDescr is NULL");
    *dnMatDescr = make_dense(rows, cols, ld, values, valueType, order);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseCreateConstDnMat(sparsetc_cusparseConstDnMatDescr_t* dnMatDescr,
                                                            int64_t rows, int64_t cols, int64_t ld, const void* values,
                                                            cudaDataType valueType, sparsetc_cusparseOrder_t order) {
  return guarded(nullptr, __func__, [&] {
    detail::require(dnMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "dnMatDescr is NULL");
    *dnMatDescr = make_dense(rows, cols, ld, values, valueType, order);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseDestroyDnMat(sparsetc_cusparseConstDnMatDescr_t dnMatDescr) {
  return guarded(nullptr, __func__, [&] { delete dnMatDescr; });
}

sparsetc_cusparseStatus_t sparsetc_cusparseDnMatGet(sparsetc_cusparseDnMatDescr_t dnMatDescr, int64_t* rows,
                                                    int64_t* cols, int64_t* ld, void** values, cudaDataType* type,
                                                    sparsetc_cusparseOrder_t* order) {
  return guarded(nullptr, __func__, [&] {
    detail::require(dnMatDescr && rows && cols && ld && values && type && order, SPARSETC_STATUS_INVALID_VALUE,
                    "a NULL argument");
    *rows = dnMatDescr->rows;
    *cols = dnMatDescr->cols;
    *ld = dnMatDescr->ld;
    *values = dnMatDescr->values;
    *type = dnMatDescr->value_type;
    *order = dnMatDescr->order;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseDnMatSetValues(sparsetc_cusparseDnMatDescr_t dnMatDescr, void* values) {
  return guarded(nullptr, __func__, [&] {
    detail::require(dnMatDescr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "dnMatDescr is NULL");
    dnMatDescr->values = values;
  });
}

}  // extern "C"

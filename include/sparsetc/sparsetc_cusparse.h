/* sparsetc: the cuSPARSE generic API for SpMM and SpGEMM under the sparsetc_ prefix (docs/dropin.md).
 *
 * Porting a program from cuSPARSE is the mechanical rename
 *     sed -e 's/cusparse/sparsetc_cusparse/g' -e 's/CUSPARSE_/SPARSETC_CUSPARSE_/g'
 * (cusparseSpMM -> sparsetc_cusparseSpMM, CUSPARSE_INDEX_32I -> SPARSETC_CUSPARSE_INDEX_32I,
 * #include <cusparse.h> -> #include <sparsetc_cusparse.h>, found in <prefix>/include/sparsetc).
 * Signatures, enumerator values and semantics are cuSPARSE's (CUDA 12/13); the calls run on the
 * sparsetc engine, whose AUTO choice includes cuSPARSE itself.
 *
 * Differences a caller can observe:
 *  - *_bufferSize, SpGEMM_workEstimation/compute and the reuse calls report the bytes sparsetc
 *    needs from the caller: 0 for SpMM, a small token (SPARSETC_CUSPARSE_TOKEN_BUFFER_BYTES) for
 *    the SpGEMM stages, which keep their working memory in the handle's stream-ordered pool.
 *  - SPARSETC_CUSPARSE_STATUS_NOT_SUPPORTED is returned, before any work is done, for a case the
 *    engine does not take (see docs/dropin.md); the preload library forwards exactly those calls
 *    to the real cuSPARSE.
 *  - SpMM with CUSPARSE_POINTER_MODE_DEVICE reads alpha and beta back (a synchronisation).
 *  - A's values are read in place at every SpMM, as cuSPARSE does (the plan then runs cuSPARSE with
 *    sparsetc's algorithm choice); SPARSETC_CUSPARSE_VALUES=stable lets AUTO take sparsetc's own
 *    kernels on a converted copy, kept until the descriptor's pointers change or SpMatSetValues.
 * sparsetc_cusparse_get_last_error gives the message of a handle's last failure. */
#ifndef SPARSETC_CUSPARSE_H
#define SPARSETC_CUSPARSE_H

#include <cuda_runtime_api.h> /* cudaStream_t */
#include <library_types.h>    /* cudaDataType */
#include <stddef.h>
#include <stdint.h>

#include "sparsetc/sparsetc_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- enumerations: cuSPARSE's names and values ---- */
typedef enum {
  SPARSETC_CUSPARSE_STATUS_SUCCESS = 0,
  SPARSETC_CUSPARSE_STATUS_NOT_INITIALIZED = 1,
  SPARSETC_CUSPARSE_STATUS_ALLOC_FAILED = 2,
  SPARSETC_CUSPARSE_STATUS_INVALID_VALUE = 3,
  SPARSETC_CUSPARSE_STATUS_ARCH_MISMATCH = 4,
  SPARSETC_CUSPARSE_STATUS_MAPPING_ERROR = 5,
  SPARSETC_CUSPARSE_STATUS_EXECUTION_FAILED = 6,
  SPARSETC_CUSPARSE_STATUS_INTERNAL_ERROR = 7,
  SPARSETC_CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8,
  SPARSETC_CUSPARSE_STATUS_ZERO_PIVOT = 9,
  SPARSETC_CUSPARSE_STATUS_NOT_SUPPORTED = 10,
  SPARSETC_CUSPARSE_STATUS_INSUFFICIENT_RESOURCES = 11
} sparsetc_cusparseStatus_t;

typedef enum {
  SPARSETC_CUSPARSE_POINTER_MODE_HOST = 0,
  SPARSETC_CUSPARSE_POINTER_MODE_DEVICE = 1
} sparsetc_cusparsePointerMode_t;

typedef enum {
  SPARSETC_CUSPARSE_INDEX_BASE_ZERO = 0,
  SPARSETC_CUSPARSE_INDEX_BASE_ONE = 1
} sparsetc_cusparseIndexBase_t;

typedef enum {
  SPARSETC_CUSPARSE_OPERATION_NON_TRANSPOSE = 0,
  SPARSETC_CUSPARSE_OPERATION_TRANSPOSE = 1,
  SPARSETC_CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE = 2
} sparsetc_cusparseOperation_t;

typedef enum {
  SPARSETC_CUSPARSE_FORMAT_CSR = 1,
  SPARSETC_CUSPARSE_FORMAT_CSC = 2,
  SPARSETC_CUSPARSE_FORMAT_COO = 3,
  SPARSETC_CUSPARSE_FORMAT_BLOCKED_ELL = 5,
  SPARSETC_CUSPARSE_FORMAT_BSR = 6,
  SPARSETC_CUSPARSE_FORMAT_SLICED_ELLPACK = 7
} sparsetc_cusparseFormat_t;

typedef enum {
  SPARSETC_CUSPARSE_ORDER_COL = 1,
  SPARSETC_CUSPARSE_ORDER_ROW = 2
} sparsetc_cusparseOrder_t;

typedef enum {
  SPARSETC_CUSPARSE_INDEX_16U = 1,
  SPARSETC_CUSPARSE_INDEX_32I = 2,
  SPARSETC_CUSPARSE_INDEX_64I = 3
} sparsetc_cusparseIndexType_t;

typedef enum {
  SPARSETC_CUSPARSE_SPMM_ALG_DEFAULT = 0,
  SPARSETC_CUSPARSE_SPMM_COO_ALG1 = 1,
  SPARSETC_CUSPARSE_SPMM_COO_ALG2 = 2,
  SPARSETC_CUSPARSE_SPMM_COO_ALG3 = 3,
  SPARSETC_CUSPARSE_SPMM_COO_ALG4 = 5,
  SPARSETC_CUSPARSE_SPMM_CSR_ALG1 = 4,
  SPARSETC_CUSPARSE_SPMM_CSR_ALG2 = 6,
  SPARSETC_CUSPARSE_SPMM_CSR_ALG3 = 12,
  SPARSETC_CUSPARSE_SPMM_BLOCKED_ELL_ALG1 = 13,
  SPARSETC_CUSPARSE_SPMM_BSR_ALG1 = 14
} sparsetc_cusparseSpMMAlg_t;

typedef enum {
  SPARSETC_CUSPARSE_SPGEMM_DEFAULT = 0,
  SPARSETC_CUSPARSE_SPGEMM_CSR_ALG_DETERMINITIC = 1,
  SPARSETC_CUSPARSE_SPGEMM_CSR_ALG_NONDETERMINITIC = 2,
  SPARSETC_CUSPARSE_SPGEMM_ALG1 = 3,
  SPARSETC_CUSPARSE_SPGEMM_ALG2 = 4,
  SPARSETC_CUSPARSE_SPGEMM_ALG3 = 5
} sparsetc_cusparseSpGEMMAlg_t;

/* Bytes the SpGEMM stages ask of the caller: never 0, so that a call with the buffer is told
 * from the size query (a NULL buffer), as cuSPARSE's protocol needs. */
#define SPARSETC_CUSPARSE_TOKEN_BUFFER_BYTES 256

/* ---- opaque objects ---- */
struct sparsetc_cusparseContext;
typedef struct sparsetc_cusparseContext* sparsetc_cusparseHandle_t;
struct sparsetc_cusparseSpMatDescr;
struct sparsetc_cusparseDnMatDescr;
struct sparsetc_cusparseSpGEMMDescr;
typedef struct sparsetc_cusparseSpMatDescr* sparsetc_cusparseSpMatDescr_t;
typedef struct sparsetc_cusparseDnMatDescr* sparsetc_cusparseDnMatDescr_t;
typedef struct sparsetc_cusparseSpMatDescr const* sparsetc_cusparseConstSpMatDescr_t;
typedef struct sparsetc_cusparseDnMatDescr const* sparsetc_cusparseConstDnMatDescr_t;
typedef struct sparsetc_cusparseSpGEMMDescr* sparsetc_cusparseSpGEMMDescr_t;

/* ---- handle ---- */
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreate(sparsetc_cusparseHandle_t* handle);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseDestroy(sparsetc_cusparseHandle_t handle);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSetStream(sparsetc_cusparseHandle_t handle,
                                                                  cudaStream_t streamId);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseGetStream(sparsetc_cusparseHandle_t handle,
                                                                  cudaStream_t* streamId);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSetPointerMode(sparsetc_cusparseHandle_t handle,
                                                                       sparsetc_cusparsePointerMode_t mode);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseGetPointerMode(sparsetc_cusparseHandle_t handle,
                                                                       sparsetc_cusparsePointerMode_t* mode);
SPARSETC_API const char* sparsetc_cusparseGetErrorName(sparsetc_cusparseStatus_t status);
SPARSETC_API const char* sparsetc_cusparseGetErrorString(sparsetc_cusparseStatus_t status);
/* Extension: the message of the handle's last failure (NULL handle: this thread's last failure). */
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparse_get_last_error(sparsetc_cusparseHandle_t handle,
                                                                        char* buffer, size_t buffer_size);

/* ---- sparse matrix descriptors (device arrays, borrowed) ---- */
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreateCsr(
    sparsetc_cusparseSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* csrRowOffsets,
    void* csrColInd, void* csrValues, sparsetc_cusparseIndexType_t csrRowOffsetsType,
    sparsetc_cusparseIndexType_t csrColIndType, sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreateConstCsr(
    sparsetc_cusparseConstSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz,
    const void* csrRowOffsets, const void* csrColInd, const void* csrValues,
    sparsetc_cusparseIndexType_t csrRowOffsetsType, sparsetc_cusparseIndexType_t csrColIndType,
    sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreateCsc(
    sparsetc_cusparseSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* cscColOffsets,
    void* cscRowInd, void* cscValues, sparsetc_cusparseIndexType_t cscColOffsetsType,
    sparsetc_cusparseIndexType_t cscRowIndType, sparsetc_cusparseIndexBase_t idxBase, cudaDataType valueType);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreateCoo(
    sparsetc_cusparseSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* cooRowInd,
    void* cooColInd, void* cooValues, sparsetc_cusparseIndexType_t cooIdxType, sparsetc_cusparseIndexBase_t idxBase,
    cudaDataType valueType);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseDestroySpMat(sparsetc_cusparseConstSpMatDescr_t spMatDescr);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpMatGetSize(sparsetc_cusparseConstSpMatDescr_t spMatDescr,
                                                                     int64_t* rows, int64_t* cols, int64_t* nnz);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpMatGetFormat(sparsetc_cusparseConstSpMatDescr_t spMatDescr,
                                                                       sparsetc_cusparseFormat_t* format);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpMatSetValues(sparsetc_cusparseSpMatDescr_t spMatDescr,
                                                                       void* values);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCsrGet(
    sparsetc_cusparseSpMatDescr_t spMatDescr, int64_t* rows, int64_t* cols, int64_t* nnz, void** csrRowOffsets,
    void** csrColInd, void** csrValues, sparsetc_cusparseIndexType_t* csrRowOffsetsType,
    sparsetc_cusparseIndexType_t* csrColIndType, sparsetc_cusparseIndexBase_t* idxBase, cudaDataType* valueType);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCsrSetPointers(sparsetc_cusparseSpMatDescr_t spMatDescr,
                                                                       void* csrRowOffsets, void* csrColInd,
                                                                       void* csrValues);

/* ---- dense matrix descriptors ---- */
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreateDnMat(sparsetc_cusparseDnMatDescr_t* dnMatDescr,
                                                                    int64_t rows, int64_t cols, int64_t ld,
                                                                    void* values, cudaDataType valueType,
                                                                    sparsetc_cusparseOrder_t order);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseCreateConstDnMat(
    sparsetc_cusparseConstDnMatDescr_t* dnMatDescr, int64_t rows, int64_t cols, int64_t ld, const void* values,
    cudaDataType valueType, sparsetc_cusparseOrder_t order);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseDestroyDnMat(sparsetc_cusparseConstDnMatDescr_t dnMatDescr);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseDnMatGet(sparsetc_cusparseDnMatDescr_t dnMatDescr,
                                                                 int64_t* rows, int64_t* cols, int64_t* ld,
                                                                 void** values, cudaDataType* type,
                                                                 sparsetc_cusparseOrder_t* order);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseDnMatSetValues(sparsetc_cusparseDnMatDescr_t dnMatDescr,
                                                                       void* values);

/* ---- SpMM: C = alpha op(A) op(B) + beta C ---- */
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpMM_bufferSize(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstDnMatDescr_t matB,
    const void* beta, sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpMMAlg_t alg,
    size_t* bufferSize);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpMM_preprocess(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstDnMatDescr_t matB,
    const void* beta, sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpMMAlg_t alg,
    void* externalBuffer);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpMM(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstDnMatDescr_t matB,
    const void* beta, sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpMMAlg_t alg,
    void* externalBuffer);

/* ---- SpGEMM: C = alpha op(A) op(B) (+ beta C with the reuse calls) ---- */
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_createDescr(sparsetc_cusparseSpGEMMDescr_t* descr);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_destroyDescr(sparsetc_cusparseSpGEMMDescr_t descr);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_workEstimation(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize1,
    void* externalBuffer1);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_getNumProducts(
    sparsetc_cusparseSpGEMMDescr_t spgemmDescr, int64_t* num_prods);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_compute(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize2,
    void* externalBuffer2);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_copy(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr);

SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_workEstimation(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    sparsetc_cusparseSpMatDescr_t matC, sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
    size_t* bufferSize1, void* externalBuffer1);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_nnz(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    sparsetc_cusparseSpMatDescr_t matC, sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
    size_t* bufferSize2, void* externalBuffer2, size_t* bufferSize3, void* externalBuffer3, size_t* bufferSize4,
    void* externalBuffer4);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_copy(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    sparsetc_cusparseSpMatDescr_t matC, sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
    size_t* bufferSize5, void* externalBuffer5);
SPARSETC_API sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_compute(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPARSETC_CUSPARSE_H */

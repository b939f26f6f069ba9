// SpMM of the cuSPARSE-shaped API: C = alpha op(A) op(B) + beta C on a sparsetc plan cached in A's
// descriptor. AUTO chooses among sparsetc's device paths and cuSPARSE itself (cuSPARSE only while
// A's values are re-read at every call: SPARSETC_CUSPARSE_VALUES). op(B) = B^T is the
// same memory read in the other order, so it costs nothing. Workspace comes from the engine's
// stream-ordered pool: the buffer size reported is 0.
#include <memory>

#include "compat_support.hpp"
#include "sparsetc/sparsetc_cusparse.h"

using namespace sparsetc;
using namespace sparsetc::compat;

namespace {

// A dense operand as the engine sees it (op applied by swapping the order).
struct DenseShape {
  int64_t rows, cols, ld;
  sparsetc_value_type_t type;
  sparsetc_order_t order;
  void* values;
};

DenseShape dense_shape(const sparsetc_cusparseDnMatDescr& d, bool transposed, const char* name) {
  const sparsetc_value_type_t type = value_type_of(d.value_type, name);
  const auto order = static_cast<sparsetc_order_t>(d.order);
  if (!transposed) return {d.rows, d.cols, d.ld, type, order, d.values};
  const sparsetc_order_t flipped = order == SPARSETC_ORDER_COL ? SPARSETC_ORDER_ROW : SPARSETC_ORDER_COL;
  return {d.cols, d.rows, d.ld, type, flipped, d.values};
}

// A sparsetc dense descriptor for one call.
struct Dense {
  sparsetc_dense_t dense = nullptr;
  Dense(const Engine& engine, const DenseShape& s) {
    check(sparsetc_dense_create(engine.handle, &dense, s.rows, s.cols, s.ld, s.values, s.type, s.order,
                                SPARSETC_MEMORY_DEVICE),
          engine);
  }
  ~Dense() { sparsetc_dense_destroy(dense); }
  Dense(const Dense&) = delete;
  Dense& operator=(const Dense&) = delete;
};

sparsetc_compute_type_t compute_type_of(cudaDataType type) {
  if (type == CUDA_R_32F) return SPARSETC_COMPUTE_32F;
  if (type == CUDA_R_64F) return SPARSETC_COMPUTE_64F;
  detail::fail(SPARSETC_STATUS_NOT_SUPPORTED, "SpMM compute type ", data_type_name(type),
               " (sparsetc computes in CUDA_R_32F or CUDA_R_64F)");
}

struct Call {
  const sparsetc_cusparseSpMatDescr* A;
  DenseShape B, C;
  sparsetc_operation_t op;
  sparsetc_compute_type_t compute;
};

// Everything that can make the call unsupported is checked here, before any work.
Call describe(sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
              sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstDnMatDescr_t matB,
              sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpMMAlg_t alg) {
  detail::require(matA && matB && matC, SPARSETC_STATUS_INVALID_VALUE, "matA, matB or matC is NULL");
  detail::require(alg != SPARSETC_CUSPARSE_SPMM_BLOCKED_ELL_ALG1 && alg != SPARSETC_CUSPARSE_SPMM_BSR_ALG1,
                  SPARSETC_STATUS_NOT_SUPPORTED, "SpMM algorithm ", int(alg), " is for Blocked-ELL/BSR matrices");
  Call call;
  call.A = matA;
  call.op = operation_of(opA, "opA");
  const bool transposed_b = operation_of(opB, "opB") == SPARSETC_OP_TRANSPOSE;
  call.B = dense_shape(*matB, transposed_b, "matB");
  call.C = dense_shape(*matC, false, "matC");
  call.compute = compute_type_of(computeType);
  detail::require(matA->format == SPARSETC_CUSPARSE_FORMAT_CSR || matA->format == SPARSETC_CUSPARSE_FORMAT_CSC ||
                      matA->format == SPARSETC_CUSPARSE_FORMAT_COO,
                  SPARSETC_STATUS_NOT_SUPPORTED, "sparse format ", int(matA->format),
                  " (sparsetc multiplies CSR, CSC and COO)");
  value_type_of(matA->value_type, "matA");
  index_type_of(matA->offset_type, "matA offsets");
  index_type_of(matA->index_type, "matA indices");
  return call;
}

// The plan for this call: the cached one when the matrix, op and B/C layouts are unchanged.
SpmmPlan& plan_for(sparsetc_cusparseContext& context, const Call& call) {
  MatrixPtr a = bind_matrix(context, *call.A, false);
  Engine& engine = *a->engine;
  SpmmKey key;
  key.matrix = a.get();
  key.op = call.op;
  key.b_rows = call.B.rows;
  key.b_cols = call.B.cols;
  key.b_ld = call.B.ld;
  key.b_type = call.B.type;
  key.b_order = call.B.order;
  key.c_rows = call.C.rows;
  key.c_cols = call.C.cols;
  key.c_ld = call.C.ld;
  key.c_type = call.C.type;
  key.c_order = call.C.order;
  key.compute = call.compute;
  std::unique_ptr<SpmmPlan>& cached = call.A->spmm;
  if (cached && cached->key == key) return *cached;
  cached.reset();
  auto made = std::make_unique<SpmmPlan>();
  made->a = a;
  made->key = key;
  Dense b(engine, call.B), c(engine, call.C);
  // sparsetc's own paths convert A once and keep the copy: with values re-read at every call that
  // conversion would be paid every time, so there the plan takes cuSPARSE (through sparsetc's
  // tuned algorithm choice), which reads A where it lies; AUTO where cuSPARSE refuses the case.
  sparsetc_status_t status = SPARSETC_STATUS_NOT_SUPPORTED;
  if (spmm_rereads_values())
    status = sparsetc_spmm_plan_create(engine.handle, &made->plan, call.op, a->matrix, b.dense, c.dense, call.compute,
                                       SPARSETC_SPMM_ALG_CUSPARSE);
  if (status != SPARSETC_STATUS_SUCCESS)  // not tried, or refused by cuSPARSE for these types
    status = sparsetc_spmm_plan_create(engine.handle, &made->plan, call.op, a->matrix, b.dense, c.dense, call.compute,
                                       SPARSETC_SPMM_ALG_AUTO);
  check(status, engine);
  sparsetc_spmm_alg_t alg = SPARSETC_SPMM_ALG_AUTO;
  check(sparsetc_spmm_plan_get_alg(made->plan, &alg, nullptr, 0), engine);
  made->copies_a = alg != SPARSETC_SPMM_ALG_CUSPARSE;
  cached = std::move(made);
  return *cached;
}

}  // namespace

extern "C" {

sparsetc_cusparseStatus_t sparsetc_cusparseSpMM_bufferSize(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* /*alpha*/, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstDnMatDescr_t matB,
    const void* /*beta*/, sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpMMAlg_t alg, size_t* bufferSize) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    detail::require(bufferSize != nullptr, SPARSETC_STATUS_INVALID_VALUE, "bufferSize is NULL");
    const Call call = describe(opA, opB, matA, matB, matC, computeType, alg);
    plan_for(context, call);  // planning here keeps the first SpMM as fast as the next ones
    *bufferSize = 0;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpMM_preprocess(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* /*alpha*/, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstDnMatDescr_t matB,
    const void* /*beta*/, sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpMMAlg_t alg, void* /*externalBuffer*/) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    plan_for(context, describe(opA, opB, matA, matB, matC, computeType, alg));
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpMM(sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA,
                                                sparsetc_cusparseOperation_t opB, const void* alpha,
                                                sparsetc_cusparseConstSpMatDescr_t matA,
                                                sparsetc_cusparseConstDnMatDescr_t matB, const void* beta,
                                                sparsetc_cusparseDnMatDescr_t matC, cudaDataType computeType,
                                                sparsetc_cusparseSpMMAlg_t alg, void* /*externalBuffer*/) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const Call call = describe(opA, opB, matA, matB, matC, computeType, alg);
    const sparsetc_value_type_t scalar_type =
        call.compute == SPARSETC_COMPUTE_64F ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
    const double alpha_value = read_scalar(context, alpha, scalar_type, "alpha");
    const double beta_value = read_scalar(context, beta, scalar_type, "beta");
    SpmmPlan& plan = plan_for(context, call);
    Engine& engine = *plan.a->engine;
    // cuSPARSE reads A's values at every call: so does the plan, unless told they are stable.
    if (!plan.fresh && plan.copies_a && spmm_rereads_values()) bind_matrix(context, *call.A, true);
    plan.fresh = false;
    Dense b(engine, call.B), c(engine, call.C);
    check(sparsetc_spmm_execute(plan.plan, alpha_value, b.dense, beta_value, c.dense, nullptr, 0), engine);
  });
}

}  // extern "C"

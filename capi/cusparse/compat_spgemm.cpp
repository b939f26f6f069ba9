// SpGEMM of the cuSPARSE-shaped API, plain and with structure reuse, on a sparsetc plan kept in
// the SpGEMM descriptor. cuSPARSE's stages map onto the plan's:
//   workEstimation          -> plan creation (operands prepared, products counted)
//   compute / reuse_nnz     -> symbolic (nnz(C) read back, as cuSPARSE does) [+ numeric, plain API]
//   copy / reuse_copy       -> the product moved into the caller's C arrays (pattern and values)
//   reuse_compute           -> numeric on the kept pattern with A's and B's current values
// The stages keep their memory in the engine's pool; they ask the caller for a token buffer only,
// so that a call with a buffer is told from a size query.
#include <memory>

#include "compat_support.hpp"
#include "csr_transfer.hpp"
#include "sparsetc/sparsetc_cusparse.h"

using namespace sparsetc;
using namespace sparsetc::compat;
using Stage = sparsetc_cusparseSpGEMMDescr::Stage;

namespace {

// Everything that can make an SpGEMM unsupported, checked before any work. Returns the value type
// (equal to the compute type, as cuSPARSE requires for real types).
sparsetc_value_type_t check_operands(sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
                                     sparsetc_cusparseConstSpMatDescr_t A, sparsetc_cusparseConstSpMatDescr_t B,
                                     sparsetc_cusparseSpMatDescr_t C, sparsetc_cusparseSpGEMMAlg_t alg,
                                     sparsetc_cusparseSpGEMMDescr_t descr) {
  detail::require(A && B && C && descr, SPARSETC_STATUS_INVALID_VALUE, "matA, matB, matC or spgemmDescr is NULL");
  detail::require(alg != SPARSETC_CUSPARSE_SPGEMM_ALG3, SPARSETC_STATUS_NOT_SUPPORTED,
                  "CUSPARSE_SPGEMM_ALG3 (memory-bounded chunks through SpGEMM_estimateMemory)");
  for (auto [d, name] : {std::pair{A, "matA"}, std::pair{B, "matB"}, std::pair{sparsetc_cusparseConstSpMatDescr_t(C), "matC"}}) {
    detail::require(d->format == SPARSETC_CUSPARSE_FORMAT_CSR, SPARSETC_STATUS_NOT_SUPPORTED, name,
                    ": SpGEMM takes CSR matrices");
    index_type_of(d->offset_type, name);
    index_type_of(d->index_type, name);
  }
  const sparsetc_value_type_t type = value_type_of(A->value_type, "matA");
  detail::require(type == SPARSETC_VALUE_F32 || type == SPARSETC_VALUE_F64, SPARSETC_STATUS_NOT_SUPPORTED,
                  "SpGEMM values of type ", data_type_name(A->value_type), " (sparsetc takes f32 and f64)");
  detail::require(B->value_type == A->value_type && C->value_type == A->value_type, SPARSETC_STATUS_NOT_SUPPORTED,
                  "SpGEMM with A, B and C of different value types");
  const bool ta = operation_of(opA, "opA") == SPARSETC_OP_TRANSPOSE;
  const bool tb = operation_of(opB, "opB") == SPARSETC_OP_TRANSPOSE;
  const int64_t m = ta ? A->cols : A->rows, k = ta ? A->rows : A->cols;
  const int64_t kb = tb ? B->cols : B->rows, n = tb ? B->rows : B->cols;
  detail::require(k == kb && C->rows == m && C->cols == n, SPARSETC_STATUS_INVALID_VALUE, "op(A) is ", m, "x", k,
                  ", op(B) ", kb, "x", n, " and C ", C->rows, "x", C->cols);
  return type;
}

void check_compute_type(cudaDataType computeType, sparsetc_cusparseConstSpMatDescr_t A) {
  detail::require(computeType == A->value_type, SPARSETC_STATUS_NOT_SUPPORTED, "compute type ",
                  data_type_name(computeType), " differs from the value type ", data_type_name(A->value_type));
}

// Plain SpGEMM: C = alpha op(A) op(B); a non-zero beta is left to cuSPARSE.
void check_beta_zero(const sparsetc_cusparseContext& context, const void* beta, sparsetc_value_type_t type) {
  if (!beta) return;
  detail::require(read_scalar(context, beta, type, "beta") == 0.0, SPARSETC_STATUS_NOT_SUPPORTED,
                  "SpGEMM with beta != 0");
}

// The descriptor's plan for these operands: kept while A and B are the same matrices (new values
// are read by symbolic/numeric), made anew otherwise.
SpgemmPlan& plan_for(sparsetc_cusparseContext& context, sparsetc_cusparseSpGEMMDescr& descr,
                     sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
                     sparsetc_cusparseConstSpMatDescr_t A, sparsetc_cusparseConstSpMatDescr_t B,
                     sparsetc_value_type_t type, bool reread_values) {
  MatrixPtr a = bind_matrix(context, *A, false);
  MatrixPtr b = B == A ? a : bind_matrix(context, *B, false);
  if (descr.plan && descr.plan->a == a && descr.plan->b == b) {
    // The values may have changed in place since the plan last read them (cuSPARSE reads them at
    // every compute): a new values version makes the plan reload its operands.
    if (reread_values && !descr.plan->fresh) {
      bind_matrix(context, *A, true);
      if (B != A) bind_matrix(context, *B, true);
    }
    return *descr.plan;
  }
  descr.plan.reset();
  auto made = std::make_unique<SpgemmPlan>();
  made->a = a;
  made->b = b;
  Engine& engine = *a->engine;
  check(sparsetc_spgemm_plan_create(engine.handle, &made->plan, operation_of(opA, "opA"), a->matrix,
                                    operation_of(opB, "opB"), b->matrix,
                                    type == SPARSETC_VALUE_F64 ? SPARSETC_COMPUTE_64F : SPARSETC_COMPUTE_32F,
                                    SPARSETC_SPGEMM_ALG_AUTO, nullptr),
        engine);
  descr.plan = std::move(made);
  return *descr.plan;
}

// symbolic: nnz(C), recorded in C's descriptor (cusparseSpMatGetSize answers it).
void run_symbolic(SpgemmPlan& plan, sparsetc_cusparseSpGEMMDescr& descr, sparsetc_cusparseSpMatDescr& C) {
  const Engine& engine = *plan.a->engine;
  int64_t nnz = 0;
  check(sparsetc_spgemm_symbolic(plan.plan, &nnz), engine);
  plan.fresh = false;
  descr.nnz = nnz;
  C.nnz = nnz;
}

// numeric into the plan's own product (made the first time, overwritten after).
void run_numeric(SpgemmPlan& plan) {
  check(sparsetc_spgemm_numeric(plan.plan, &plan.product), *plan.a->engine);
  plan.fresh = false;
}

CsrArrays arrays_of(const sparsetc_cusparseSpMatDescr& C) {
  CsrArrays out;
  out.offsets = C.offsets;
  out.indices = C.indices;
  out.values = C.values;
  out.offset_type = index_type_of(C.offset_type, "matC");
  out.index_type = index_type_of(C.index_type, "matC");
  out.base = C.base;
  return out;
}

CsrArrays arrays_of(sparsetc_matrix_t product) {
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  detail::require(sparsetc_matrix_get_info(product, &info) == SPARSETC_STATUS_SUCCESS, SPARSETC_STATUS_INTERNAL_ERROR,
                  "SpGEMM product without a description");
  CsrArrays out;
  sparsetc_matrix_get_arrays(product, &out.offsets, &out.indices, &out.values);
  out.offset_type = info.offset_type;
  out.index_type = info.index_type;
  out.base = info.base;
  return out;
}

Scalar scalar_of(const sparsetc_cusparseContext& context, const void* p) {
  Scalar s;
  (context.pointer_mode == SPARSETC_CUSPARSE_POINTER_MODE_DEVICE ? s.device : s.host) = p;
  return s;
}

// The product into the caller's C: pattern (when asked) and alpha * values (+ beta * C).
void deliver(const sparsetc_cusparseContext& context, const SpgemmPlan& plan, sparsetc_cusparseSpMatDescr& C,
             bool pattern, const void* alpha, const void* beta) {
  detail::require(plan.product != nullptr, SPARSETC_STATUS_INVALID_STATE, "no product computed yet");
  const CsrArrays from = arrays_of(plan.product);
  const CsrArrays to = arrays_of(C);
  const sparsetc_value_type_t type = value_type_of(C.value_type, "matC");
  if (pattern) transfer_pattern(from, to, C.rows, C.nnz, context.stream);
  transfer_values(type, from.values, to.values, C.nnz, scalar_of(context, alpha), scalar_of(context, beta),
                  context.stream);
}

size_t token(size_t* size, const char* name) {
  detail::require(size != nullptr, SPARSETC_STATUS_INVALID_VALUE, name, " is NULL");
  return *size = SPARSETC_CUSPARSE_TOKEN_BUFFER_BYTES;
}

}  // namespace

extern "C" {

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_createDescr(sparsetc_cusparseSpGEMMDescr_t* descr) {
  return guarded(nullptr, __func__, [&] {
    detail::require(descr != nullptr, SPARSETC_STATUS_INVALID_VALUE, "descr is NULL");
    *descr = new sparsetc_cusparseSpGEMMDescr();
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_destroyDescr(sparsetc_cusparseSpGEMMDescr_t descr) {
  return guarded(nullptr, __func__, [&] { delete descr; });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_workEstimation(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* /*alpha*/, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpGEMMAlg_t alg,
    sparsetc_cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize1, void* externalBuffer1) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const sparsetc_value_type_t type = check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    check_compute_type(computeType, matA);
    check_beta_zero(context, beta, type);
    if (!externalBuffer1) {
      token(bufferSize1, "bufferSize1");
      return;
    }
    plan_for(context, *spgemmDescr, opA, opB, matA, matB, type, false);
    spgemmDescr->reuse = false;
    spgemmDescr->stage = Stage::estimated;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_getNumProducts(sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
                                                                 int64_t* num_prods) {
  return guarded(nullptr, __func__, [&] {
    detail::require(spgemmDescr && num_prods, SPARSETC_STATUS_INVALID_VALUE, "a NULL argument");
    detail::require(spgemmDescr->plan != nullptr, SPARSETC_STATUS_INVALID_VALUE, "call SpGEMM_workEstimation first");
    check(sparsetc_spgemm_plan_get_estimate(spgemmDescr->plan->plan, num_prods, nullptr), *spgemmDescr->plan->a->engine);
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_compute(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* /*alpha*/, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpGEMMAlg_t alg,
    sparsetc_cusparseSpGEMMDescr_t spgemmDescr, size_t* bufferSize2, void* externalBuffer2) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const sparsetc_value_type_t type = check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    check_compute_type(computeType, matA);
    check_beta_zero(context, beta, type);
    if (!externalBuffer2) {
      token(bufferSize2, "bufferSize2");
      return;
    }
    SpgemmPlan& plan = plan_for(context, *spgemmDescr, opA, opB, matA, matB, type, true);
    run_symbolic(plan, *spgemmDescr, *matC);
    if (plan.product) {  // a new pattern: the old product goes
      sparsetc_matrix_destroy(plan.product);
      plan.product = nullptr;
    }
    run_numeric(plan);
    spgemmDescr->reuse = false;
    spgemmDescr->stage = Stage::computed;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMM_copy(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* /*beta*/, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType,
    sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    check_compute_type(computeType, matA);
    detail::require(spgemmDescr->stage >= Stage::computed && !spgemmDescr->reuse && spgemmDescr->plan,
                    SPARSETC_STATUS_INVALID_VALUE, "call SpGEMM_compute first");
    detail::require(matC->nnz == spgemmDescr->nnz, SPARSETC_STATUS_INVALID_VALUE, "matC has nnz ", matC->nnz,
                    ", the product ", spgemmDescr->nnz);
    deliver(context, *spgemmDescr->plan, *matC, true, alpha, nullptr);
    spgemmDescr->stage = Stage::copied;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_workEstimation(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    sparsetc_cusparseSpMatDescr_t matC, sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
    size_t* bufferSize1, void* externalBuffer1) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const sparsetc_value_type_t type = check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    if (!externalBuffer1) {
      token(bufferSize1, "bufferSize1");
      return;
    }
    plan_for(context, *spgemmDescr, opA, opB, matA, matB, type, false);
    spgemmDescr->reuse = true;
    spgemmDescr->stage = Stage::estimated;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_nnz(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    sparsetc_cusparseSpMatDescr_t matC, sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
    size_t* bufferSize2, void* externalBuffer2, size_t* bufferSize3, void* externalBuffer3, size_t* bufferSize4,
    void* externalBuffer4) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const sparsetc_value_type_t type = check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    if (!externalBuffer2 || !externalBuffer3 || !externalBuffer4) {
      token(bufferSize2, "bufferSize2");
      token(bufferSize3, "bufferSize3");
      token(bufferSize4, "bufferSize4");
      return;
    }
    detail::require(spgemmDescr->reuse && spgemmDescr->stage >= Stage::estimated, SPARSETC_STATUS_INVALID_VALUE,
                    "call SpGEMMreuse_workEstimation first");
    SpgemmPlan& plan = plan_for(context, *spgemmDescr, opA, opB, matA, matB, type, true);
    run_symbolic(plan, *spgemmDescr, *matC);
    if (plan.product) {
      sparsetc_matrix_destroy(plan.product);
      plan.product = nullptr;
    }
    spgemmDescr->stage = Stage::computed;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_copy(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    sparsetc_cusparseSpMatDescr_t matC, sparsetc_cusparseSpGEMMAlg_t alg, sparsetc_cusparseSpGEMMDescr_t spgemmDescr,
    size_t* bufferSize5, void* externalBuffer5) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const sparsetc_value_type_t type = check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    if (!externalBuffer5) {
      token(bufferSize5, "bufferSize5");
      return;
    }
    detail::require(spgemmDescr->reuse && spgemmDescr->stage >= Stage::computed && spgemmDescr->plan,
                    SPARSETC_STATUS_INVALID_VALUE, "call SpGEMMreuse_nnz first");
    detail::require(matC->nnz == spgemmDescr->nnz, SPARSETC_STATUS_INVALID_VALUE, "matC has nnz ", matC->nnz,
                    ", the product ", spgemmDescr->nnz);
    SpgemmPlan& plan = *spgemmDescr->plan;
    if (!plan.product) run_numeric(plan);  // the first values come with the pattern, at no extra cost
    const double one = 1.0;
    const float one_f = 1.0f;
    sparsetc_cusparseContext host_scalars = {};
    host_scalars.stream = context.stream;  // alpha = 1 from host memory, whatever the handle's mode
    deliver(host_scalars, plan, *matC, true, type == SPARSETC_VALUE_F64 ? static_cast<const void*>(&one) : &one_f,
            nullptr);
    spgemmDescr->stage = Stage::copied;
  });
}

sparsetc_cusparseStatus_t sparsetc_cusparseSpGEMMreuse_compute(
    sparsetc_cusparseHandle_t handle, sparsetc_cusparseOperation_t opA, sparsetc_cusparseOperation_t opB,
    const void* alpha, sparsetc_cusparseConstSpMatDescr_t matA, sparsetc_cusparseConstSpMatDescr_t matB,
    const void* beta, sparsetc_cusparseSpMatDescr_t matC, cudaDataType computeType, sparsetc_cusparseSpGEMMAlg_t alg,
    sparsetc_cusparseSpGEMMDescr_t spgemmDescr) {
  return guarded(handle, __func__, [&] {
    sparsetc_cusparseContext& context = context_of(handle);
    const sparsetc_value_type_t type = check_operands(opA, opB, matA, matB, matC, alg, spgemmDescr);
    check_compute_type(computeType, matA);
    detail::require(spgemmDescr->reuse && spgemmDescr->stage >= Stage::copied && spgemmDescr->plan,
                    SPARSETC_STATUS_INVALID_VALUE, "call SpGEMMreuse_copy first");
    // The same operand matrices (their values re-read); new pattern arrays need a new reuse sequence.
    SpgemmPlan& plan = plan_for(context, *spgemmDescr, opA, opB, matA, matB, type, true);
    detail::require(&plan == spgemmDescr->plan.get() && plan.product != nullptr, SPARSETC_STATUS_INVALID_VALUE,
                    "the operands' pattern arrays changed since SpGEMMreuse_workEstimation");
    run_numeric(plan);
    deliver(context, plan, *matC, false, alpha, beta);
  });
}

}  // extern "C"

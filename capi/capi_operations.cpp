// Operation entry points: analysis, SpMM plans and SpGEMM plans.
#include <algorithm>
#include <cstring>
#include <memory>

#include "capi_guard.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine/matrix.hpp"
#include "engine/spgemm_plan.hpp"
#include "engine/spmm_plan.hpp"

using namespace sparsetc;

namespace {

std::shared_ptr<const detail::CsrMatrix<double>> analysis_view(sparsetc_handle_s& handle, sparsetc_matrix_s& m) {
  if (m.memory == SPARSETC_MEMORY_HOST) return detail::canonical_csr<double>(m, m.duplicates);
  detail::HostView view = detail::host_view(handle, m);  // device analysis runs on the host in this version
  return std::make_shared<const detail::CsrMatrix<double>>(detail::import_csr<double>(view.raw, m.duplicates));
}

}  // namespace

extern "C" {

sparsetc_status_t sparsetc_analyze(sparsetc_handle_t handle, sparsetc_matrix_t A, sparsetc_matrix_t B,
                                   sparsetc_analysis_t* analysis) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(A, "A");
    capi::require_pointer(analysis, "analysis");
    detail::require(analysis->struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
                    "analysis->struct_size is not set (set it to sizeof(sparsetc_analysis_t))");
    auto a = analysis_view(*handle, *A);
    std::shared_ptr<const detail::CsrMatrix<double>> b;
    if (B) b = analysis_view(*handle, *B);
    else if (a->rows == a->cols) b = a;  // A·A, the SpGEMM users ask about most
    detail::Analysis r = detail::cpu_analyze<double>(*a, b.get(), handle->threads);
    sparsetc_analysis_t full{analysis->struct_size, r.rows, r.cols, r.nnz, r.empty_rows, r.row_length_min,
                             r.row_length_max, r.row_length_mean, r.row_length_std, r.density, r.products,
                             r.bandwidth};
    std::memcpy(analysis, &full, std::min(analysis->struct_size, sizeof full));
  });
}

sparsetc_status_t sparsetc_spmm_plan_create(sparsetc_handle_t handle, sparsetc_spmm_plan_t* plan,
                                            sparsetc_operation_t op_a, sparsetc_matrix_t A, sparsetc_dense_t B,
                                            sparsetc_dense_t C, sparsetc_compute_type_t compute_type,
                                            sparsetc_spmm_alg_t alg) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(plan, "plan");
    *plan = nullptr;
    capi::require_pointer(A, "A");
    capi::require_pointer(B, "B");
    capi::require_pointer(C, "C");
    *plan = detail::make_spmm_plan(*handle, op_a, *A, *B, *C, compute_type, alg).release();
  });
}

sparsetc_status_t sparsetc_spmm_workspace_size(sparsetc_spmm_plan_t plan, size_t* bytes) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    capi::require_pointer(bytes, "bytes");
    *bytes = plan->executor->workspace_size();
  });
}

sparsetc_status_t sparsetc_spmm_execute(sparsetc_spmm_plan_t plan, double alpha, sparsetc_dense_t B, double beta,
                                        sparsetc_dense_t C, void* workspace, size_t workspace_bytes) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    capi::require_pointer(B, "B");
    capi::require_pointer(C, "C");
    detail::execute_spmm_plan(*plan, alpha, *B, beta, *C, workspace, workspace_bytes);
  });
}

sparsetc_status_t sparsetc_spmm_plan_get_alg(sparsetc_spmm_plan_t plan, sparsetc_spmm_alg_t* alg, char* reason,
                                             size_t reason_size) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    if (alg) *alg = plan->alg;
    capi::copy_string(plan->reason, reason, reason_size);
  });
}

sparsetc_status_t sparsetc_spmm_plan_destroy(sparsetc_spmm_plan_t plan) {
  return SPARSETC_GUARD(nullptr, { delete plan; });
}

sparsetc_status_t sparsetc_spmm(sparsetc_handle_t handle, sparsetc_operation_t op_a, double alpha,
                                sparsetc_matrix_t A, sparsetc_dense_t B, double beta, sparsetc_dense_t C,
                                sparsetc_compute_type_t compute_type, sparsetc_spmm_alg_t alg) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(A, "A");
    capi::require_pointer(B, "B");
    capi::require_pointer(C, "C");
    auto plan = detail::make_spmm_plan(*handle, op_a, *A, *B, *C, compute_type, alg);
    detail::execute_spmm_plan(*plan, alpha, *B, beta, *C, nullptr, 0);
  });
}

sparsetc_status_t sparsetc_spgemm_plan_create(sparsetc_handle_t handle, sparsetc_spgemm_plan_t* plan,
                                              sparsetc_operation_t op_a, sparsetc_matrix_t A,
                                              sparsetc_operation_t op_b, sparsetc_matrix_t B,
                                              sparsetc_compute_type_t compute_type, sparsetc_spgemm_alg_t alg,
                                              const sparsetc_spgemm_options_t* options) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(plan, "plan");
    *plan = nullptr;
    capi::require_pointer(A, "A");
    capi::require_pointer(B, "B");
    *plan = detail::make_spgemm_plan(*handle, op_a, *A, op_b, *B, compute_type, alg, options).release();
  });
}

sparsetc_status_t sparsetc_spgemm_symbolic(sparsetc_spgemm_plan_t plan, int64_t* nnz_c) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    plan->nnz_c = plan->executor->symbolic();
    plan->symbolic_done = true;
    if (nnz_c) *nnz_c = plan->nnz_c;
  });
}

sparsetc_status_t sparsetc_spgemm_numeric(sparsetc_spgemm_plan_t plan, sparsetc_matrix_t* C) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    capi::require_pointer(C, "C");
    detail::require(plan->symbolic_done, SPARSETC_STATUS_INVALID_STATE,
                    "sparsetc_spgemm_symbolic must run before sparsetc_spgemm_numeric");
    plan->executor->numeric(C);
  });
}

sparsetc_status_t sparsetc_spgemm_plan_get_estimate(sparsetc_spgemm_plan_t plan, int64_t* products,
                                                    size_t* memory_bytes) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    if (products) *products = plan->executor->products();
    if (memory_bytes) *memory_bytes = plan->executor->memory_estimate();
  });
}

sparsetc_status_t sparsetc_spgemm_plan_get_alg(sparsetc_spgemm_plan_t plan, sparsetc_spgemm_alg_t* alg,
                                               char* reason, size_t reason_size) {
  return SPARSETC_GUARD(plan ? plan->handle : nullptr, {
    capi::require_pointer(plan, "plan");
    if (alg) *alg = plan->alg;
    capi::copy_string(plan->reason, reason, reason_size);
  });
}

sparsetc_status_t sparsetc_spgemm_plan_destroy(sparsetc_spgemm_plan_t plan) {
  return SPARSETC_GUARD(nullptr, { delete plan; });
}

sparsetc_status_t sparsetc_spgemm(sparsetc_handle_t handle, sparsetc_operation_t op_a, sparsetc_matrix_t A,
                                  sparsetc_operation_t op_b, sparsetc_matrix_t B,
                                  sparsetc_compute_type_t compute_type, sparsetc_spgemm_alg_t alg,
                                  sparsetc_matrix_t* C) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(A, "A");
    capi::require_pointer(B, "B");
    capi::require_pointer(C, "C");
    *C = nullptr;
    auto plan = detail::make_spgemm_plan(*handle, op_a, *A, op_b, *B, compute_type, alg, nullptr);
    plan->executor->symbolic();
    plan->executor->numeric(C);
  });
}

}  // extern "C"

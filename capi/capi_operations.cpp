// Operation entry points: analysis, SpMM plans and SpGEMM plans.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>

#include "capi_guard.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine/matrix.hpp"
#include "engine/spgemm_plan.hpp"
#include "engine/spmm_plan.hpp"
#include "gpu/analysis/gpu_analysis.hpp"
#include "gpu/convert/gpu_convert.hpp"

using namespace sparsetc;

namespace {

std::shared_ptr<const detail::CsrMatrix<double>> analysis_view(sparsetc_handle_s& handle, sparsetc_matrix_s& m) {
  if (m.memory == SPARSETC_MEMORY_HOST) return detail::canonical_csr<double>(m, m.duplicates);
  detail::HostView view = detail::host_view(handle, m);  // a device matrix analysed on the host
  return std::make_shared<const detail::CsrMatrix<double>>(detail::import_csr<double>(view.raw, m.duplicates));
}

// Device matrices on a GPU handle are analysed on the device (normalised to the canonical device
// CSR first, which needs 32-bit indices); anything else (host matrices, a mix, huge shapes) on the
// host. Both engines give the same results (gpu/analysis/gpu_analysis.hpp).
bool use_device_analysis(const sparsetc_handle_s& handle, const sparsetc_matrix_s& A, const sparsetc_matrix_s* B) {
  auto fits = [](const sparsetc_matrix_s& m) {
    return m.memory == SPARSETC_MEMORY_DEVICE && m.layout.rows <= INT32_MAX && m.layout.cols <= INT32_MAX;
  };
  return handle.backend == SPARSETC_BACKEND_GPU && fits(A) && (B == nullptr || fits(*B));
}

detail::Analysis analyze_on_device(sparsetc_handle_s& handle, sparsetc_matrix_s& A, sparsetc_matrix_s* B,
                                   int64_t strip_width) {
  const detail::GpuContext context = handle.gpu();
  // Values are converted to double (exact for every value type); the analysis reads only the structure.
  const detail::DeviceCsr<double> a = detail::gpu_normalize<double>(A.layout, A.duplicates, context);
  detail::DeviceCsr<double> b;
  if (B) b = detail::gpu_normalize<double>(B->layout, B->duplicates, context);
  const detail::DeviceCsrView<double> a_view = a.view(), b_view = b.view();
  const detail::DeviceCsrView<double>* other = B ? &b_view : a.rows == a.cols ? &a_view : nullptr;  // A·A
  return detail::gpu_analyze<double>(a_view, other, strip_width, context);
}

// True when the caller's struct (struct_size bytes) holds the whole of a field at that offset
// (structures are append-only: an older caller's struct is a prefix of ours).
constexpr bool holds(size_t struct_size, size_t offset, size_t size) { return struct_size >= offset + size; }

sparsetc_analysis_t public_analysis(const detail::Analysis& r, size_t struct_size) {
  sparsetc_analysis_t a{};
  a.struct_size = struct_size;
  a.rows = r.rows;
  a.cols = r.cols;
  a.nnz = r.nnz;
  a.empty_rows = r.empty_rows;
  a.row_length_min = r.row_length_min;
  a.row_length_max = r.row_length_max;
  a.row_length_mean = r.row_length_mean;
  a.row_length_std = r.row_length_std;
  a.density = r.density;
  a.products = r.products;
  a.bandwidth = r.bandwidth;
  a.blocks_16x8 = r.blocks_16x8;
  a.blocks_16x16 = r.blocks_16x16;
  a.blocks_8x8 = r.blocks_8x8;
  a.fill_16x8 = r.fill_16x8;
  a.fill_16x16 = r.fill_16x16;
  a.fill_8x8 = r.fill_8x8;
  a.tile_density_median = r.tile_density_median;
  a.tile_density_mean = r.tile_density_mean;
  a.tile_density_std = r.tile_density_std;
  a.strip_width = r.strip_width;
  a.nonempty_rows = r.nonempty_rows;
  a.nonempty_rows_per_strip_mean = r.nonempty_rows_per_strip_mean;
  a.h_norm = r.h_norm;
  a.ssf = r.ssf;
  return a;
}

}  // namespace

extern "C" {

sparsetc_status_t sparsetc_analyze(sparsetc_handle_t handle, sparsetc_matrix_t A, sparsetc_matrix_t B,
                                   sparsetc_analysis_t* analysis) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(A, "A");
    capi::require_pointer(analysis, "analysis");
    const size_t struct_size = analysis->struct_size;
    detail::require(struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
                    "analysis->struct_size is not set (set it to sizeof(sparsetc_analysis_t))");
    // strip_width is an input, read only when the caller's struct has it (older ones get the default).
    int64_t strip_width = 0;
    if (holds(struct_size, offsetof(sparsetc_analysis_t, strip_width), sizeof(int64_t)))
      strip_width = analysis->strip_width;
    detail::require(strip_width >= 0, SPARSETC_STATUS_INVALID_VALUE, "analysis->strip_width must be >= 0 (0 for ",
                    "the default ", detail::kDefaultStripWidth, "), got ", strip_width);
    detail::Analysis r;
    if (use_device_analysis(*handle, *A, B)) {
      r = analyze_on_device(*handle, *A, B, strip_width);
    } else {
      auto a = analysis_view(*handle, *A);
      std::shared_ptr<const detail::CsrMatrix<double>> b;
      if (B) b = analysis_view(*handle, *B);
      else if (a->rows == a->cols) b = a;  // A·A, the SpGEMM users ask about most
      r = detail::cpu_analyze<double>(*a, b.get(), handle->threads, strip_width);
    }
    const sparsetc_analysis_t full = public_analysis(r, struct_size);
    std::memcpy(analysis, &full, std::min(struct_size, sizeof full));  // only the caller's prefix
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

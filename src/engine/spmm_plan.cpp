#include "engine/spmm_plan.hpp"

#include <chrono>
#include <cstdint>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_operand.hpp"
#include "engine/spmm_select.hpp"
#include "engine/spmm_vbr_cublas.hpp"
#include "gpu/analysis/gpu_analysis.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"

namespace sparsetc::detail {
namespace {

std::string shape(int64_t rows, int64_t cols) { return str(rows, "x", cols); }

void check_dense(const sparsetc_dense_s& d, const char* name) {
  require(is_valid_value_type(d.value_type), SPARSETC_STATUS_INVALID_VALUE, name, ": unknown value type");
  require(is_valid_order(d.order), SPARSETC_STATUS_INVALID_VALUE, name, ": unknown order");
}

// Shapes, types and memory spaces of an SpMM must agree before any algorithm sees them.
void check_problem(const SpmmProblem& p) {
  const RawSparse& a = p.A->layout;
  require(p.op == SPARSETC_OP_NON_TRANSPOSE || p.op == SPARSETC_OP_TRANSPOSE, SPARSETC_STATUS_INVALID_VALUE,
          "unknown operation ", p.op, " for A");
  check_dense(p.B, "B");
  check_dense(p.C, "C");
  const int64_t m = p.op == SPARSETC_OP_NON_TRANSPOSE ? a.rows : a.cols;
  const int64_t k = p.op == SPARSETC_OP_NON_TRANSPOSE ? a.cols : a.rows;
  require(p.B.rows == k && p.C.rows == m && p.B.cols == p.C.cols, SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A) is ",
          shape(m, k), ", B is ", shape(p.B.rows, p.B.cols), " and C is ", shape(p.C.rows, p.C.cols),
          ": C = op(A) B needs B ", shape(k, p.C.cols), " and C ", shape(m, p.B.cols));
  require(p.A->memory == p.B.memory && p.B.memory == p.C.memory, SPARSETC_STATUS_INVALID_VALUE,
          "A, B and C must be in the same memory space (A: ", p.A->memory == SPARSETC_MEMORY_HOST ? "host" : "device",
          ", B: ", p.B.memory == SPARSETC_MEMORY_HOST ? "host" : "device",
          ", C: ", p.C.memory == SPARSETC_MEMORY_HOST ? "host" : "device", ")");
  require(p.compute >= SPARSETC_COMPUTE_DEFAULT && p.compute <= SPARSETC_COMPUTE_TF32, SPARSETC_STATUS_INVALID_VALUE,
          "unknown compute type ", p.compute);
}

// Features of op(A) for the selector: A normalised once to the canonical device CSR (transposed
// for op = T) and one pass of the GPU analysis (sparsetc_analyze's) at the strip width the tiled
// kernel would use, read back once. About what sparsetc_analyze costs (docs/performance.md,
// "Structure analysis", H200: 0.6-8.4 ms for 16-68M entries) plus the normalisation (elementwise
// passes for a CSR), once per plan; the plan's reason reports the time.
SpmmFeatures measure_features(sparsetc_handle_s& handle, const SpmmProblem& p) {
  SpmmFeatures f;
  f.n = p.B.cols;
  f.value_type = p.B.value_type;
  f.order = p.B.order;
  f.cusparse_csr_refusal = cusparse_csr_algorithms_refusal(p);
  const RawSparse& a = p.A->layout;
  f.rows = p.op == SPARSETC_OP_NON_TRANSPOSE ? a.rows : a.cols;
  f.cols = p.op == SPARSETC_OP_NON_TRANSPOSE ? a.cols : a.rows;
  f.nnz = a.nnz;
  if (a.rows > INT32_MAX || a.cols > INT32_MAX) return f;  // the analysis indexes columns in 32 bits
  if (a.nnz == 0 || f.rows == 0) {
    f.nonempty_rows = f.row_length_max = 0;
    f.row_length_mean = f.row_length_std = f.ssf = 0;
    return f;
  }
  handle.activate();
  const GpuContext context = handle.gpu();
  const DeviceCsr<float> csr = multiplied_csr<float>(p, context);
  const CorePrecision precision = f.value_type == SPARSETC_VALUE_F16    ? CorePrecision::f16
                                  : f.value_type == SPARSETC_VALUE_BF16 ? CorePrecision::bf16
                                  : f.value_type == SPARSETC_VALUE_F64  ? CorePrecision::f64
                                                                        : CorePrecision::f32;
  const Analysis stats = analysis_from_sums(gpu_analysis_sums(
      csr.rows, csr.cols, csr.nnz, csr.row_ptr.as<const int64_t>(), csr.col_idx.as<const int32_t>(), nullptr,
      tiled_strip_width(precision, f.n), context));
  f.nnz = stats.nnz;
  f.nonempty_rows = stats.nonempty_rows;
  f.row_length_mean = stats.row_length_mean;
  f.row_length_max = stats.row_length_max;
  f.row_length_std = stats.row_length_std;
  f.ssf = stats.ssf;
  return f;
}

sparsetc_spmm_alg_t public_alg(SpmmPath path) {
  switch (path) {
    case SpmmPath::TensorCores: return SPARSETC_SPMM_ALG_BCSR_TC;
    case SpmmPath::Csr: return SPARSETC_SPMM_ALG_CSR;
    case SpmmPath::Dcsr: return SPARSETC_SPMM_ALG_DCSR;
    case SpmmPath::TiledDcsr: return SPARSETC_SPMM_ALG_TILED_DCSR;
    case SpmmPath::VbrCublas: return SPARSETC_SPMM_ALG_VBR_CUBLAS;
    default: return SPARSETC_SPMM_ALG_CUSPARSE;
  }
}

// AUTO past the tensor cores: the selector's path from measured features; cuSPARSE (with the
// selector's algorithm) where our kernel does not take the type combination.
void plan_selected(sparsetc_handle_s& handle, sparsetc_spmm_plan_s& plan, std::string tc_reason) {
  const auto start = std::chrono::steady_clock::now();
  const SpmmFeatures features = measure_features(handle, plan.problem);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const SpmmChoice choice = select_spmm(features);
  plan.reason = str(path_name(choice.path), ": ", choice.reason, "; features in ", ms, " ms");
  if (!tc_reason.empty()) plan.reason += "; " + tc_reason;
  if (choice.path == SpmmPath::Csr || choice.path == SpmmPath::Dcsr || choice.path == SpmmPath::TiledDcsr) {
    try {
      plan.executor = make_cuda_core_spmm(handle, plan.problem, public_alg(choice.path));
      plan.alg = public_alg(choice.path);
      if (const std::string note = plan.executor->note(); !note.empty()) plan.reason += "; " + note;
      return;
    } catch (const Error& e) {
      if (e.status() != SPARSETC_STATUS_NOT_SUPPORTED) throw;
      plan.reason += str("; the kernel does not take it (", e.what(), "): cuSPARSE");
    }
  }
  // SpmmPath::VbrCublas is never chosen while its slot is closed (spmm_select.cpp).
  plan.alg = SPARSETC_SPMM_ALG_CUSPARSE;
  plan.reason += str(" ", cusparse_algorithm_name(choice.cusparse_algorithm));
  plan.executor =
      with_unaligned_fallback(handle, plan.problem, make_cusparse_spmm(handle, plan.problem, choice.cusparse_algorithm));
}

sparsetc_compute_type_t resolve_compute(const SpmmProblem& p) {
  if (p.compute != SPARSETC_COMPUTE_DEFAULT) return p.compute;
  const bool any_f64 = p.A->layout.value_type == SPARSETC_VALUE_F64 || p.B.value_type == SPARSETC_VALUE_F64 ||
                       p.C.value_type == SPARSETC_VALUE_F64;
  return any_f64 ? SPARSETC_COMPUTE_64F : SPARSETC_COMPUTE_32F;
}

// A plan is made for operands of given shapes, types and layouts; executions must keep them.
void check_planned(const sparsetc_dense_s& planned, const sparsetc_dense_s& given, const char* name) {
  require(planned.rows == given.rows && planned.cols == given.cols && planned.ld == given.ld,
          SPARSETC_STATUS_DIMENSION_MISMATCH, name, " is ", shape(given.rows, given.cols), " with ld ", given.ld,
          "; the plan was made for ", shape(planned.rows, planned.cols), " with ld ", planned.ld);
  require(planned.value_type == given.value_type && planned.order == given.order && planned.memory == given.memory,
          SPARSETC_STATUS_TYPE_MISMATCH, name,
          " differs from the plan's in value type, order or memory space");
}

}  // namespace

std::unique_ptr<sparsetc_spmm_plan_s> make_spmm_plan(sparsetc_handle_s& handle, sparsetc_operation_t op,
                                                     sparsetc_matrix_s& A, const sparsetc_dense_s& B,
                                                     const sparsetc_dense_s& C, sparsetc_compute_type_t compute,
                                                     sparsetc_spmm_alg_t alg) {
  auto plan = std::make_unique<sparsetc_spmm_plan_s>();
  plan->handle = &handle;
  plan->problem = SpmmProblem{op, &A, B, C, compute};
  if (is_valid_value_type(B.value_type) && is_valid_value_type(C.value_type)) {  // else check_problem says so
    plan->problem.b_rows_aligned = rows_aligned16(B);
    plan->problem.c_rows_aligned = rows_aligned16(C);
  }
  plan->problem.B.values = nullptr;
  plan->problem.C.values = nullptr;
  check_problem(plan->problem);
  plan->problem.compute = resolve_compute(plan->problem);
  const bool on_device = A.memory == SPARSETC_MEMORY_DEVICE;
  const bool reordered = !A.row_permutation.empty();

  switch (alg) {
    case SPARSETC_SPMM_ALG_AUTO:
      if (!on_device) {
        plan->alg = SPARSETC_SPMM_ALG_CPU;
        plan->reason = "operands in host memory: CPU engine";
        plan->executor = make_cpu_spmm(handle, plan->problem);
        break;
      }
      if (bcsr_tc_applies(plan->problem)) {
        // A reordered device matrix is multiplied by the tensor-core path only (it answers in the
        // original row order), so there it is taken whatever the fill.
        std::string tc_reason;
        plan->executor = make_bcsr_tc_spmm(handle, plan->problem, tc_reason, !reordered);
        if (plan->executor) {
          plan->alg = SPARSETC_SPMM_ALG_BCSR_TC;
          plan->reason = reordered ? str("row-reordered matrix: ", tc_reason)
                                   : str("tensor cores: rule 1 (block fill >= ",
                                         tensor_core_fill_threshold(plan->problem.B.cols), " at N ",
                                         plan->problem.B.cols, "): ", tc_reason);
          break;
        }
        plan->reason = tc_reason;
      }
      require(!reordered, SPARSETC_STATUS_NOT_SUPPORTED,
              "a row-reordered device matrix is multiplied on the tensor cores only (f16/bf16 with COMPUTE_32F, "
              "f32 with COMPUTE_TF32, f64 with COMPUTE_64F, op(A) = A)");
      plan_selected(handle, *plan, plan->reason);
      break;
    case SPARSETC_SPMM_ALG_CPU:
      require(!on_device, SPARSETC_STATUS_NOT_SUPPORTED,
              "SPARSETC_SPMM_ALG_CPU needs host operands (copy them with sparsetc_matrix_copy_to)");
      plan->alg = alg;
      plan->reason = "requested: CPU engine";
      plan->executor = make_cpu_spmm(handle, plan->problem);
      break;
    case SPARSETC_SPMM_ALG_CUSPARSE:
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED, "SPARSETC_SPMM_ALG_CUSPARSE needs device operands");
      require(!reordered, SPARSETC_STATUS_NOT_SUPPORTED,
              "cuSPARSE cannot multiply a row-reordered device matrix in its original row order (use "
              "SPARSETC_SPMM_ALG_BCSR_TC or the original matrix)");
      plan->alg = alg;
      {
        // cuSPARSE reads A where it lies, so A need not normalise (duplicates refused by the matrix's
        // policy, say): then the algorithm is chosen by N and type alone.
        SpmmFeatures features;
        std::string note;
        try {
          features = measure_features(handle, plan->problem);
        } catch (const Error& e) {
          features = SpmmFeatures{};
          features.n = plan->problem.B.cols;
          features.value_type = plan->problem.B.value_type;
          note = str(" (by N and type: no features, ", e.what(), ")");
        }
        const CusparseCsrAlgorithm algorithm = select_cusparse_algorithm(features);
        plan->reason = str("requested: cuSPARSE ", cusparse_algorithm_name(algorithm), note);
        plan->executor = make_cusparse_spmm(handle, plan->problem, algorithm);
      }
      break;
    case SPARSETC_SPMM_ALG_BCSR_TC:
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED, "SPARSETC_SPMM_ALG_BCSR_TC needs device operands");
      plan->alg = alg;
      plan->executor = make_bcsr_tc_spmm(handle, plan->problem, plan->reason, false);
      plan->reason = "requested: " + plan->reason;
      break;
    case SPARSETC_SPMM_ALG_CSR:
    case SPARSETC_SPMM_ALG_DCSR:
    case SPARSETC_SPMM_ALG_TILED_DCSR:
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED, "SpMM algorithm ", alg, " needs device operands");
      plan->alg = alg;
      plan->executor = make_cuda_core_spmm(handle, plan->problem, alg);
      plan->reason = "requested";
      if (const std::string note = plan->executor->note(); !note.empty()) plan->reason += ": " + note;
      break;
    case SPARSETC_SPMM_ALG_VBR_CUBLAS:
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED, "SPARSETC_SPMM_ALG_VBR_CUBLAS needs device operands");
      plan->alg = alg;
      plan->executor = make_vbr_cublas_spmm(handle, plan->problem, plan->reason);
      plan->reason = "requested: " + plan->reason;
      break;
    default:
      fail(SPARSETC_STATUS_INVALID_VALUE, "unknown SpMM algorithm ", alg);
  }
  SPARSETC_LOG(info, "spmm plan ", A.layout.rows, "x", A.layout.cols, " nnz ", A.layout.nnz, " N ", B.cols,
               ": alg ", plan->alg, " (", plan->reason, ")");
  return plan;
}

void execute_spmm_plan(sparsetc_spmm_plan_s& plan, double alpha, const sparsetc_dense_s& B, double beta,
                       const sparsetc_dense_s& C, void* workspace, size_t workspace_bytes) {
  check_planned(plan.problem.B, B, "B");
  check_planned(plan.problem.C, C, "C");
  const bool empty_b = B.rows == 0 || B.cols == 0, empty_c = C.rows == 0 || C.cols == 0;
  require(B.values != nullptr || empty_b, SPARSETC_STATUS_NULL_POINTER, "B has no values");
  require(C.values != nullptr || empty_c, SPARSETC_STATUS_NULL_POINTER, "C has no values");
  require(workspace == nullptr || workspace_bytes >= plan.executor->workspace_size(),
          SPARSETC_STATUS_WORKSPACE_TOO_SMALL, "workspace of ", workspace_bytes, " bytes, the plan needs ",
          plan.executor->workspace_size());
  plan.executor->execute(alpha, B, beta, C, workspace, workspace_bytes);
}

}  // namespace sparsetc::detail

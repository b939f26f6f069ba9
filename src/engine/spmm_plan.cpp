#include "engine/spmm_plan.hpp"

#include "core/error.hpp"
#include "core/logging.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"

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

// AUTO's rule for the CSR kernel against cuSPARSE (its CSR algorithm as make_cusparse_spmm picks
// it), fitted on H200 runs: the structured suite of docs/performance.md and the 30 real matrices
// of bench/data/spmm_paths_h200.csv (every device path timed on the same inputs, --all-paths).
// fp32/fp64: the kernel wins at N <= 8 whatever the rows (1.9-4.8x on rail582 and lp_osa_*, where
// CSR_ALG3 stalls on the long skewed rows), with short rows (<= 32 entries) at any N, and with
// long rows (>= 100) up to N = 32, or at any N up to 200 entries; rows of 32-100 entries at
// N >= 16 (bcsstk*, EX5: 0.81-0.83x at N = 32) and very long rows at wide B (bands of half-width
// 512, rail582 at N >= 128) stay with cuSPARSE. Half inputs: the kernel wins at N <= 8 unless rows
// are very long, and with short rows up to N = 32 (cuSPARSE's half CSR_ALG3 is 1.3-2x faster on
// regular matrices beyond that). The selector over all paths (issue 6) replaces this rule.
bool csr_kernel_predicted_faster(const SpmmProblem& p) {
  const RawSparse& a = p.A->layout;
  const int64_t rows = p.op == SPARSETC_OP_NON_TRANSPOSE ? a.rows : a.cols;
  const double row_length = rows > 0 ? double(a.nnz) / double(rows) : 0.0;
  const int64_t n = p.B.cols;
  const bool half = p.B.value_type == SPARSETC_VALUE_F16 || p.B.value_type == SPARSETC_VALUE_BF16;
  if (half) return (n <= 8 && row_length <= 200) || (row_length <= 32 && n <= 32);
  const bool long_rows = row_length >= 100 && ((n <= 32 && row_length <= 800) || row_length <= 200);
  return n <= 8 || row_length <= 32 || long_rows;
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
        plan->executor = make_bcsr_tc_spmm(handle, plan->problem, plan->reason, !reordered);
        if (plan->executor) {
          plan->alg = SPARSETC_SPMM_ALG_BCSR_TC;
          break;
        }
      }
      require(!reordered, SPARSETC_STATUS_NOT_SUPPORTED,
              "a row-reordered device matrix is multiplied on the tensor cores only (f16/bf16 with COMPUTE_32F, "
              "f32 with COMPUTE_TF32, f64 with COMPUTE_64F, op(A) = A)");
      // The CSR kernel where it was measured to beat cuSPARSE's best CSR algorithm (short rows,
      // narrow B); cuSPARSE elsewhere and for the type combinations the kernel does not take.
      try {
        require(csr_kernel_predicted_faster(plan->problem), SPARSETC_STATUS_NOT_SUPPORTED,
                "rows too long or B too wide for the CSR kernel to win");
        plan->executor = make_cuda_core_spmm(handle, plan->problem, SPARSETC_SPMM_ALG_CSR);
        plan->alg = SPARSETC_SPMM_ALG_CSR;
        plan->reason = plan->reason.empty() ? "CSR kernel" : "CSR kernel; " + plan->reason;
      } catch (const Error& e) {
        if (e.status() != SPARSETC_STATUS_NOT_SUPPORTED) throw;
        plan->alg = SPARSETC_SPMM_ALG_CUSPARSE;
        plan->reason = str("cuSPARSE (", e.what(), ")");
        plan->executor = make_cusparse_spmm(handle, plan->problem);
      }
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
      plan->reason = "requested: cuSPARSE";
      plan->executor = make_cusparse_spmm(handle, plan->problem);
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
      plan->reason = "requested";
      plan->executor = make_cuda_core_spmm(handle, plan->problem, alg);
      break;
    case SPARSETC_SPMM_ALG_VBR_CUBLAS:
      fail(SPARSETC_STATUS_NOT_SUPPORTED, "SpMM algorithm ", alg, " is not available in this version");
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

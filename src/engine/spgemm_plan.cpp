#include "engine/spgemm_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"

namespace sparsetc::detail {
namespace {

void read_options(const sparsetc_spgemm_options_t* options, SpgemmProblem& p) {
  if (!options) return;
  require(options->struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
          "sparsetc_spgemm_options_t.struct_size is not set (set it to sizeof(sparsetc_spgemm_options_t))");
  // Append-only structure: read only the fields the caller's version has.
  sparsetc_spgemm_options_t o{};
  std::memcpy(&o, options, std::min(options->struct_size, sizeof o));
  if (options->struct_size >= offsetof(sparsetc_spgemm_options_t, drop_tolerance) + sizeof(double))
    p.drop_tolerance = o.drop_tolerance;
  if (options->struct_size >= offsetof(sparsetc_spgemm_options_t, memory_budget) + sizeof(size_t))
    p.memory_budget = o.memory_budget;
}

void check_problem(const SpgemmProblem& p) {
  for (auto op : {p.op_a, p.op_b})
    require(op == SPARSETC_OP_NON_TRANSPOSE || op == SPARSETC_OP_TRANSPOSE, SPARSETC_STATUS_INVALID_VALUE,
            "unknown operation ", op);
  const auto& a = p.A->layout;
  const auto& b = p.B->layout;
  const int64_t m = p.op_a == SPARSETC_OP_NON_TRANSPOSE ? a.rows : a.cols;
  const int64_t k = p.op_a == SPARSETC_OP_NON_TRANSPOSE ? a.cols : a.rows;
  const int64_t kb = p.op_b == SPARSETC_OP_NON_TRANSPOSE ? b.rows : b.cols;
  const int64_t n = p.op_b == SPARSETC_OP_NON_TRANSPOSE ? b.cols : b.rows;
  require(k == kb, SPARSETC_STATUS_DIMENSION_MISMATCH, "op(A) is ", m, "x", k, " but op(B) is ", kb, "x", n);
  require(p.A->memory == p.B->memory, SPARSETC_STATUS_INVALID_VALUE,
          "A and B must be in the same memory space");
  require(p.compute >= SPARSETC_COMPUTE_DEFAULT && p.compute <= SPARSETC_COMPUTE_64F, SPARSETC_STATUS_INVALID_VALUE,
          "SpGEMM compute type must be DEFAULT, 32F or 64F (got ", p.compute, ")");
}

}  // namespace

std::unique_ptr<sparsetc_spgemm_plan_s> make_spgemm_plan(sparsetc_handle_s& handle, sparsetc_operation_t op_a,
                                                         sparsetc_matrix_s& A, sparsetc_operation_t op_b,
                                                         sparsetc_matrix_s& B, sparsetc_compute_type_t compute,
                                                         sparsetc_spgemm_alg_t alg,
                                                         const sparsetc_spgemm_options_t* options) {
  auto plan = std::make_unique<sparsetc_spgemm_plan_s>();
  plan->handle = &handle;
  SpgemmProblem& p = plan->problem;
  p.op_a = op_a;
  p.A = &A;
  p.op_b = op_b;
  p.B = &B;
  p.compute = compute;
  read_options(options, p);
  check_problem(p);
  if (p.compute == SPARSETC_COMPUTE_DEFAULT)
    p.compute = A.layout.value_type == SPARSETC_VALUE_F64 || B.layout.value_type == SPARSETC_VALUE_F64
                    ? SPARSETC_COMPUTE_64F
                    : SPARSETC_COMPUTE_32F;
  const bool on_device = A.memory == SPARSETC_MEMORY_DEVICE;
  require(!on_device || (A.row_permutation.empty() && B.row_permutation.empty()), SPARSETC_STATUS_NOT_SUPPORTED,
          "multiplying a reordered matrix in device memory is not supported in this version (multiply it on the host, or the original on the device)");
  switch (alg) {
    case SPARSETC_SPGEMM_ALG_AUTO:
      plan->alg = on_device ? SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH : SPARSETC_SPGEMM_ALG_CPU;
      plan->reason = on_device ? "operands in device memory: binned merge-path SpGEMM (any index widths, "
                                 "deterministic, bounded memory)"
                               : "operands in host memory: CPU engine";
      break;
    case SPARSETC_SPGEMM_ALG_CPU:
      require(!on_device, SPARSETC_STATUS_NOT_SUPPORTED, "SPARSETC_SPGEMM_ALG_CPU needs host operands");
      plan->alg = alg;
      plan->reason = "requested: CPU engine";
      break;
    case SPARSETC_SPGEMM_ALG_CUSPARSE:
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED, "SPARSETC_SPGEMM_ALG_CUSPARSE needs device operands");
      plan->alg = alg;
      plan->reason = "requested: cuSPARSE";
      break;
    case SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH:
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED,
              "SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH needs device operands");
      plan->alg = alg;
      plan->reason = "requested: binned merge-path SpGEMM";
      break;
    case SPARSETC_SPGEMM_ALG_TSPARSE_TC:
      fail(SPARSETC_STATUS_NOT_SUPPORTED, "SpGEMM algorithm ", alg, " is not available in this version");
    default:
      fail(SPARSETC_STATUS_INVALID_VALUE, "unknown SpGEMM algorithm ", alg);
  }
  switch (plan->alg) {
    case SPARSETC_SPGEMM_ALG_CPU: plan->executor = make_cpu_spgemm(handle, p); break;
    case SPARSETC_SPGEMM_ALG_CUSPARSE: plan->executor = make_cusparse_spgemm(handle, p); break;
    default: plan->executor = make_binned_spgemm(handle, p); break;
  }
  SPARSETC_LOG(info, "spgemm plan: alg ", plan->alg, " (", plan->reason, "), products ", plan->executor->products());
  return plan;
}

}  // namespace sparsetc::detail

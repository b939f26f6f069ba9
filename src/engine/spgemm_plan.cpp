#include "engine/spgemm_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

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
  if (options->struct_size >= offsetof(sparsetc_spgemm_options_t, tc_precision) + sizeof(sparsetc_tc_precision_t)) {
    require(o.tc_precision >= SPARSETC_TC_PRECISION_DEFAULT && o.tc_precision <= SPARSETC_TC_PRECISION_BF16_SPLIT,
            SPARSETC_STATUS_INVALID_VALUE, "unknown tc_precision ", o.tc_precision);
    p.tc_precision = o.tc_precision;
  }
}

// The arithmetic of the tSparse path and, with it, C's value type (compute 32F or 64F). DEFAULT
// follows the operands: f64 (or compute 64F) -> fp64 tensor cores; bf16 -> bf16; f16 and f32 -> fp16
// (f32 values beyond its range are an error, never a silent Inf). `requested` is the caller's
// compute type before DEFAULT was resolved.
void resolve_tc_precision(SpgemmProblem& p, sparsetc_compute_type_t requested) {
  const sparsetc_value_type_t ta = p.A->layout.value_type, tb = p.B->layout.value_type;
  if (p.tc_precision == SPARSETC_TC_PRECISION_DEFAULT) {
    if (p.compute == SPARSETC_COMPUTE_64F) p.tc_precision = SPARSETC_TC_PRECISION_F64;
    else if (ta == SPARSETC_VALUE_BF16 || tb == SPARSETC_VALUE_BF16) p.tc_precision = SPARSETC_TC_PRECISION_BF16;
    else p.tc_precision = SPARSETC_TC_PRECISION_F16;
  } else if (p.tc_precision != SPARSETC_TC_PRECISION_F64) {
    require(requested != SPARSETC_COMPUTE_64F, SPARSETC_STATUS_INVALID_VALUE,
            "compute type 64F on the tSparse SpGEMM needs tc_precision SPARSETC_TC_PRECISION_F64 (or DEFAULT); got ",
            p.tc_precision);
  }
  p.compute = p.tc_precision == SPARSETC_TC_PRECISION_F64 ? SPARSETC_COMPUTE_64F : SPARSETC_COMPUTE_32F;
}

const char* tc_precision_name(sparsetc_tc_precision_t precision) {
  switch (precision) {
    case SPARSETC_TC_PRECISION_F16: return "fp16 tensor cores, fp32 accumulation";
    case SPARSETC_TC_PRECISION_BF16: return "bf16 tensor cores, fp32 accumulation";
    case SPARSETC_TC_PRECISION_F64: return "fp64 tensor cores";
    case SPARSETC_TC_PRECISION_F16_SPLIT: return "fp16 hi + lo pairs on tensor cores, fp32 accumulation";
    case SPARSETC_TC_PRECISION_BF16_SPLIT: return "bf16 hi + lo pairs on tensor cores, fp32 accumulation";
    default: return "fp32 on CUDA cores (nonTCU)";
  }
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
    case SPARSETC_SPGEMM_ALG_AUTO: {
      plan->alg = on_device ? SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH : SPARSETC_SPGEMM_ALG_CPU;
      plan->reason = on_device ? "operands in device memory: binned merge-path SpGEMM (any index widths, "
                                 "deterministic, bounded memory)"
                               : "operands in host memory: CPU engine";
      // The tensor-core path only where it loses no precision the caller asked for: half-precision
      // operands, or a tc_precision set explicitly (an f32 problem stays on the binned path).
      const auto half = [](sparsetc_value_type_t t) { return t == SPARSETC_VALUE_F16 || t == SPARSETC_VALUE_BF16; };
      const bool consistent = p.tc_precision == SPARSETC_TC_PRECISION_DEFAULT ||
                              p.tc_precision == SPARSETC_TC_PRECISION_F64 || compute != SPARSETC_COMPUTE_64F;
      const bool tc_allowed = consistent && (p.tc_precision != SPARSETC_TC_PRECISION_DEFAULT ||
                                             half(A.layout.value_type) || half(B.layout.value_type));
      std::string why;
      if (on_device && tc_allowed && tsparse_auto_prefers(handle, p, &why)) {
        SpgemmProblem tc = p;
        resolve_tc_precision(tc, compute);
        std::string memory;
        if (auto executor = make_tsparse_spgemm_if_it_fits(handle, tc, &memory)) {
          p = tc;
          plan->executor = std::move(executor);
          plan->alg = SPARSETC_SPGEMM_ALG_TSPARSE_TC;
          plan->reason = "dense 8x8 tiles and long rows (" + why + "): tSparse tile SpGEMM (" +
                         tc_precision_name(p.tc_precision) + ")";
        } else {
          plan->reason += " (the tSparse rule holds, " + why + ", but " + memory + ")";
        }
      } else if (on_device && tc_allowed) {
        plan->reason += " (" + why + ": below the tSparse rule)";
      }
      break;
    }
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
      require(on_device, SPARSETC_STATUS_NOT_SUPPORTED,
              "SPARSETC_SPGEMM_ALG_TSPARSE_TC is not available for host operands (it needs device operands)");
      resolve_tc_precision(p, compute);
      plan->alg = alg;
      plan->reason = std::string("requested: tSparse tile SpGEMM (") + tc_precision_name(p.tc_precision) + ")";
      break;
    default:
      fail(SPARSETC_STATUS_INVALID_VALUE, "unknown SpGEMM algorithm ", alg);
  }
  if (!plan->executor) {  // AUTO may have made the tSparse executor already
    switch (plan->alg) {
      case SPARSETC_SPGEMM_ALG_CPU: plan->executor = make_cpu_spgemm(handle, p); break;
      case SPARSETC_SPGEMM_ALG_CUSPARSE: plan->executor = make_cusparse_spgemm(handle, p); break;
      case SPARSETC_SPGEMM_ALG_TSPARSE_TC: plan->executor = make_tsparse_spgemm(handle, p); break;
      default: plan->executor = make_binned_spgemm(handle, p); break;
    }
  }
  SPARSETC_LOG(info, "spgemm plan: alg ", plan->alg, " (", plan->reason, "), products ", plan->executor->products());
  return plan;
}

}  // namespace sparsetc::detail

// SpMM AUTO's choice of path: one pure function from features of op(A) and the problem's shape and
// types to a path, cuSPARSE's CSR algorithm and the reason, as a short decision list whose
// thresholds bench/scripts/fit_spmm_selector.py fits on timed device paths (every path on the same
// inputs) and validates on held-out matrices. The features are those sparsetc_analyze computes
// (row lengths, non-empty rows, the DCSR paper's SSF) and, for the tensor cores, the block fill
// their plan measures after 1-SA.
#pragma once

#include <cstdint>
#include <string>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

enum class SpmmPath {
  TensorCores,  // BCSR on tensor cores (f16/bf16 inputs; tf32 and f64 when the compute type asks)
  Csr,          // C-stationary CUDA-core kernel over all rows
  Dcsr,         // C-stationary CUDA-core kernel over the non-empty rows only
  TiledDcsr,    // B-stationary CUDA-core kernel over vertical strips
  Cusparse,     // cuSPARSE SpMM with `cusparse_algorithm`
  VbrCublas,    // 1-SA VBR blocks through cuBLAS: a slot, not taken until measured
};

// cuSPARSE's CSR algorithms AUTO chooses between (Default where none applies).
enum class CusparseCsrAlgorithm { Default, Alg1, Alg2, Alg3 };

// Unknown features are negative; rules that need them do not fire.
struct SpmmFeatures {
  int64_t rows = 0, cols = 0, nnz = 0;  // of op(A)
  int64_t nonempty_rows = -1;
  double row_length_mean = -1;
  int64_t row_length_max = -1;
  double row_length_std = -1;  // reported in reasons; no rule reads it (the longest row separates better)
  double ssf = -1;             // at the strip width the tiled kernel uses for this N and type
  int64_t n = 0;               // columns of B and C
  sparsetc_value_type_t value_type = SPARSETC_VALUE_F32;  // of B: f16/bf16 are one class, f32/f64 the other
  sparsetc_order_t order = SPARSETC_ORDER_ROW;            // of B and C (thresholds measured row-major)
  double tensor_core_fill = -1;  // block fill on the tensor cores after 1-SA, when their plan measured it
  // Why cuSPARSE's CSR_ALG2/ALG3 cannot run the problem ("" when they can: a CSR A multiplied as it
  // is, row-major B and C with aligned rows). Rule 5 was measured with them; elsewhere cuSPARSE
  // runs its default algorithm, which with a half-precision C sums in C's precision.
  std::string cusparse_csr_refusal;
};

struct SpmmChoice {
  SpmmPath path = SpmmPath::Cusparse;
  CusparseCsrAlgorithm cusparse_algorithm = CusparseCsrAlgorithm::Default;  // for Cusparse and fallbacks
  std::string reason;  // the rule that fired, with the numbers it compared
};

SpmmChoice select_spmm(const SpmmFeatures& features);

// Rule 1 of select_spmm alone: whether blocks of this fill beat the other paths at N columns (the
// tensor-core plan's pre-filter, before and after 1-SA).
bool tensor_cores_predicted_faster(double fill, int64_t n);
double tensor_core_fill_threshold(int64_t n);

// cuSPARSE's CSR algorithm for these features (rule 5 of select_spmm): what AUTO's cuSPARSE
// fallback and an explicit SPARSETC_SPMM_ALG_CUSPARSE run.
CusparseCsrAlgorithm select_cusparse_algorithm(const SpmmFeatures& features);

const char* path_name(SpmmPath path);
const char* cusparse_algorithm_name(CusparseCsrAlgorithm algorithm);

}  // namespace sparsetc::detail

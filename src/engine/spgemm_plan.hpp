// The SpGEMM plan behind sparsetc_spgemm_plan_t: create (checks, products count, memory
// estimate) -> symbolic (pattern of C, nnz) -> numeric (values; repeatable for new values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "sparsetc/sparsetc_types.h"

struct sparsetc_handle_s;
struct sparsetc_matrix_s;

namespace sparsetc::detail {

struct SpgemmProblem {
  sparsetc_operation_t op_a = SPARSETC_OP_NON_TRANSPOSE;
  sparsetc_matrix_s* A = nullptr;
  sparsetc_operation_t op_b = SPARSETC_OP_NON_TRANSPOSE;
  sparsetc_matrix_s* B = nullptr;
  sparsetc_compute_type_t compute = SPARSETC_COMPUTE_DEFAULT;  // resolved: 32F or 64F after planning
  double drop_tolerance = -1;
  size_t memory_budget = 0;  // bytes of working memory for the binned SpGEMM's C~; 0 = automatic
  // Arithmetic of the tSparse path: as given in the options, resolved (never DEFAULT) once the plan
  // takes TSPARSE_TC.
  sparsetc_tc_precision_t tc_precision = SPARSETC_TC_PRECISION_DEFAULT;
};

class SpgemmExecutor {
 public:
  virtual ~SpgemmExecutor() = default;
  virtual int64_t products() const = 0;
  virtual size_t memory_estimate() const = 0;
  // Returns nnz(C).
  virtual int64_t symbolic() = 0;
  // *C == nullptr: creates C; else overwrites the values of a C made by this plan.
  virtual void numeric(sparsetc_matrix_s** C) = 0;
};

std::unique_ptr<SpgemmExecutor> make_cpu_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem);
std::unique_ptr<SpgemmExecutor> make_cusparse_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem);
// The binned merge-path pipeline on the GPU (gpu/spgemm/binned/); device operands.
std::unique_ptr<SpgemmExecutor> make_binned_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem);
// The tSparse tile pipeline on tensor cores (gpu/spgemm/tsparse/); device operands, problem.tc_precision
// resolved.
std::unique_ptr<SpgemmExecutor> make_tsparse_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem);

// The AUTO rule between the tSparse and binned paths (docs/spgemm.md, fitted on an H200): tSparse
// when nnz(A) >= kTsparseAutoMinNnz, A averages >= kTsparseAutoMinRow entries per row and both
// operands hold >= kTsparseAutoMinPerTile entries per non-empty 8x8 tile. Device operands; one GPU
// analysis pass per operand (a read back each). *why: the measured values. Per tile: 8 in the first
// fit; 32 since the binned path's warp accumulators (it now beats the tiles on bcsstk17/33, 22-24
// per tile, and on the 27-point stencils, 9-10; the bands, 40-61, stay with the tiles).
inline constexpr double kTsparseAutoMinNnz = 300000, kTsparseAutoMinRow = 20, kTsparseAutoMinPerTile = 32;
bool tsparse_auto_prefers(sparsetc_handle_s& handle, const SpgemmProblem& problem, std::string* why);
// AUTO: the tSparse executor when its working memory (the task list) fits half of the free device
// memory, else null and *why says how much it needs (the path has no row panels).
std::unique_ptr<SpgemmExecutor> make_tsparse_spgemm_if_it_fits(sparsetc_handle_s& handle,
                                                               const SpgemmProblem& problem, std::string* why);

}  // namespace sparsetc::detail

struct sparsetc_spgemm_plan_s {
  sparsetc_handle_s* handle = nullptr;
  sparsetc::detail::SpgemmProblem problem;
  sparsetc_spgemm_alg_t alg = SPARSETC_SPGEMM_ALG_AUTO;
  std::string reason;
  std::unique_ptr<sparsetc::detail::SpgemmExecutor> executor;
  bool symbolic_done = false;
  int64_t nnz_c = -1;
};

namespace sparsetc::detail {

std::unique_ptr<sparsetc_spgemm_plan_s> make_spgemm_plan(sparsetc_handle_s& handle, sparsetc_operation_t op_a,
                                                         sparsetc_matrix_s& A, sparsetc_operation_t op_b,
                                                         sparsetc_matrix_s& B, sparsetc_compute_type_t compute,
                                                         sparsetc_spgemm_alg_t alg,
                                                         const sparsetc_spgemm_options_t* options);

// Output index type of C: int32 when every column index fits, else int64.
inline sparsetc_index_type_t spgemm_index_type(int64_t cols) {
  return cols <= INT32_MAX ? SPARSETC_INDEX_32 : SPARSETC_INDEX_64;
}

}  // namespace sparsetc::detail

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

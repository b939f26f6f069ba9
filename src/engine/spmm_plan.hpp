// The SpMM plan behind sparsetc_spmm_plan_t: the choice of algorithm, made once, and the executor
// that runs it. Executors share one small interface so new kernels plug in beside the old.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/types.hpp"
#include "engine/dense.hpp"
#include "engine/spmm_select.hpp"
#include "sparsetc/sparsetc_types.h"

struct sparsetc_handle_s;
struct sparsetc_matrix_s;

namespace sparsetc::detail {

struct SpmmProblem {
  sparsetc_operation_t op = SPARSETC_OP_NON_TRANSPOSE;
  sparsetc_matrix_s* A = nullptr;
  sparsetc_dense_s B;  // shape, type, layout (values ignored)
  sparsetc_dense_s C;
  sparsetc_compute_type_t compute = SPARSETC_COMPUTE_DEFAULT;  // resolved: never DEFAULT after planning
  // Whether B's and C's rows started on 16-byte boundaries (pointer and leading dimension) when the
  // plan was made: a plan keeps no pointers, but calls usually pass the buffers it was made with.
  bool b_rows_aligned = true, c_rows_aligned = true;
};

// Whether every row of a row-major dense operand starts on a 16-byte boundary: its pointer (a
// plan's operands have none) and its leading dimension in bytes. The row kernel's vector loads
// and cuSPARSE's CSR_ALG2/ALG3 need it (with an odd leading dimension cuSPARSE 13 faults with a
// misaligned address and breaks the context).
inline bool rows_aligned16(const sparsetc_dense_s& d) {
  return reinterpret_cast<uintptr_t>(d.values) % 16 == 0 && (uint64_t(d.ld) * value_size(d.value_type)) % 16 == 0;
}

class SpmmExecutor {
 public:
  virtual ~SpmmExecutor() = default;
  virtual size_t workspace_size() const = 0;
  // What the executor decided at creation beyond the plan's choice (empty: nothing to add).
  virtual std::string note() const { return {}; }
  virtual void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C,
                       void* workspace, size_t workspace_bytes) = 0;
};

std::unique_ptr<SpmmExecutor> make_cpu_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem);
std::unique_ptr<SpmmExecutor> make_cusparse_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem);
// cuSPARSE with the CSR algorithm the selector chose (cuSPARSE's default where the operands' order,
// alignment or op(A) do not allow it).
std::unique_ptr<SpmmExecutor> make_cusparse_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                CusparseCsrAlgorithm algorithm);
// Why cuSPARSE's CSR_ALG2/ALG3 cannot run the problem ("" when they can): they take a CSR A
// multiplied as it is and row-major B and C with 16-byte aligned rows; elsewhere cuSPARSE runs its
// default algorithm.
std::string cusparse_csr_algorithms_refusal(const SpmmProblem& problem);
// Whether they also take a call's B and C (rows 16-byte aligned, pointers included).
bool cusparse_csr_algorithms_take(const sparsetc_dense_s& B, const sparsetc_dense_s& C);
// AUTO's cuSPARSE executor, with calls whose B or C is not 16-byte aligned sent to the CSR kernel
// (cuSPARSE would run its default algorithm: slower, and for an f16/bf16 C, summing in C's type).
std::unique_ptr<SpmmExecutor> with_unaligned_fallback(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                      std::unique_ptr<SpmmExecutor> cusparse);
// Internal variant of the tiled DCSR path: A kept as CSC and each CTA's tile built from it on the
// fly (the DCSR paper's near-memory conversion in software). Reached through make_cuda_core_spmm
// (tests, benchmarks), not a public algorithm.
inline constexpr sparsetc_spmm_alg_t kSpmmAlgTiledFromCsc = 1000;
// Device kernels of this library. alg: SPARSETC_SPMM_ALG_CSR, _DCSR, _TILED_DCSR or kSpmmAlgTiledFromCsc.
std::unique_ptr<SpmmExecutor> make_cuda_core_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                  sparsetc_spmm_alg_t alg);
// BCSR on tensor cores. With only_if_predicted_faster (AUTO), nullptr when A's blocks fill too
// little for the tensor cores to beat the CUDA-core paths; `reason` says what was decided.
std::unique_ptr<SpmmExecutor> make_bcsr_tc_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                std::string& reason, bool only_if_predicted_faster);
// Whether the problem's memory spaces and types fit the tensor-core path at all.
bool bcsr_tc_applies(const SpmmProblem& problem);

}  // namespace sparsetc::detail

struct sparsetc_spmm_plan_s {
  sparsetc_handle_s* handle = nullptr;
  sparsetc::detail::SpmmProblem problem;
  sparsetc_spmm_alg_t alg = SPARSETC_SPMM_ALG_AUTO;  // the one chosen
  std::string reason;
  std::unique_ptr<sparsetc::detail::SpmmExecutor> executor;
};

namespace sparsetc::detail {

std::unique_ptr<sparsetc_spmm_plan_s> make_spmm_plan(sparsetc_handle_s& handle, sparsetc_operation_t op,
                                                     sparsetc_matrix_s& A, const sparsetc_dense_s& B,
                                                     const sparsetc_dense_s& C, sparsetc_compute_type_t compute,
                                                     sparsetc_spmm_alg_t alg);
void execute_spmm_plan(sparsetc_spmm_plan_s& plan, double alpha, const sparsetc_dense_s& B, double beta,
                       const sparsetc_dense_s& C, void* workspace, size_t workspace_bytes);

}  // namespace sparsetc::detail

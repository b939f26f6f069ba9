// SPARSETC_SPMM_ALG_VBR_CUBLAS: the 1-SA paper's own multiply (§4.4). At plan time A is normalised on
// the device, its rows reordered by 1-SA (Jaccard similarity with the density bound, src/reorder)
// into row groups of variable height, cut into VBR blocks of width Δ_W and multiplied through
// grouped cuBLAS GEMMs on tensor cores (gpu/spmm/vbr_cublas); C comes back in A's row order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/spmm_plan.hpp"
#include "gpu/spmm/vbr_cublas/vbr_multiply.hpp"

namespace sparsetc::detail {

// Knobs for tests and the benchmark; the defaults are what the plan uses.
struct VbrCublasOptions {
  int64_t block_width = 0;  // Δ_W, a multiple of 64; 0: chosen by the cost model among 64 and 128
  double tau = 0;           // 1-SA threshold; 0: chosen by the cost model among 0.3 and 0.5
  bool try_identity = true; // the unpermuted rows in groups of 64 compete too (matrices already blocked)
  VbrMultiplyOptions multiply;
};

// What the plan decided, for logs, tests and the benchmark.
struct VbrCublasInfo {
  int64_t block_width = 0;
  double tau = 0;  // 0: the identity order won
  int64_t groups = 0, blocks = 0, nnz = 0, stored_area = 0;
  int64_t nonempty_groups = 0;  // row groups with at least one block (each is one GEMM)
  double mean_group_height = 0;
  double preprocess_seconds = 0, reorder_seconds = 0;
  int64_t cublas_calls = 0, gemms = 0, shapes = 0;
};

// Device operands; A and B of one value type: f16 or bf16 with COMPUTE_32F, f32 with COMPUTE_32F
// (fp32 GEMM) or COMPUTE_TF32 (tensor cores), f64 with COMPUTE_64F; C in that type or f32 (f64
// for f64). NOT_SUPPORTED otherwise.
std::unique_ptr<SpmmExecutor> make_vbr_cublas_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                   std::string& reason);
std::unique_ptr<SpmmExecutor> make_vbr_cublas_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                   std::string& reason, const VbrCublasOptions& options,
                                                   VbrCublasInfo* info = nullptr);
// Whether the problem's memory spaces and types fit this path (no throw).
bool vbr_cublas_applies(const SpmmProblem& problem);

}  // namespace sparsetc::detail

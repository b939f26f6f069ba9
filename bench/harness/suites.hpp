// The three suites. Each runs every selected variant of its cases on one matrix and appends one
// Result per variant to ctx.results (variants filtered out by --only/--skip leave no row).
#pragma once

#include "harness/inputs.hpp"
#include "harness/runner.hpp"

namespace bench {

// C = A·B for every N of --n: cuSPARSE CSR (default, ALG1-3), BSR 16, Blocked-ELL 16/32, cuBLAS
// dense GEMM, and sparsetc's plan/execute, over the input types and layouts asked for.
void run_spmm_suite(Context& ctx, const MatrixInput& input);

// C = A·A (A·Aᵀ for rectangular A): cuSPARSE ALG1-3 with cudaMalloc'd or pooled buffers, and
// sparsetc's plan/symbolic/numeric, in f32 and f64.
void run_spgemm_suite(Context& ctx, const MatrixInput& input);

// Format conversions: cuSPARSE csr2csc and csr2bsr (block 16); sparsetc's own GPU conversions
// plug into the table in suite_convert.cpp.
void run_convert_suite(Context& ctx, const MatrixInput& input);

}  // namespace bench

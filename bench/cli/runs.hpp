// One timed, verified run of an operation, as a row of the CLI's table.
#pragma once

#include <sparsetc/sparsetc.h>

#include <string>

#include "cli/options.hpp"

namespace sparsetc_cli {

struct Row {
  std::string op, where, alg;
  int64_t rows = 0, cols = 0, nnz = 0, n = 0;
  double median_ms = 0, gflops = 0, error = 0;
  bool verified = false;
};

// Exits with a message naming the call and the library's last error when a call fails.
void check(sparsetc_status_t status, sparsetc_handle_t handle, const char* call);
#define CLI_CHECK(handle, call) ::sparsetc_cli::check((call), (handle), #call)

// handle runs the operation; reference is a CPU handle computing the float64 oracle. A (and B)
// are host matrices.
Row run_spmm(sparsetc_handle_t handle, sparsetc_handle_t reference, sparsetc_matrix_t A, const Options& options);
Row run_spgemm(sparsetc_handle_t handle, sparsetc_handle_t reference, sparsetc_matrix_t A, sparsetc_matrix_t B,
               const Options& options);

}  // namespace sparsetc_cli

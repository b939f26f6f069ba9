// One row of the benchmark's output: a (matrix, op, N, variant) measurement or the reason there is
// none. Columns are described in docs/benchmarking.md.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "harness/checked_calls.hpp"

namespace bench {

struct Result {
  // The case.
  std::string matrix;
  int64_t rows = 0, cols = 0, nnz = 0;
  std::string op;  // spmm, spgemm, csr2csc, csr2bsr16
  int64_t n = 0;   // SpMM: columns of B; else 0
  // The variant.
  std::string variant;   // unique within a case, e.g. csr_alg2/f16/row
  std::string provider;  // cusparse, cublas, sparsetc
  std::string format;    // csr, bsr16, bell16, bell32, dense, csc
  std::string alg;       // the library's algorithm name
  std::string value_type;
  std::string layout;  // SpMM: row or col (B and C); else empty
  std::string mode;    // SpGEMM: malloc, pool or api
  // The outcome.
  Status status = Status::ok;
  std::string reason;  // why not ok
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
  int runs = 0;
  double setup_ms = NAN;     // untimed preparation: conversion, workspace, plan (host clock)
  double flops = 0;          // useful flops: SpMM 2 nnz N, SpGEMM 2 products
  double floor_bytes = 0;    // fewest bytes the operation must move
  double gflops = NAN, gbps = NAN, bw_fraction = NAN;  // from median_ms; gbps = floor_bytes / time
  double mem_bytes = NAN;    // peak device memory the variant allocated itself
  double rel_err = NAN;      // of the checked entries
  std::string note;          // e.g. Blocked-ELL padding, BSR fill, the plan's algorithm
  double speedup = NAN;      // best vendor median / this median (ok results; filled at the end)
};

}  // namespace bench

// Float64 host references and the checks every result must pass before it is timed.
//
// SpMM: sampled rows of C (the first, the last, the longest and random ones), all columns,
// computed from the inputs exactly as the device got them (A's values and B rounded to the input
// type). An entry passes when |got - want| <= tol * sum_k |a_ik b_kj|; every entry of C, sampled
// or not, must also be finite (C is poisoned with NaN before the checked run).
// SpGEMM: nnz(C) against a host symbolic count, the structure of every row (offsets, columns in
// range and strictly increasing, finite values) on the device, and sampled rows' columns exactly
// and values with the same entry-wise bound.
#pragma once

#include <library_types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/inputs.hpp"

namespace bench {

struct CheckResult {
  bool ok = true;
  double rel_err = 0;  // ||got - want|| / ||want|| over the sampled entries
  std::string message;
};

// Tolerances: relative to sum |a||b| of each entry.
double spmm_tolerance(cudaDataType input_type);  // f32 1e-4, f16/bf16 1e-2
double spgemm_tolerance(cudaDataType type);      // f32 1e-4, f64 1e-10

// Distinct sorted rows: 0, rows-1, the longest row, then seeded random rows up to `count`.
std::vector<int64_t> sample_rows(const HostCsr& a, int count, uint64_t seed);
// A's values as the device gets them in `type` (f64: unchanged).
std::vector<double> rounded_values(const HostCsr& a, cudaDataType type);

struct SpmmReference {
  std::vector<int64_t> rows;
  int64_t n = 0;
  std::vector<double> value, bound;  // rows.size() x n, row-major
};
SpmmReference spmm_reference(const HostCsr& a, const std::vector<double>& a_values, int64_t n, cudaDataType b_type,
                             uint64_t b_seed, const std::vector<int64_t>& rows);
// got: the sampled rows (rows.size() x n, row-major) as fp32; nonfinite: count over all of C.
CheckResult check_spmm(const SpmmReference& ref, const std::vector<float>& got, unsigned long long nonfinite,
                       double tol);

// nnz(A·B) by a host symbolic pass (threads; O(products)).
int64_t spgemm_nnz(const HostCsr& a, const HostCsr& b);

struct SpgemmReference {
  std::vector<int64_t> rows;
  std::vector<int64_t> offsets;  // rows.size() + 1 into cols / value / bound
  std::vector<int32_t> cols;
  std::vector<double> value, bound;
  int64_t nnz = -1;  // whole C; -1 when not counted (too many products)
};
SpgemmReference spgemm_reference(const HostCsr& a, const std::vector<double>& a_values, const HostCsr& b,
                                 const std::vector<double>& b_values, const std::vector<int64_t>& rows,
                                 int64_t nnz_total);

// What the check reads back of a device CSR result.
struct SpgemmOutput {
  int64_t rows = 0, nnz = 0;
  std::vector<int32_t> row_ptr;      // rows + 1
  std::vector<int32_t> cols;         // the sampled rows, concatenated in the order of ref.rows
  std::vector<double> values;
  unsigned long long bad_rows = 0, bad_entries = 0, nonfinite = 0;  // device structure check
};
CheckResult check_spgemm(const SpgemmReference& ref, const SpgemmOutput& got, double tol);

}  // namespace bench

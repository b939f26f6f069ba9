// The protocol every variant follows, and what the suites share: handles, the timer, the results.
//
//   setup (untimed; host clock -> setup_ms)
//   poison the outputs (NaN), run once, check against the reference  -> wrong: stop here, no time
//   warm-up + timed runs (Timer: L2 evicted before each, events around each, median)
//   check again (the timed runs must leave the same, correct result)
//
// A VariantError anywhere ends the variant as failed / unsupported / skipped; the run goes on.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <sparsetc/sparsetc.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "harness/inputs.hpp"
#include "harness/options.hpp"
#include "harness/reference.hpp"
#include "harness/results.hpp"
#include "harness/timing.hpp"

namespace bench {

struct DeviceInfo;

struct Context {
  const Options& options;
  const DeviceInfo& device;
  cudaStream_t stream;
  cusparseHandle_t cusparse;
  cublasHandle_t cublas;
  sparsetc_handle_t stc;  // GPU backend, on `stream`
  Timer& timer;
  double copy_gbps;  // measured device-to-device bandwidth (read + write)
  std::vector<Result>& results;
};

class Variant {
 public:
  virtual ~Variant() = default;
  virtual void setup() = 0;           // everything a caller would do once: conversion, workspace, plan
  virtual void poison() = 0;          // fill the outputs with NaN before the checked run
  virtual void run() = 0;             // the timed body; enqueues on ctx.stream
  virtual CheckResult check() = 0;    // the output of the last run against the reference
  virtual std::string note() const { return {}; }  // e.g. the format's padding, the plan's choice
  // Device memory a library allocated for itself during the variant, where it can tell (sparsetc's
  // memory statistics); the start is marked before setup. NAN: not known.
  virtual void mark_library_memory() {}
  virtual double library_memory_bytes() { return NAN; }
};

// sparsetc's own accounting of a GPU handle's memory: the mark resets the peak and returns the
// bytes held now; the peak is what was held at most since, above the mark.
int64_t sparsetc_memory_mark(sparsetc_handle_t h);
double sparsetc_memory_peak(sparsetc_handle_t h, int64_t mark);

// --timeout-per-case: the clock of one (matrix, op, N) case.
class CaseClock {
 public:
  explicit CaseClock(double limit_s) : limit_s_(limit_s), start_(std::chrono::steady_clock::now()) {}
  bool expired() const { return limit_s_ > 0 && elapsed_s() > limit_s_; }
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double limit_s_;
  std::chrono::steady_clock::time_point start_;
};

// Runs `v` through the protocol and fills r's outcome, times, memory and derived metrics (r's case,
// variant, flops and floor_bytes are set by the caller). FatalError propagates.
void execute_variant(Context& ctx, Variant& v, Result& r);

// Records a variant that does not run (skipped, unsupported, pending) with its reason.
void record_not_run(Context& ctx, Result r, Status status, const std::string& reason);

// Prints one progress line for a finished case to stderr.
void report_case(const std::vector<Result>& results, size_t first, const CaseClock& clock);

// A result row with the matrix's name and shape filled in; the suites complete the rest.
inline Result case_result(const MatrixInput& input) {
  Result r;
  r.matrix = input.name;
  r.rows = input.A.rows;
  r.cols = input.A.cols;
  r.nnz = input.A.nnz();
  return r;
}

}  // namespace bench

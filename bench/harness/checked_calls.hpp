// Checked calls. Every CUDA, cuSPARSE, cuBLAS and sparsetc call of the harness goes through one of
// the BENCH_* macros: on failure it prints the call, file:line and the error's name to stderr and
// throws. VariantError aborts the variant in progress (it is recorded as failed or unsupported and
// the run goes on); FatalError means the CUDA context is broken and the run must stop.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <sparsetc/sparsetc.h>

#include <stdexcept>
#include <string>

namespace bench {

// Outcome of one variant. Only `ok` results carry times.
enum class Status { ok, wrong, failed, unsupported, skipped, pending };
const char* status_name(Status s);

class VariantError : public std::runtime_error {
 public:
  VariantError(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

class FatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void cuda_failed(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void cusparse_failed(cusparseStatus_t s, const char* call, const char* file, int line);
[[noreturn]] void cublas_failed(cublasStatus_t s, const char* call, const char* file, int line);
[[noreturn]] void sparsetc_failed(sparsetc_status_t s, sparsetc_handle_t h, const char* call, const char* file,
                                  int line);

// After a failed variant: throws FatalError when the device can no longer be used (a sticky error
// such as an illegal address), otherwise clears the error state.
void ensure_device_usable();

}  // namespace bench

#define BENCH_CUDA(call)                                                            \
  do {                                                                              \
    const cudaError_t bench_e_ = (call);                                            \
    if (bench_e_ != cudaSuccess) ::bench::cuda_failed(bench_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define BENCH_CUSPARSE(call)                                                                         \
  do {                                                                                               \
    const cusparseStatus_t bench_s_ = (call);                                                        \
    if (bench_s_ != CUSPARSE_STATUS_SUCCESS) ::bench::cusparse_failed(bench_s_, #call, __FILE__, __LINE__); \
  } while (0)

#define BENCH_CUBLAS(call)                                                                       \
  do {                                                                                           \
    const cublasStatus_t bench_s_ = (call);                                                      \
    if (bench_s_ != CUBLAS_STATUS_SUCCESS) ::bench::cublas_failed(bench_s_, #call, __FILE__, __LINE__); \
  } while (0)

#define BENCH_STC(handle, call)                                                                            \
  do {                                                                                                     \
    const sparsetc_status_t bench_s_ = (call);                                                             \
    if (bench_s_ != SPARSETC_STATUS_SUCCESS) ::bench::sparsetc_failed(bench_s_, (handle), #call, __FILE__, __LINE__); \
  } while (0)

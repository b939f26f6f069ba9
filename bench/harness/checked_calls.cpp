#include "harness/checked_calls.hpp"

#include <cstdio>
#include <cstring>

namespace bench {
namespace {

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Errors after which the context is unusable: every later CUDA call fails too.
bool sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " at " + base_name(file) + ":" + std::to_string(line);
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::wrong: return "wrong";
    case Status::failed: return "failed";
    case Status::unsupported: return "unsupported";
    case Status::skipped: return "skipped";
    case Status::pending: return "pending";
  }
  return "?";
}

void cuda_failed(cudaError_t e, const char* call, const char* file, int line) {
  const std::string message = where(call, file, line) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  std::fprintf(stderr, "  error: %s\n", message.c_str());
  if (sticky(e)) throw FatalError(message);
  cudaGetLastError();  // clear a non-sticky error so the next variant starts clean
  throw VariantError(Status::failed, message);
}

void cusparse_failed(cusparseStatus_t s, const char* call, const char* file, int line) {
  const std::string message = where(call, file, line) + ": " + cusparseGetErrorName(s);
  std::fprintf(stderr, "  error: %s\n", message.c_str());
  const bool refused = s == CUSPARSE_STATUS_NOT_SUPPORTED || s == CUSPARSE_STATUS_ARCH_MISMATCH ||
                       s == CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED;
  throw VariantError(refused ? Status::unsupported : Status::failed, message);
}

void cublas_failed(cublasStatus_t s, const char* call, const char* file, int line) {
  const std::string message = where(call, file, line) + ": " + cublasGetStatusName(s);
  std::fprintf(stderr, "  error: %s\n", message.c_str());
  const bool refused = s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH;
  throw VariantError(refused ? Status::unsupported : Status::failed, message);
}

void sparsetc_failed(sparsetc_status_t s, sparsetc_handle_t h, const char* call, const char* file, int line) {
  char detail[1024] = {0};
  sparsetc_get_last_error(h, detail, sizeof detail);
  const std::string message = where(call, file, line) + ": " + sparsetc_get_status_name(s) + " (" + detail + ")";
  std::fprintf(stderr, "  error: %s\n", message.c_str());
  throw VariantError(s == SPARSETC_STATUS_NOT_SUPPORTED ? Status::unsupported : Status::failed, message);
}

void ensure_device_usable() {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return;
  // A non-sticky error clears when read; a sticky one comes back on the next synchronisation.
  cudaGetLastError();
  const cudaError_t again = cudaDeviceSynchronize();
  if (sticky(e) || again != cudaSuccess)
    throw FatalError(std::string("the CUDA context is broken after a failed variant: ") + cudaGetErrorName(e));
  std::fprintf(stderr, "  warning: %s after a failed variant (cleared)\n", cudaGetErrorName(e));
}

}  // namespace bench

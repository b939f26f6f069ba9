// Shared by the SpGEMM benchmarks (binned, tSparse): a fallible event timer and one whole
// cuSPARSE SpGEMM C = A * A, as a caller without a plan runs it.
#pragma once

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace spgemm_bench {

// Why a benchmark does not run here (not asked for with SPARSETC_BENCH=1, or no device), or
// nullptr when it runs: `if (const char* why = skip_reason()) GTEST_SKIP() << why;`.
inline const char* skip_reason() {
  const char* flag = std::getenv("SPARSETC_BENCH");
  if (!flag || std::string(flag) != "1") return "set SPARSETC_BENCH=1 to run";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return "no CUDA device";
  }
  return nullptr;
}

// SPARSETC_BENCH_RUNS (default 10).
inline int runs_from_environment() {
  const char* runs = std::getenv("SPARSETC_BENCH_RUNS");
  return runs ? std::atoi(runs) : 10;
}

// What the SpGEMM benchmarks against cuSPARSE share: the device's properties, a non-blocking
// stream, a cuSPARSE handle on it, and the default memory pool kept warm (release threshold
// raised: cuSPARSE's allocations from it are its best case).
struct CusparseBench {
  int runs = runs_from_environment();
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cusparseHandle_t handle = nullptr;
  bool ready = false;  // stream and handle made

  CusparseBench() {
    cudaGetDeviceProperties(&prop, 0);
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return;
    if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) return;
    cusparseSetStream(handle, stream);
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    uint64_t threshold = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    ready = true;
  }
  ~CusparseBench() {
    if (handle) cusparseDestroy(handle);
    if (stream) cudaStreamDestroy(stream);
  }
  CusparseBench(const CusparseBench&) = delete;
  CusparseBench& operator=(const CusparseBench&) = delete;
};

// Median of `runs` event-timed calls of f after one untimed call; -1 when a call fails.
inline double median_ms(cudaStream_t stream, int runs, const std::function<bool()>& f) {
  if (!f()) return -1;  // warm-up (and a failure check)
  if (cudaStreamSynchronize(stream) != cudaSuccess) return -1;
  std::vector<double> t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int r = 0; r < runs; ++r) {
    cudaEventRecord(a, stream);
    if (!f()) return -1;
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A square A in int32 CSR on the device, values in fp32 and/or fp64.
struct DeviceInput {
  int64_t n = 0, nnz = 0;
  int *row_ptr = nullptr, *col = nullptr;
  float* val32 = nullptr;
  double* val64 = nullptr;
};

#define CS_TRY(call)                                     \
  do {                                                   \
    if ((call) != CUSPARSE_STATUS_SUCCESS) return false; \
  } while (0)

// One whole cuSPARSE SpGEMM C = A * A in fp32 or fp64 (buffers and C allocated stream-ordered inside
// the call); false on any failure (INSUFFICIENT_RESOURCES, allocation).
struct CusparseRun {
  cusparseHandle_t handle;
  cudaStream_t stream;
  cusparseSpGEMMAlg_t alg;
  const DeviceInput& in;
  bool fp64 = false;
  int64_t nnz_c = -1;     // out: nnz(C) of the last run
  double peak_bytes = 0;  // out: most bytes of cuSPARSE buffers and C live at once

  void* alloc(size_t bytes, double& live) {
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes ? bytes : 16, stream) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    live += double(bytes);
    peak_bytes = std::max(peak_bytes, live);
    return p;
  }

  bool operator()() {
    const double one64 = 1, zero64 = 0;
    const float one32 = 1, zero32 = 0;
    const void* one = fp64 ? static_cast<const void*>(&one64) : static_cast<const void*>(&one32);
    const void* zero = fp64 ? static_cast<const void*>(&zero64) : static_cast<const void*>(&zero32);
    const cudaDataType type = fp64 ? CUDA_R_64F : CUDA_R_32F;
    const size_t bytes = fp64 ? 8 : 4;
    void* values = fp64 ? static_cast<void*>(in.val64) : static_cast<void*>(in.val32);
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    double live = 0;
    cusparseSpMatDescr_t a = nullptr, c = nullptr;
    cusparseSpGEMMDescr_t d = nullptr;
    void *b1 = nullptr, *b2 = nullptr, *b3 = nullptr, *c_row = nullptr, *c_col = nullptr, *c_val = nullptr;
    bool ok = [&] {
      CS_TRY(cusparseCreateCsr(&a, in.n, in.n, in.nnz, in.row_ptr, in.col, values, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
      if (!(c_row = alloc(size_t(in.n + 1) * 4, live))) return false;
      CS_TRY(cusparseCreateCsr(&c, in.n, in.n, 0, c_row, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_BASE_ZERO, type));
      CS_TRY(cusparseSpGEMM_createDescr(&d));
      size_t s1 = 0, s2 = 0, s3 = 0;
      CS_TRY(cusparseSpGEMM_workEstimation(handle, op, op, one, a, a, zero, c, type, alg, d, &s1, nullptr));
      if (!(b1 = alloc(s1, live))) return false;
      CS_TRY(cusparseSpGEMM_workEstimation(handle, op, op, one, a, a, zero, c, type, alg, d, &s1, b1));
      if (alg == CUSPARSE_SPGEMM_ALG1) {
        CS_TRY(cusparseSpGEMM_compute(handle, op, op, one, a, a, zero, c, type, alg, d, &s2, nullptr));
      } else {
        CS_TRY(cusparseSpGEMM_estimateMemory(handle, op, op, one, a, a, zero, c, type, alg, d, 0.2f, &s3, nullptr,
                                             nullptr));
        if (!(b3 = alloc(s3, live))) return false;
        CS_TRY(cusparseSpGEMM_estimateMemory(handle, op, op, one, a, a, zero, c, type, alg, d, 0.2f, &s3, b3, &s2));
        cudaFreeAsync(b3, stream);
        live -= double(s3);
        b3 = nullptr;
      }
      if (!(b2 = alloc(s2, live))) return false;
      CS_TRY(cusparseSpGEMM_compute(handle, op, op, one, a, a, zero, c, type, alg, d, &s2, b2));
      int64_t rows = 0, cols = 0, nnz = 0;
      CS_TRY(cusparseSpMatGetSize(c, &rows, &cols, &nnz));
      nnz_c = nnz;
      if (!(c_col = alloc(size_t(nnz) * 4, live)) || !(c_val = alloc(size_t(nnz) * bytes, live))) return false;
      CS_TRY(cusparseCsrSetPointers(c, c_row, c_col, c_val));
      CS_TRY(cusparseSpGEMM_copy(handle, op, op, one, a, a, zero, c, type, alg, d));
      return true;
    }();
    if (d) cusparseSpGEMM_destroyDescr(d);
    if (a) cusparseDestroySpMat(a);
    if (c) cusparseDestroySpMat(c);
    for (void* p : {b1, b2, b3, c_row, c_col, c_val})
      if (p) cudaFreeAsync(p, stream);
    return ok;
  }
};

}  // namespace spgemm_bench

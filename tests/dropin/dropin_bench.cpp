// Drop-in benchmark, written against plain cuSPARSE: SpMM (CSR, f32, N = 32 and 128) and SpGEMM
// (C = A A, the whole plain sequence) on generated matrices (band, 2-D Poisson) and real ones read
// from Matrix Market files. Run it as built and under LD_PRELOAD=libsparsetc_cusparse.so
// (run_dropin_bench.sh): the ratio of the medians is the drop-in's speedup.
//   dropin_bench [matrix dir] [matrix names...]
// Output, one line per case: "<op> <matrix> <rows> <nnz> <N> <median ms>".
#include <cusparse.h>
#include <cuda_runtime.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#define CHECK_CUDA(call)                                                                                \
  do {                                                                                                  \
    const cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)
#define CHECK_CUSPARSE(call)                                                                            \
  do {                                                                                                  \
    const cusparseStatus_t s_ = (call);                                                                 \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cusparseGetErrorString(s_));   \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

namespace {

struct Csr {
  std::string name;
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> offsets, columns;
  std::vector<float> values;
};

float value_of(uint64_t i) {  // deterministic, in +-[0.5, 1.5]
  i = (i + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
  i ^= i >> 31;
  const float v = 0.5f + float(i % 1000) / 1000.0f;
  return (i >> 20) & 1 ? v : -v;
}

Csr from_triplets(std::string name, int64_t rows, int64_t cols, std::vector<std::pair<int64_t, int64_t>>& entries) {
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  Csr a;
  a.name = std::move(name);
  a.rows = rows;
  a.cols = cols;
  a.offsets.assign(size_t(rows) + 1, 0);
  for (const auto& [i, j] : entries) {
    ++a.offsets[size_t(i) + 1];
    a.columns.push_back(int32_t(j));
    a.values.push_back(value_of(uint64_t(i) * 1000003u + uint64_t(j)));
  }
  for (int64_t i = 0; i < rows; ++i) a.offsets[size_t(i) + 1] += a.offsets[size_t(i)];
  return a;
}

Csr band(int64_t n, int64_t half_width) {
  std::vector<std::pair<int64_t, int64_t>> e;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = std::max<int64_t>(0, i - half_width); j <= std::min(n - 1, i + half_width); ++j) e.push_back({i, j});
  return from_triplets("band_" + std::to_string(n) + "_" + std::to_string(half_width), n, n, e);
}

Csr poisson2d(int64_t g) {
  std::vector<std::pair<int64_t, int64_t>> e;
  for (int64_t x = 0; x < g; ++x)
    for (int64_t y = 0; y < g; ++y) {
      const int64_t i = x * g + y;
      e.push_back({i, i});
      if (x > 0) e.push_back({i, i - g});
      if (x + 1 < g) e.push_back({i, i + g});
      if (y > 0) e.push_back({i, i - 1});
      if (y + 1 < g) e.push_back({i, i + 1});
    }
  return from_triplets("poisson2d_" + std::to_string(g), g * g, g * g, e);
}

// Matrix Market coordinate files (plain or gzip): real, integer or pattern; general or symmetric.
bool read_mtx(const std::string& path, const std::string& name, Csr& out) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return false;
  char line[4096];
  if (!gzgets(f, line, sizeof line)) return gzclose(f), false;
  const std::string header(line);
  const bool symmetric = header.find("symmetric") != std::string::npos;
  const bool pattern = header.find("pattern") != std::string::npos;
  if (header.find("coordinate") == std::string::npos || header.find("complex") != std::string::npos)
    return gzclose(f), false;
  do {
    if (!gzgets(f, line, sizeof line)) return gzclose(f), false;
  } while (line[0] == '%');
  long long rows = 0, cols = 0, nnz = 0;
  std::sscanf(line, "%lld %lld %lld", &rows, &cols, &nnz);
  std::vector<std::pair<int64_t, int64_t>> e;
  e.reserve(size_t(symmetric ? 2 * nnz : nnz));
  for (long long k = 0; k < nnz && gzgets(f, line, sizeof line); ++k) {
    long long i = 0, j = 0;
    std::sscanf(line, "%lld %lld", &i, &j);
    e.push_back({i - 1, j - 1});
    if (symmetric && i != j) e.push_back({j - 1, i - 1});
  }
  gzclose(f);
  (void)pattern;  // values are generated: patterns and real files are timed alike
  out = from_triplets(name, rows, cols, e);
  return true;
}

struct DeviceCsr {
  int32_t *offsets = nullptr, *columns = nullptr;
  float* values = nullptr;
  explicit DeviceCsr(const Csr& a) {
    CHECK_CUDA(cudaMalloc(&offsets, a.offsets.size() * 4));
    CHECK_CUDA(cudaMalloc(&columns, a.columns.size() * 4 + 4));
    CHECK_CUDA(cudaMalloc(&values, a.values.size() * 4 + 4));
    CHECK_CUDA(cudaMemcpy(offsets, a.offsets.data(), a.offsets.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(columns, a.columns.data(), a.columns.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(values, a.values.data(), a.values.size() * 4, cudaMemcpyHostToDevice));
  }
  ~DeviceCsr() {
    cudaFree(offsets);
    cudaFree(columns);
    cudaFree(values);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// SpMM in steady state: descriptors and buffer made once, as an iterative solver or a GNN layer
// does; each repetition timed with CUDA events on the handle's stream.
void bench_spmm(cusparseHandle_t handle, cudaStream_t stream, const Csr& a, const DeviceCsr& d, int64_t n) {
  cusparseSpMatDescr_t matA;
  cusparseDnMatDescr_t matB, matC;
  float *b = nullptr, *c = nullptr;
  CHECK_CUDA(cudaMalloc(&b, size_t(a.cols * n) * 4));
  CHECK_CUDA(cudaMalloc(&c, size_t(a.rows * n) * 4));
  CHECK_CUDA(cudaMemset(b, 0, size_t(a.cols * n) * 4));
  CHECK_CUSPARSE(cusparseCreateCsr(&matA, a.rows, a.cols, int64_t(a.columns.size()), d.offsets, d.columns, d.values,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateDnMat(&matB, a.cols, n, n, b, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  CHECK_CUSPARSE(cusparseCreateDnMat(&matC, a.rows, n, n, c, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  const float alpha = 1.0f, beta = 0.0f;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  size_t size = 0;
  void* buffer = nullptr;
  CHECK_CUSPARSE(cusparseSpMM_bufferSize(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F,
                                         CUSPARSE_SPMM_ALG_DEFAULT, &size));
  CHECK_CUDA(cudaMalloc(&buffer, size ? size : 1));
  CHECK_CUSPARSE(cusparseSpMM_preprocess(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F,
                                         CUSPARSE_SPMM_ALG_DEFAULT, buffer));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int rep = 0; rep < 23; ++rep) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUSPARSE(cusparseSpMM(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F,
                                CUSPARSE_SPMM_ALG_DEFAULT, buffer));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    if (rep >= 3) ms.push_back(t);  // 3 warm-up runs
  }
  std::printf("spmm %s %lld %zu %lld %.4f\n", a.name.c_str(), (long long)a.rows, a.columns.size(), (long long)n,
              median(ms));
  std::fflush(stdout);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cusparseDestroySpMat(matA);
  cusparseDestroyDnMat(matB);
  cusparseDestroyDnMat(matC);
  cudaFree(buffer);
  cudaFree(b);
  cudaFree(c);
}

// SpGEMM C = A A, the whole plain sequence per repetition (descriptors, buffers and C included),
// timed on the host around a synchronised run.
void bench_spgemm(cusparseHandle_t handle, cudaStream_t stream, const Csr& a, const DeviceCsr& d) {
  const float alpha = 1.0f, beta = 0.0f;
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const auto alg = CUSPARSE_SPGEMM_DEFAULT;
  std::vector<double> ms;
  int64_t nnz_c = 0;
  for (int rep = 0; rep < 7; ++rep) {
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const auto t0 = std::chrono::steady_clock::now();
    cusparseSpMatDescr_t matA, matC;
    int32_t* c_offsets = nullptr;
    CHECK_CUDA(cudaMalloc(&c_offsets, size_t(a.rows + 1) * 4));
    CHECK_CUSPARSE(cusparseCreateCsr(&matA, a.rows, a.cols, int64_t(a.columns.size()), d.offsets, d.columns, d.values,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CHECK_CUSPARSE(cusparseCreateCsr(&matC, a.rows, a.cols, 0, c_offsets, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    cusparseSpGEMMDescr_t descr;
    CHECK_CUSPARSE(cusparseSpGEMM_createDescr(&descr));
    size_t size1 = 0, size2 = 0;
    void *buffer1 = nullptr, *buffer2 = nullptr;
    CHECK_CUSPARSE(cusparseSpGEMM_workEstimation(handle, op, op, &alpha, matA, matA, &beta, matC, CUDA_R_32F, alg,
                                                 descr, &size1, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer1, size1));
    CHECK_CUSPARSE(cusparseSpGEMM_workEstimation(handle, op, op, &alpha, matA, matA, &beta, matC, CUDA_R_32F, alg,
                                                 descr, &size1, buffer1));
    CHECK_CUSPARSE(cusparseSpGEMM_compute(handle, op, op, &alpha, matA, matA, &beta, matC, CUDA_R_32F, alg, descr,
                                          &size2, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer2, size2));
    CHECK_CUSPARSE(cusparseSpGEMM_compute(handle, op, op, &alpha, matA, matA, &beta, matC, CUDA_R_32F, alg, descr,
                                          &size2, buffer2));
    int64_t rows, cols;
    CHECK_CUSPARSE(cusparseSpMatGetSize(matC, &rows, &cols, &nnz_c));
    int32_t* c_columns = nullptr;
    float* c_values = nullptr;
    CHECK_CUDA(cudaMalloc(&c_columns, size_t(nnz_c) * 4 + 4));
    CHECK_CUDA(cudaMalloc(&c_values, size_t(nnz_c) * 4 + 4));
    CHECK_CUSPARSE(cusparseCsrSetPointers(matC, c_offsets, c_columns, c_values));
    CHECK_CUSPARSE(cusparseSpGEMM_copy(handle, op, op, &alpha, matA, matA, &beta, matC, CUDA_R_32F, alg, descr));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const auto t1 = std::chrono::steady_clock::now();
    if (rep >= 2) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());  // 2 warm-up runs
    cusparseSpGEMM_destroyDescr(descr);
    cusparseDestroySpMat(matA);
    cusparseDestroySpMat(matC);
    for (void* p : {static_cast<void*>(c_offsets), static_cast<void*>(c_columns), static_cast<void*>(c_values),
                    buffer1, buffer2})
      cudaFree(p);
  }
  std::printf("spgemm %s %lld %zu %lld %.4f\n", a.name.c_str(), (long long)a.rows, a.columns.size(),
              (long long)nnz_c, median(ms));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  const std::string dir = argc > 1 ? argv[1] : SPARSETC_MATRIX_DIR;
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) names.push_back(argv[i]);
  if (names.empty()) names = {"cage11", "bcsstk17", "bcsstk33", "delaunay_n16", "ca-AstroPh", "Dubcova1", "memplus"};
  std::vector<Csr> matrices = {band(200000, 4), poisson2d(512)};
  for (const std::string& name : names) {
    Csr a;
    if (read_mtx(dir + "/" + name + ".mtx.gz", name, a) || read_mtx(dir + "/" + name + ".mtx", name, a))
      matrices.push_back(std::move(a));
    else
      std::fprintf(stderr, "skipping %s: no readable %s/%s.mtx[.gz]\n", name.c_str(), dir.c_str(), name.c_str());
  }
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cusparseHandle_t handle;
  CHECK_CUSPARSE(cusparseCreate(&handle));
  CHECK_CUSPARSE(cusparseSetStream(handle, stream));
  for (const Csr& a : matrices) {
    const DeviceCsr d(a);
    for (int64_t n : {32, 128}) bench_spmm(handle, stream, a, d, n);
    if (a.rows == a.cols) bench_spgemm(handle, stream, a, d);
  }
  cusparseDestroy(handle);
  cudaStreamDestroy(stream);
  return 0;
}

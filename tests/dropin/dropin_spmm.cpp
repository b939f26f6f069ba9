// SpMM written against plain cuSPARSE (the CUDA samples' sequence): C = alpha A B + beta C with a
// random CSR A (empty rows, uneven lengths), B and C column-major. Three calls: beta = 0 on a C
// poisoned with NaN, then beta = 0.5, then again after A's values were changed in place. Each
// result is checked against a float64 reference; the last one is written to the result file.
// Options: device-scalars (alpha and beta in device memory); layouts (A in COO, op(B) = B^T of a
// stored n x k matrix, C row-major); notify (cusparseSpMatSetValues after the in-place change, which
// SPARSETC_CUSPARSE_VALUES=stable needs).
//   dropin_spmm <f32|f16> <n> [device-scalars] [layouts] [notify] <seed> <result file>
//   dropin_spmm --compare <a> <b> <rtol>
// Built as is against cuSPARSE, and through the rename to sparsetc_cusparse (tests/dropin).
#include <cuda_fp16.h>
#include <cusparse.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dropin_common.hpp"

#define CHECK_CUSPARSE(call)                                                                             \
  do {                                                                                                   \
    const cusparseStatus_t s_ = (call);                                                                  \
    if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cusparseGetErrorString(s_));    \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

namespace {

// Host values in the device type (f32, or f16 rounded) and back.
struct Values {
  bool half;
  std::vector<float> f32;
  std::vector<__half> f16;
  Values(bool h, const std::vector<double>& v) : half(h) {
    for (double x : v) half ? f16.push_back(__float2half(float(x))) : f32.push_back(float(x));
  }
  const void* data() const { return half ? static_cast<const void*>(f16.data()) : f32.data(); }
  size_t bytes() const { return half ? f16.size() * 2 : f32.size() * 4; }
  std::vector<double> rounded() const {
    std::vector<double> out;
    if (half) for (__half x : f16) out.push_back(double(__half2float(x)));
    else for (float x : f32) out.push_back(double(x));
    return out;
  }
};

std::vector<double> download(const void* device, size_t count, bool half) {
  std::vector<double> out(count);
  if (half) {
    std::vector<__half> h(count);
    CHECK_CUDA(cudaMemcpy(h.data(), device, count * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) out[i] = double(__half2float(h[i]));
  } else {
    std::vector<float> f(count);
    CHECK_CUDA(cudaMemcpy(f.data(), device, count * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; ++i) out[i] = double(f[i]);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--compare") == 0) return dropin::compare_files(argc, argv);
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s <f32|f16> <n> [device-scalars] <seed> <result file>\n", argv[0]);
    return 2;
  }
  dropin::exit_if_no_gpu();
  const bool half = std::strcmp(argv[1], "f16") == 0;
  const int64_t n = std::atoll(argv[2]);
  auto option = [&](const char* name) {
    for (int i = 3; i < argc - 2; ++i)
      if (std::strcmp(argv[i], name) == 0) return true;
    return false;
  };
  const bool device_scalars = option("device-scalars");
  const bool layouts = option("layouts");
  const bool notify = option("notify");
  const uint64_t seed = std::strtoull(argv[argc - 2], nullptr, 10);
  const std::string result_file = argv[argc - 1];
  const double rtol = half ? 2e-2 : 1e-4;

  std::mt19937_64 rng(seed);
  const int64_t m = 1237, k = 913;
  dropin::Csr a = dropin::random_csr(m, k, 9, rng);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> b(size_t(k * n));
  for (double& x : b) x = uniform(rng);
  std::vector<double> b_stored = b;  // B (k x n, column-major), or with layouts B^T (n x k, column-major)
  if (layouts)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) b_stored[size_t(j + kk * n)] = b[size_t(kk + j * k)];
  const Values a_values(half, a.values), b_values(half, b_stored);
  a.values = a_values.rounded();  // the reference multiplies what the device holds
  for (double& x : b) x = half ? double(__half2float(__float2half(float(x)))) : double(float(x));
  const cudaDataType type = half ? CUDA_R_16F : CUDA_R_32F;

  int32_t *d_offsets = nullptr, *d_columns = nullptr;
  void *d_values = nullptr, *d_b = nullptr, *d_c = nullptr;
  CHECK_CUDA(cudaMalloc(&d_offsets, a.offsets.size() * 4));
  CHECK_CUDA(cudaMalloc(&d_columns, a.columns.size() * 4 + 4));
  CHECK_CUDA(cudaMalloc(&d_values, a_values.bytes() + 4));
  CHECK_CUDA(cudaMalloc(&d_b, b_values.bytes()));
  CHECK_CUDA(cudaMalloc(&d_c, size_t(m * n) * (half ? 2 : 4)));
  CHECK_CUDA(cudaMemcpy(d_offsets, a.offsets.data(), a.offsets.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_columns, a.columns.data(), a.columns.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_values, a_values.data(), a_values.bytes(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_b, b_values.data(), b_values.bytes(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());  // pageable copies may still be landing; the stream does not wait
  CHECK_CUDA(cudaMemset(d_c, 0xFF, size_t(m * n) * (half ? 2 : 4)));  // NaN everywhere: beta = 0 must not read C

  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t matA = nullptr;
  cusparseDnMatDescr_t matB = nullptr, matC = nullptr;
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUSPARSE(cusparseCreate(&handle));
  CHECK_CUSPARSE(cusparseSetStream(handle, stream));
  int32_t* d_rows = nullptr;
  if (layouts) {
    std::vector<int32_t> rows;
    for (int64_t i = 0; i < m; ++i) rows.insert(rows.end(), size_t(a.offsets[i + 1] - a.offsets[i]), int32_t(i));
    CHECK_CUDA(cudaMalloc(&d_rows, rows.size() * 4 + 4));
    CHECK_CUDA(cudaMemcpy(d_rows, rows.data(), rows.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUSPARSE(cusparseCreateCoo(&matA, m, k, a.nnz(), d_rows, d_columns, d_values, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, type));
    CHECK_CUSPARSE(cusparseCreateDnMat(&matB, n, k, n, d_b, type, CUSPARSE_ORDER_COL));
    CHECK_CUSPARSE(cusparseCreateDnMat(&matC, m, n, n, d_c, type, CUSPARSE_ORDER_ROW));
  } else {
    CHECK_CUSPARSE(cusparseCreateCsr(&matA, m, k, a.nnz(), d_offsets, d_columns, d_values, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
    CHECK_CUSPARSE(cusparseCreateDnMat(&matB, k, n, k, d_b, type, CUSPARSE_ORDER_COL));
    CHECK_CUSPARSE(cusparseCreateDnMat(&matC, m, n, m, d_c, type, CUSPARSE_ORDER_COL));
  }
  const cusparseOperation_t opB = layouts ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;

  float scalars[2] = {0, 0};
  float* d_scalars = nullptr;
  if (device_scalars) {
    CHECK_CUSPARSE(cusparseSetPointerMode(handle, CUSPARSE_POINTER_MODE_DEVICE));
    CHECK_CUDA(cudaMalloc(&d_scalars, sizeof scalars));
  }
  auto multiply = [&](float alpha, float beta) {
    scalars[0] = alpha;
    scalars[1] = beta;
    const void* alpha_ptr = &scalars[0];
    const void* beta_ptr = &scalars[1];
    if (device_scalars) {
      // On `stream` (non-blocking): a plain cudaMemcpy from pageable memory may still be in flight
      // when work on another stream reads the scalars.
      CHECK_CUDA(cudaMemcpyAsync(d_scalars, scalars, sizeof scalars, cudaMemcpyHostToDevice, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      alpha_ptr = d_scalars;
      beta_ptr = d_scalars + 1;
    }
    size_t buffer_size = 0;
    void* buffer = nullptr;
    CHECK_CUSPARSE(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, opB,
                                           alpha_ptr, matA, matB, beta_ptr, matC, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                           &buffer_size));
    CHECK_CUDA(cudaMalloc(&buffer, buffer_size ? buffer_size : 1));
    CHECK_CUSPARSE(cusparseSpMM_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, opB,
                                           alpha_ptr, matA, matB, beta_ptr, matC, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                           buffer));
    CHECK_CUSPARSE(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, opB, alpha_ptr,
                                matA, matB, beta_ptr, matC, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaFree(buffer));
    std::vector<double> c = download(d_c, size_t(m * n), half);
    if (!layouts) return c;
    std::vector<double> column_major(c.size());  // the references are column-major
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) column_major[size_t(i + j * m)] = c[size_t(i * n + j)];
    return column_major;
  };

  bool ok = true;
  // 1. C = 1.5 A B over a NaN-poisoned C.
  std::vector<double> want = dropin::reference_spmm(a, b, n);
  for (double& x : want) x *= 1.5;
  std::vector<double> got = multiply(1.5f, 0.0f);
  ok = dropin::close(got, want, rtol, "C = 1.5 A B") && ok;
  // 2. C = A B + 0.5 C (C as the device holds it).
  std::vector<double> previous = got;
  want = dropin::reference_spmm(a, b, n);
  for (size_t i = 0; i < want.size(); ++i) want[i] += 0.5 * previous[i];
  got = multiply(1.0f, 0.5f);
  ok = dropin::close(got, want, rtol, "C = A B + 0.5 C") && ok;
  // 3. A's values changed in place (same pointers): cuSPARSE reads them at every call.
  for (double& v : a.values) v = -2.0 * v;
  const Values doubled(half, a.values);
  a.values = doubled.rounded();
  CHECK_CUDA(cudaMemcpyAsync(d_values, doubled.data(), doubled.bytes(), cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  if (notify) CHECK_CUSPARSE(cusparseSpMatSetValues(matA, d_values));
  want = dropin::reference_spmm(a, b, n);
  got = multiply(1.0f, 0.0f);
  ok = dropin::close(got, want, rtol, "C = A' B after new values in place") && ok;
  dropin::write_numbers(result_file, got);

  CHECK_CUSPARSE(cusparseDestroySpMat(matA));
  CHECK_CUSPARSE(cusparseDestroyDnMat(matB));
  CHECK_CUSPARSE(cusparseDestroyDnMat(matC));
  CHECK_CUSPARSE(cusparseDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  cudaFree(d_offsets);
  cudaFree(d_rows);
  cudaFree(d_columns);
  cudaFree(d_values);
  cudaFree(d_b);
  cudaFree(d_c);
  cudaFree(d_scalars);
  std::printf("SpMM %s%s, %lldx%lld nnz %lld, N %lld: %s\n", half ? "f16" : "f32",
              layouts ? " (COO, op(B) = B^T, C row-major)" : "", (long long)m, (long long)k, (long long)a.nnz(),
              (long long)n, ok ? "correct" : "WRONG");
  return ok ? 0 : 1;
}

// SpGEMM written against plain cuSPARSE (the CUDA samples' sequences): C = alpha A B with random
// CSR A and B (empty rows, uneven lengths), f32.
//   plain: workEstimation x2, compute x2, SpMatGetSize, CsrSetPointers, copy.
//   reuse: reuse_workEstimation x2, reuse_nnz x2, SpMatGetSize, CsrSetPointers, reuse_copy x2,
//          reuse_compute; then A's values changed in place and reuse_compute again.
// Every product is checked against a float64 reference (pattern exactly, values to 1e-4); the
// last one is written to the result file.
//   dropin_spgemm <plain|reuse> <seed> <result file>
//   dropin_spgemm --compare <a> <b> <rtol>
#include <cusparse.h>

#include <cstring>
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

struct DeviceCsr {
  int32_t* offsets = nullptr;
  int32_t* columns = nullptr;
  float* values = nullptr;
  explicit DeviceCsr(const dropin::Csr& a) {
    std::vector<float> v(a.values.begin(), a.values.end());
    CHECK_CUDA(cudaMalloc(&offsets, a.offsets.size() * 4));
    CHECK_CUDA(cudaMalloc(&columns, a.columns.size() * 4 + 4));
    CHECK_CUDA(cudaMalloc(&values, v.size() * 4 + 4));
    CHECK_CUDA(cudaMemcpy(offsets, a.offsets.data(), a.offsets.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(columns, a.columns.data(), a.columns.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(values, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
    // A cudaMemcpy from pageable memory may return before the copy lands; the products run on a
    // non-blocking stream, which does not wait for it.
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  ~DeviceCsr() {
    cudaFree(offsets);
    cudaFree(columns);
    cudaFree(values);
  }
};

// The device's C, rows sorted by column (the comparison does not depend on the order within rows).
dropin::Csr download(int64_t rows, int64_t cols, int64_t nnz, const int32_t* offsets, const int32_t* columns,
                     const float* values) {
  dropin::Csr c;
  c.rows = rows;
  c.cols = cols;
  c.offsets.resize(size_t(rows) + 1);
  c.columns.resize(size_t(nnz));
  std::vector<float> v(static_cast<size_t>(nnz));
  CHECK_CUDA(cudaMemcpy(c.offsets.data(), offsets, c.offsets.size() * 4, cudaMemcpyDeviceToHost));
  if (nnz > 0) {
    CHECK_CUDA(cudaMemcpy(c.columns.data(), columns, size_t(nnz) * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(v.data(), values, size_t(nnz) * 4, cudaMemcpyDeviceToHost));
  }
  c.values.assign(v.begin(), v.end());
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<std::pair<int32_t, double>> row;
    for (int32_t p = c.offsets[i]; p < c.offsets[i + 1]; ++p) row.push_back({c.columns[p], c.values[p]});
    std::sort(row.begin(), row.end());
    for (size_t j = 0; j < row.size(); ++j) {
      c.columns[c.offsets[i] + j] = row[j].first;
      c.values[c.offsets[i] + j] = row[j].second;
    }
  }
  return c;
}

bool same_product(const dropin::Csr& got, const dropin::Csr& want, const char* what) {
  if (got.offsets != want.offsets || got.columns != want.columns) {
    std::fprintf(stderr, "%s: the pattern differs (nnz %lld, expected %lld)\n", what, (long long)got.nnz(),
                 (long long)want.nnz());
    return false;
  }
  return dropin::close(got.values, want.values, 1e-4, what);
}

std::vector<double> as_numbers(const dropin::Csr& c) {
  std::vector<double> out(c.offsets.begin(), c.offsets.end());
  out.insert(out.end(), c.columns.begin(), c.columns.end());
  out.insert(out.end(), c.values.begin(), c.values.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--compare") == 0) return dropin::compare_files(argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <plain|reuse> <seed> <result file>\n", argv[0]);
    return 2;
  }
  dropin::exit_if_no_gpu();
  const bool reuse = std::strcmp(argv[1], "reuse") == 0;
  std::mt19937_64 rng(std::strtoull(argv[2], nullptr, 10));
  const int64_t m = 1531, k = 1201, n = 977;
  dropin::Csr a = dropin::random_csr(m, k, 7, rng);
  dropin::Csr b = dropin::random_csr(k, n, 5, rng);
  for (double& v : a.values) v = double(float(v));
  for (double& v : b.values) v = double(float(v));
  const float alpha = 1.5f, beta = 0.0f;
  const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;

  DeviceCsr dA(a), dB(b);
  int32_t* c_offsets = nullptr;
  CHECK_CUDA(cudaMalloc(&c_offsets, size_t(m + 1) * 4));
  cusparseHandle_t handle = nullptr;
  cusparseSpMatDescr_t matA, matB, matC;
  CHECK_CUSPARSE(cusparseCreate(&handle));
  CHECK_CUSPARSE(cusparseCreateCsr(&matA, m, k, a.nnz(), dA.offsets, dA.columns, dA.values, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateCsr(&matB, k, n, b.nnz(), dB.offsets, dB.columns, dB.values, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK_CUSPARSE(cusparseCreateCsr(&matC, m, n, 0, c_offsets, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  cusparseSpGEMMDescr_t descr;
  CHECK_CUSPARSE(cusparseSpGEMM_createDescr(&descr));

  void *buffer1 = nullptr, *buffer2 = nullptr, *buffer3 = nullptr, *buffer4 = nullptr, *buffer5 = nullptr;
  size_t size1 = 0, size2 = 0, size3 = 0, size4 = 0, size5 = 0;
  int32_t* c_columns = nullptr;
  float* c_values = nullptr;
  int64_t c_rows = 0, c_cols = 0, c_nnz = 0;
  auto allocate_c = [&] {
    CHECK_CUSPARSE(cusparseSpMatGetSize(matC, &c_rows, &c_cols, &c_nnz));
    CHECK_CUDA(cudaMalloc(&c_columns, size_t(c_nnz) * 4 + 4));
    CHECK_CUDA(cudaMalloc(&c_values, size_t(c_nnz) * 4 + 4));
    CHECK_CUDA(cudaMemset(c_values, 0xFF, size_t(c_nnz) * 4 + 4));  // NaN: every value must be written
    CHECK_CUSPARSE(cusparseCsrSetPointers(matC, c_offsets, c_columns, c_values));
  };

  bool ok = true;
  dropin::Csr got;
  if (!reuse) {
    CHECK_CUSPARSE(cusparseSpGEMM_workEstimation(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg,
                                                 descr, &size1, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer1, size1));
    CHECK_CUSPARSE(cusparseSpGEMM_workEstimation(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg,
                                                 descr, &size1, buffer1));
    CHECK_CUSPARSE(cusparseSpGEMM_compute(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg, descr,
                                          &size2, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer2, size2));
    CHECK_CUSPARSE(cusparseSpGEMM_compute(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg, descr,
                                          &size2, buffer2));
    allocate_c();
    CHECK_CUSPARSE(cusparseSpGEMM_copy(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg, descr));
    got = download(m, n, c_nnz, c_offsets, c_columns, c_values);
    ok = same_product(got, dropin::reference_spgemm(a, b, alpha), "C = 1.5 A B") && ok;
  } else {
    CHECK_CUSPARSE(cusparseSpGEMMreuse_workEstimation(handle, op, op, matA, matB, matC, alg, descr, &size1, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer1, size1));
    CHECK_CUSPARSE(cusparseSpGEMMreuse_workEstimation(handle, op, op, matA, matB, matC, alg, descr, &size1, buffer1));
    CHECK_CUSPARSE(cusparseSpGEMMreuse_nnz(handle, op, op, matA, matB, matC, alg, descr, &size2, nullptr, &size3,
                                           nullptr, &size4, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer2, size2));
    CHECK_CUDA(cudaMalloc(&buffer3, size3));
    CHECK_CUDA(cudaMalloc(&buffer4, size4));
    CHECK_CUSPARSE(cusparseSpGEMMreuse_nnz(handle, op, op, matA, matB, matC, alg, descr, &size2, buffer2, &size3,
                                           buffer3, &size4, buffer4));
    CHECK_CUDA(cudaFree(buffer1));  // as the sample: buffers 1 and 2 are released after reuse_nnz
    CHECK_CUDA(cudaFree(buffer2));
    buffer1 = buffer2 = nullptr;
    allocate_c();
    CHECK_CUSPARSE(cusparseSpGEMMreuse_copy(handle, op, op, matA, matB, matC, alg, descr, &size5, nullptr));
    CHECK_CUDA(cudaMalloc(&buffer5, size5));
    CHECK_CUSPARSE(cusparseSpGEMMreuse_copy(handle, op, op, matA, matB, matC, alg, descr, &size5, buffer5));
    CHECK_CUDA(cudaFree(buffer3));
    buffer3 = nullptr;
    CHECK_CUSPARSE(cusparseSpGEMMreuse_compute(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg,
                                               descr));
    got = download(m, n, c_nnz, c_offsets, c_columns, c_values);
    ok = same_product(got, dropin::reference_spgemm(a, b, alpha), "C = 1.5 A B (reuse)") && ok;
    // New values of A in place, same pattern: reuse_compute must see them.
    for (double& v : a.values) v = double(float(-0.75 * v));
    std::vector<float> fresh(a.values.begin(), a.values.end());
    CHECK_CUDA(cudaMemcpy(dA.values, fresh.data(), fresh.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());  // landed before the non-blocking stream reads it
    CHECK_CUSPARSE(cusparseSpGEMMreuse_compute(handle, op, op, &alpha, matA, matB, &beta, matC, CUDA_R_32F, alg,
                                               descr));
    got = download(m, n, c_nnz, c_offsets, c_columns, c_values);
    ok = same_product(got, dropin::reference_spgemm(a, b, alpha), "C = 1.5 A' B after new values") && ok;
  }
  dropin::write_numbers(argv[3], as_numbers(got));

  CHECK_CUSPARSE(cusparseSpGEMM_destroyDescr(descr));
  CHECK_CUSPARSE(cusparseDestroySpMat(matA));
  CHECK_CUSPARSE(cusparseDestroySpMat(matB));
  CHECK_CUSPARSE(cusparseDestroySpMat(matC));
  CHECK_CUSPARSE(cusparseDestroy(handle));
  for (void* p : {buffer1, buffer2, buffer3, buffer4, buffer5}) cudaFree(p);
  cudaFree(c_offsets);
  cudaFree(c_columns);
  cudaFree(c_values);
  std::printf("SpGEMM %s, A %lldx%lld nnz %lld, B nnz %lld, C nnz %lld: %s\n", reuse ? "reuse" : "plain",
              (long long)m, (long long)k, (long long)a.nnz(), (long long)b.nnz(), (long long)c_nnz,
              ok ? "correct" : "WRONG");
  return ok ? 0 : 1;
}

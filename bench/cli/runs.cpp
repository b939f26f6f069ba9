#include "cli/runs.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

namespace sparsetc_cli {
namespace {

void cuda_check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "error: %s failed: %s\n", call, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CLI_CUDA(call) cuda_check((call), #call)

sparsetc_value_type_t value_type(const Options& o) {
  return o.precision == "f32" ? SPARSETC_VALUE_F32 : SPARSETC_VALUE_F64;
}

bool on_gpu(sparsetc_handle_t handle) {
  sparsetc_backend_t backend = SPARSETC_BACKEND_CPU;
  CLI_CHECK(handle, sparsetc_get_backend(handle, &backend));
  return backend == SPARSETC_BACKEND_GPU;
}

// Median wall time of `body` in milliseconds: CUDA events on the GPU, a steady clock on the CPU.
double median_ms(bool gpu, const Options& o, const std::function<void()>& body) {
  for (int i = 0; i < o.warmup; ++i) body();
  std::vector<double> times;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (gpu) {
    CLI_CUDA(cudaEventCreate(&start));
    CLI_CUDA(cudaEventCreate(&stop));
    CLI_CUDA(cudaDeviceSynchronize());
  }
  for (int i = 0; i < o.iterations; ++i) {
    if (gpu) {
      CLI_CUDA(cudaEventRecord(start));
      body();
      CLI_CUDA(cudaEventRecord(stop));
      CLI_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      CLI_CUDA(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms);
    } else {
      auto t0 = std::chrono::steady_clock::now();
      body();
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  if (gpu) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Dense {
  std::vector<double> f64;
  std::vector<float> f32;
  void* data(bool f32_mode) { return f32_mode ? static_cast<void*>(f32.data()) : f64.data(); }
  size_t bytes(bool f32_mode) const { return f32_mode ? f32.size() * 4 : f64.size() * 8; }
};

Dense random_dense(size_t count, uint64_t seed) {
  Dense d;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  d.f64.resize(count);
  for (auto& v : d.f64) v = u(rng);
  d.f32.assign(d.f64.begin(), d.f64.end());
  return d;
}

sparsetc_matrix_info_t info_of(sparsetc_matrix_t m) {
  sparsetc_matrix_info_t info{};
  info.struct_size = sizeof info;
  CLI_CHECK(nullptr, sparsetc_matrix_get_info(m, &info));
  return info;
}

// Entries of a host CSR matrix as (int64 offsets, int64 indices, double values).
struct HostCsr {
  std::vector<int64_t> row_ptr, col;
  std::vector<double> val;
};
HostCsr to_host_csr(sparsetc_handle_t h, sparsetc_matrix_t m) {
  sparsetc_matrix_t host = nullptr, csr = nullptr;
  CLI_CHECK(h, sparsetc_matrix_copy_to(h, m, SPARSETC_MEMORY_HOST, &host));
  CLI_CHECK(h, sparsetc_matrix_convert(h, host, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_64, SPARSETC_INDEX_64,
                                       SPARSETC_BASE_ZERO, SPARSETC_VALUE_F64, &csr));
  sparsetc_matrix_info_t info = info_of(csr);
  void *p = nullptr, *c = nullptr, *v = nullptr;
  CLI_CHECK(h, sparsetc_matrix_get_arrays(csr, &p, &c, &v));
  HostCsr out;
  out.row_ptr.assign(static_cast<int64_t*>(p), static_cast<int64_t*>(p) + info.rows + 1);
  out.col.assign(static_cast<int64_t*>(c), static_cast<int64_t*>(c) + info.nnz);
  out.val.assign(static_cast<double*>(v), static_cast<double*>(v) + info.nnz);
  sparsetc_matrix_destroy(csr);
  sparsetc_matrix_destroy(host);
  return out;
}

// A copy of a host matrix where the handle computes: on the GPU, CSR with 32-bit indices
// (what every device path accepts) in device memory.
sparsetc_matrix_t place(sparsetc_handle_t h, sparsetc_matrix_t host, sparsetc_value_type_t type) {
  sparsetc_matrix_t converted = nullptr, placed = nullptr;
  CLI_CHECK(h, sparsetc_matrix_convert(h, host, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                       SPARSETC_BASE_ZERO, type, &converted));
  if (!on_gpu(h)) return converted;
  CLI_CHECK(h, sparsetc_matrix_copy_to(h, converted, SPARSETC_MEMORY_DEVICE, &placed));
  sparsetc_matrix_destroy(converted);
  return placed;
}

std::string alg_name(int alg, bool spgemm) {
  if (spgemm) {
    switch (alg) {
      case SPARSETC_SPGEMM_ALG_CPU: return "cpu-gustavson";
      case SPARSETC_SPGEMM_ALG_CUSPARSE: return "cusparse";
      case SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH: return "binned-merge-path";
      case SPARSETC_SPGEMM_ALG_TSPARSE_TC: return "tsparse-tc";
      default: return "other";
    }
  }
  switch (alg) {
    case SPARSETC_SPMM_ALG_CPU: return "cpu-csr";
    case SPARSETC_SPMM_ALG_CUSPARSE: return "cusparse";
    case SPARSETC_SPMM_ALG_BCSR_TC: return "bcsr-tc";
    case SPARSETC_SPMM_ALG_CSR: return "csr";
    case SPARSETC_SPMM_ALG_DCSR: return "dcsr";
    case SPARSETC_SPMM_ALG_TILED_DCSR: return "tiled-dcsr";
    default: return "other";
  }
}

}  // namespace

void check(sparsetc_status_t status, sparsetc_handle_t handle, const char* call) {
  if (status == SPARSETC_STATUS_SUCCESS) return;
  char message[1024];
  sparsetc_get_last_error(handle, message, sizeof message);
  std::fprintf(stderr, "error: %s returned %s: %s\n", call, sparsetc_get_status_name(status), message);
  std::exit(1);
}

Row run_spmm(sparsetc_handle_t handle, sparsetc_handle_t reference, sparsetc_matrix_t A, const Options& o) {
  const bool gpu = on_gpu(handle), f32 = o.precision == "f32";
  const sparsetc_matrix_info_t info = info_of(A);
  const int64_t m = info.rows, k = info.cols, n = o.n;
  Dense B = random_dense(size_t(k * n), o.seed + 1), C = random_dense(size_t(m * n), o.seed + 2);
  const double alpha = 1.0, beta = 0.0;

  // The float64 oracle on the CPU.
  std::vector<double> C_ref(size_t(m * n), 0.0);
  sparsetc_dense_t rb = nullptr, rc = nullptr;
  CLI_CHECK(reference, sparsetc_dense_create(reference, &rb, k, n, n, B.f64.data(), SPARSETC_VALUE_F64,
                                             SPARSETC_ORDER_ROW, SPARSETC_MEMORY_HOST));
  CLI_CHECK(reference, sparsetc_dense_create(reference, &rc, m, n, n, C_ref.data(), SPARSETC_VALUE_F64,
                                             SPARSETC_ORDER_ROW, SPARSETC_MEMORY_HOST));
  CLI_CHECK(reference, sparsetc_spmm(reference, SPARSETC_OP_NON_TRANSPOSE, alpha, A, rb, beta, rc,
                                     SPARSETC_COMPUTE_64F, SPARSETC_SPMM_ALG_CPU));

  sparsetc_matrix_t a = place(handle, A, value_type(o));
  void *b_data = B.data(f32), *c_data = C.data(f32);
  if (gpu) {
    CLI_CUDA(cudaMalloc(&b_data, B.bytes(f32)));
    CLI_CUDA(cudaMalloc(&c_data, C.bytes(f32)));
    CLI_CUDA(cudaMemcpy(b_data, B.data(f32), B.bytes(f32), cudaMemcpyHostToDevice));
  }
  const sparsetc_memory_t mem = gpu ? SPARSETC_MEMORY_DEVICE : SPARSETC_MEMORY_HOST;
  sparsetc_dense_t db = nullptr, dc = nullptr;
  CLI_CHECK(handle, sparsetc_dense_create(handle, &db, k, n, n, b_data, value_type(o), SPARSETC_ORDER_ROW, mem));
  CLI_CHECK(handle, sparsetc_dense_create(handle, &dc, m, n, n, c_data, value_type(o), SPARSETC_ORDER_ROW, mem));
  sparsetc_spmm_plan_t plan = nullptr;
  CLI_CHECK(handle, sparsetc_spmm_plan_create(handle, &plan, SPARSETC_OP_NON_TRANSPOSE, a, db, dc,
                                              SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPMM_ALG_AUTO));
  Row row{"spmm", gpu ? "gpu" : "cpu", "", m, k, info.nnz, n};
  sparsetc_spmm_alg_t alg = 0;
  CLI_CHECK(handle, sparsetc_spmm_plan_get_alg(plan, &alg, nullptr, 0));
  row.alg = alg_name(alg, false);
  row.median_ms = median_ms(gpu, o, [&] {
    CLI_CHECK(handle, sparsetc_spmm_execute(plan, alpha, db, beta, dc, nullptr, 0));
  });
  if (gpu) CLI_CUDA(cudaMemcpy(C.data(f32), c_data, C.bytes(f32), cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < C_ref.size(); ++i) {
    const double got = f32 ? double(C.f32[i]) : C.f64[i];
    num += (got - C_ref[i]) * (got - C_ref[i]);
    den += C_ref[i] * C_ref[i];
  }
  row.error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  row.verified = std::isfinite(row.error) && row.error < (f32 ? 1e-5 : 1e-12);
  row.gflops = 2.0 * double(info.nnz) * double(n) / (row.median_ms * 1e6);

  sparsetc_spmm_plan_destroy(plan);
  sparsetc_dense_destroy(db);
  sparsetc_dense_destroy(dc);
  sparsetc_dense_destroy(rb);
  sparsetc_dense_destroy(rc);
  sparsetc_matrix_destroy(a);
  if (gpu) {
    cudaFree(b_data);
    cudaFree(c_data);
  }
  return row;
}

Row run_spgemm(sparsetc_handle_t handle, sparsetc_handle_t reference, sparsetc_matrix_t A, sparsetc_matrix_t B,
               const Options& o) {
  const bool gpu = on_gpu(handle), f32 = o.precision == "f32";
  sparsetc_matrix_t ref = nullptr;
  CLI_CHECK(reference, sparsetc_spgemm(reference, SPARSETC_OP_NON_TRANSPOSE, A, SPARSETC_OP_NON_TRANSPOSE, B,
                                       SPARSETC_COMPUTE_64F, SPARSETC_SPGEMM_ALG_CPU, &ref));
  HostCsr want = to_host_csr(reference, ref);
  sparsetc_matrix_destroy(ref);

  sparsetc_matrix_t a = place(handle, A, value_type(o));
  sparsetc_matrix_t b = A == B ? a : place(handle, B, value_type(o));
  sparsetc_analysis_t analysis{};
  analysis.struct_size = sizeof analysis;
  CLI_CHECK(reference, sparsetc_analyze(reference, A, B, &analysis));

  sparsetc_matrix_t C = nullptr;
  std::string alg;
  // Timed as a user calls it: plan, symbolic, numeric, all allocations included.
  double ms = median_ms(gpu, o, [&] {
    if (C) sparsetc_matrix_destroy(C);
    C = nullptr;
    sparsetc_spgemm_plan_t plan = nullptr;
    CLI_CHECK(handle, sparsetc_spgemm_plan_create(handle, &plan, SPARSETC_OP_NON_TRANSPOSE, a,
                                                  SPARSETC_OP_NON_TRANSPOSE, b, SPARSETC_COMPUTE_DEFAULT,
                                                  SPARSETC_SPGEMM_ALG_AUTO, nullptr));
    int64_t nnz = 0;
    CLI_CHECK(handle, sparsetc_spgemm_symbolic(plan, &nnz));
    CLI_CHECK(handle, sparsetc_spgemm_numeric(plan, &C));
    sparsetc_spgemm_alg_t chosen = 0;
    CLI_CHECK(handle, sparsetc_spgemm_plan_get_alg(plan, &chosen, nullptr, 0));
    alg = alg_name(chosen, true);
    sparsetc_spgemm_plan_destroy(plan);
  });
  HostCsr got = to_host_csr(handle, C);
  sparsetc_matrix_info_t info = info_of(a);
  Row row{"spgemm", gpu ? "gpu" : "cpu", alg, info.rows, info.cols, info.nnz, 0};
  row.median_ms = ms;
  row.gflops = 2.0 * double(analysis.products) / (ms * 1e6);
  double num = 0, den = 0;
  const bool same_pattern = got.row_ptr == want.row_ptr && got.col == want.col;
  if (same_pattern) {
    for (size_t i = 0; i < want.val.size(); ++i) {
      num += (got.val[i] - want.val[i]) * (got.val[i] - want.val[i]);
      den += want.val[i] * want.val[i];
    }
  }
  row.error = !same_pattern ? INFINITY : den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  row.verified = same_pattern && row.error < (f32 ? 1e-5 : 1e-12);
  sparsetc_matrix_destroy(C);
  if (b != a) sparsetc_matrix_destroy(b);
  sparsetc_matrix_destroy(a);
  return row;
}

}  // namespace sparsetc_cli

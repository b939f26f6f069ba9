// Timings of the VBR-cuBLAS SpMM (issue 6's target: >= 3x the best cuSPARSE variant at N = 2048 and
// 4096 on the 1-SA paper's scrambled block matrices), against cuSPARSE CSR ALG1/2/3 in fp32 and fp16
// (fp32 compute, row-major B and C) and our BCSR tensor-core path, same run, same inputs. Only with
// SPARSETC_BENCH=1 on a device:
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='VbrCublasBench.*'
// SPARSETC_BENCH_SPECS / SPARSETC_BENCH_NS override the matrices and column counts. Ours runs f16
// inputs with fp32 C, row-major; its schedule variants (waves, 32 and 128 MiB panels, the
// batched fallback) are timed on the plan's own blocking. TFLOP/s count the padded VBR area (2 area N);
// fill = nnz / area. Medians of 20 event-timed runs after 3 warm-ups.
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/spmm_plan.hpp"
#include "engine/spmm_vbr_cublas.hpp"
#include "gen/generators.hpp"
#include "test_cuda_core_spmm_support.hpp"

namespace {

using namespace cuda_core_test;

DeviceMatrix upload_f16(GpuHandle& g, const sd::CsrMatrix<double>& a) {
  const size_t nnz = a.col_idx.size();
  std::vector<uint16_t> values(std::max<size_t>(nnz, 1));
  for (size_t i = 0; i < nnz; ++i) values[i] = sd::double_to_half(a.values[i]);
  return upload_values(g, a, values.data(), sizeof(uint16_t), SPARSETC_VALUE_F16);
}

sparsetc_dense_s dense(int64_t rows, int64_t cols, void* values, sparsetc_value_type_t type) {
  sparsetc_dense_s d;
  d.rows = rows;
  d.cols = cols;
  d.ld = cols;
  d.values = values;
  d.value_type = type;
  d.order = SPARSETC_ORDER_ROW;
  d.memory = SPARSETC_MEMORY_DEVICE;
  return d;
}

#define CUSPARSE_OK(call) ASSERT_EQ((call), CUSPARSE_STATUS_SUCCESS) << #call

TEST(VbrCublasBench, VersusCusparseAndBcsr) {
  SKIP_WITHOUT_DEVICE();
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the VBR-cuBLAS SpMM";
  const std::vector<std::string> specs = sparsetc_test::env_list(
      "SPARSETC_BENCH_SPECS", {"blocks:8192:64:0.1:0.2", "blocks:8192:64:0.2:0.5", "blocks:8192:64:0.05:0.1"});
  std::vector<int64_t> ns;
  for (const std::string& s : sparsetc_test::env_list("SPARSETC_BENCH_NS", {"2048", "4096"})) ns.push_back(std::stoll(s));
  GpuHandle g;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, g.handle.device);
  cusparseHandle_t cusparse;
  CUSPARSE_OK(cusparseCreate(&cusparse));
  CUSPARSE_OK(cusparseSetStream(cusparse, g.stream));
  std::printf("\n%s: VBR-cuBLAS f16 (fp32 C) vs the best cuSPARSE CSR variant (ALG1/2/3 x fp32/fp16) and BCSR-TC f16\n",
              prop.name);
  std::printf("%-24s %5s %9s %-10s %9s %9s %9s %9s %9s %9s %7s %7s %8s %7s %6s %9s\n", "matrix", "N", "cusp ms",
              "variant", "ours ms", "waves ms", "32MiB ms", "128MiB ms", "batch ms", "bcsr ms", "x best", "x bcsr",
              "TFLOP/s", "fill", "dW/tau", "plan ms");
  for (const std::string& spec : specs) {
    const sd::CsrMatrix<double> a = sd::generate(spec, 42);
    const int64_t m = a.rows, k = a.cols, nnz = a.nnz();
    DeviceMatrix da = upload_f16(g, a);
    // cuSPARSE operands: int32 CSR, fp16 and fp32 values (the fp16 values widened)
    std::vector<int32_t> rp(a.row_ptr.begin(), a.row_ptr.end()), ci(a.col_idx.begin(), a.col_idx.end());
    std::vector<uint16_t> v16(static_cast<size_t>(nnz));
    std::vector<float> v32(static_cast<size_t>(nnz));
    for (int64_t i = 0; i < nnz; ++i) {
      v16[size_t(i)] = sd::double_to_half(a.values[size_t(i)]);
      v32[size_t(i)] = sd::half_to_float(v16[size_t(i)]);
    }
    sd::DeviceBuffer d_rp(rp.size() * 4, g.gpu()), d_ci(ci.size() * 4, g.gpu()), d_v16(v16.size() * 2, g.gpu()),
        d_v32(v32.size() * 4, g.gpu());
    sd::copy_host_to_device(d_rp.data(), rp.data(), rp.size() * 4, g.stream);
    sd::copy_host_to_device(d_ci.data(), ci.data(), ci.size() * 4, g.stream);
    sd::copy_host_to_device(d_v16.data(), v16.data(), v16.size() * 2, g.stream);
    sd::copy_host_to_device(d_v32.data(), v32.data(), v32.size() * 4, g.stream);
    cusparseSpMatDescr_t csr16, csr32;
    CUSPARSE_OK(cusparseCreateCsr(&csr16, m, k, nnz, d_rp.data(), d_ci.data(), d_v16.data(), CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_16F));
    CUSPARSE_OK(cusparseCreateCsr(&csr32, m, k, nnz, d_rp.data(), d_ci.data(), d_v32.data(), CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    for (int64_t n : ns) {
      std::mt19937_64 rng(static_cast<uint64_t>(n));
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<uint16_t> b16(static_cast<size_t>(k * n));
      std::vector<float> b32(static_cast<size_t>(k * n));
      for (size_t i = 0; i < b16.size(); ++i) {
        b16[i] = sd::double_to_half(u(rng));
        b32[i] = sd::half_to_float(b16[i]);
      }
      sd::DeviceBuffer dB16(b16.size() * 2, g.gpu()), dB32(b32.size() * 4, g.gpu()), dC(size_t(m * n) * 4, g.gpu()),
          dCref(size_t(m * n) * 4, g.gpu());
      sd::copy_host_to_device(dB16.data(), b16.data(), b16.size() * 2, g.stream);
      sd::copy_host_to_device(dB32.data(), b32.data(), b32.size() * 4, g.stream);
      const sparsetc_dense_s B = dense(k, n, dB16.data(), SPARSETC_VALUE_F16), C = dense(m, n, dC.data(), SPARSETC_VALUE_F32);
      sd::SpmmProblem problem;
      problem.A = da.matrix.get();
      problem.B = B;
      problem.C = C;
      problem.compute = SPARSETC_COMPUTE_32F;

      // ---- ours: the plan's choice, then schedule variants on the same blocking
      std::string reason;
      sd::VbrCublasInfo info;
      auto ours = sd::make_vbr_cublas_spmm(g.handle, problem, reason, sd::VbrCublasOptions{}, &info);
      std::printf("  plan: %s\n", reason.c_str());
      auto run = [&](sd::SpmmExecutor& e) { e.execute(1.0, B, 0.0, C, nullptr, 0); };
      const double t_ours = sparsetc_test::median_event_ms(g.stream, 3, 20, [&] { run(*ours); });
      std::vector<float> got(static_cast<size_t>(m * n));
      sd::copy_device_to_host(got.data(), dC.data(), got.size() * 4, g.stream);
      auto variant = [&](sd::VbrSchedule schedule, size_t chunk, bool grouped) {
        sd::VbrCublasOptions o;
        o.block_width = info.block_width;
        o.tau = info.tau > 0 ? info.tau : 0.5;
        o.try_identity = info.tau == 0;
        o.multiply.schedule = schedule;
        o.multiply.chunk_bytes = chunk;
        o.multiply.grouped_api = grouped;
        std::string r;
        auto e = sd::make_vbr_cublas_spmm(g.handle, problem, r, o);
        return sparsetc_test::median_event_ms(g.stream, 3, 20, [&] { run(*e); });
      };
      const double t_waves = variant(sd::VbrSchedule::waves, 0, true);
      const double t_chunk = variant(sd::VbrSchedule::gathered, size_t(32) << 20, true);
      const double t_chunk128 = variant(sd::VbrSchedule::gathered, size_t(128) << 20, true);
      const double t_batched = variant(sd::VbrSchedule::gathered, 0, false);
      // ---- BCSR tensor cores on the same input (its own 1-SA decision)
      double t_bcsr = -1;
      try {
        std::string r;
        auto bcsr = sd::make_bcsr_tc_spmm(g.handle, problem, r, false);
        sd::DeviceBuffer ws(std::max<size_t>(bcsr->workspace_size(), 16), g.gpu());
        t_bcsr = sparsetc_test::median_event_ms(g.stream, 3, 20,
                                                [&] { bcsr->execute(1.0, B, 0.0, C, ws.data(), ws.size()); });
      } catch (const sd::Error& e) {
        std::printf("  BCSR-TC: %s\n", e.what());
      }
      // ---- cuSPARSE
      const float alpha = 1.0f, beta = 0.0f;
      cusparseDnMatDescr_t mb16, mb32, mc;
      CUSPARSE_OK(cusparseCreateDnMat(&mb16, k, n, n, dB16.data(), CUDA_R_16F, CUSPARSE_ORDER_ROW));
      CUSPARSE_OK(cusparseCreateDnMat(&mb32, k, n, n, dB32.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      CUSPARSE_OK(cusparseCreateDnMat(&mc, m, n, n, dCref.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      double best = 1e30;
      std::string best_name;
      auto time_cusparse = [&](cusparseSpMatDescr_t A, cusparseDnMatDescr_t Bd, cusparseSpMMAlg_t alg, const char* name) {
        size_t bytes = 0;
        if (cusparseSpMM_bufferSize(cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                    A, Bd, &beta, mc, CUDA_R_32F, alg, &bytes) != CUSPARSE_STATUS_SUCCESS)
          return;
        sd::DeviceBuffer work(std::max<size_t>(bytes, 16), g.gpu());
        if (cusparseSpMM_preprocess(cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    &alpha, A, Bd, &beta, mc, CUDA_R_32F, alg, work.data()) != CUSPARSE_STATUS_SUCCESS)
          return;
        bool ok = true;
        const double t = sparsetc_test::median_event_ms(g.stream, 3, 20, [&] {
          ok = ok && cusparseSpMM(cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A,
                                  Bd, &beta, mc, CUDA_R_32F, alg, work.data()) == CUSPARSE_STATUS_SUCCESS;
        });
        if (ok && t < best) {
          best = t;
          best_name = name;
        }
      };
      time_cusparse(csr32, mb32, CUSPARSE_SPMM_CSR_ALG1, "f32 alg1");
      time_cusparse(csr32, mb32, CUSPARSE_SPMM_CSR_ALG2, "f32 alg2");
      time_cusparse(csr32, mb32, CUSPARSE_SPMM_CSR_ALG3, "f32 alg3");
      time_cusparse(csr16, mb16, CUSPARSE_SPMM_CSR_ALG1, "f16 alg1");
      time_cusparse(csr16, mb16, CUSPARSE_SPMM_CSR_ALG2, "f16 alg2");
      time_cusparse(csr16, mb16, CUSPARSE_SPMM_CSR_ALG3, "f16 alg3");
      cusparseDestroyDnMat(mb16);
      cusparseDestroyDnMat(mb32);
      cusparseDestroyDnMat(mc);
      // agreement with cuSPARSE (the last variant's C)
      std::vector<float> want(static_cast<size_t>(m * n));
      sd::copy_device_to_host(want.data(), dCref.data(), want.size() * 4, g.stream);
      double diff = 0, mag = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        diff = std::max(diff, double(std::fabs(got[i] - want[i])));
        mag = std::max(mag, double(std::fabs(want[i])));
      }
      EXPECT_LE(diff, 1e-3 * mag) << spec << " N " << n << ": VBR-cuBLAS differs from cuSPARSE";
      const double tflops = 2.0 * double(info.stored_area) * double(n) / (t_ours * 1e9);
      char dw[32];
      std::snprintf(dw, sizeof dw, "%lld/%.1f", (long long)info.block_width, info.tau);
      std::printf("%-24s %5lld %9.3f %-10s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %6.2fx %6.2fx %8.1f %7.3f %6s %9.1f\n",
                  spec.c_str(), (long long)n, best, best_name.c_str(), t_ours, t_waves, t_chunk, t_chunk128, t_batched, t_bcsr,
                  best / t_ours, t_bcsr > 0 ? t_bcsr / t_ours : 0.0, tflops,
                  double(info.nnz) / double(std::max<int64_t>(info.stored_area, 1)), dw, info.preprocess_seconds * 1e3);
      std::fflush(stdout);
    }
    cusparseDestroySpMat(csr16);
    cusparseDestroySpMat(csr32);
  }
  cusparseDestroy(cusparse);
}

}  // namespace

// Timings of the CUDA-core SpMM kernels against cuSPARSE SpMM (not a correctness test): runs only
// with SPARSETC_BENCH=1 on a device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='CudaCoreSpmmBench.*'
// SPARSETC_BENCH_SPECS overrides the generated matrices (comma separated, gen/generators.hpp
// syntax), SPARSETC_BENCH_NS the widths N. fp32 values (A, B, C), row-major B and C, alpha 1, beta 0.
// Each time is the median of 60 event-timed runs after 5 warm-ups, in the same process and on the
// same inputs: ours (CSR, DCSR, tiled DCSR; plan creation excluded, printed apart) and cuSPARSE
// CSR with ALG_DEFAULT, CSR_ALG2 and CSR_ALG3 (after SpMM_preprocess), int32 indices, buffers
// allocated beforehand. Each line ends with best cuSPARSE / ours; the geometric means close the run.
// Our CSR result is compared with cuSPARSE's (relative Frobenius difference).
//
// CudaCoreSpmmBench.RealMatricesByPrecision times the C-stationary kernel on Matrix Market files
// (SPARSETC_BENCH_MTX, comma separated paths, or generator specs: no ".mtx" in them; values replaced
// by random ones, which f16 can hold)
// in f32, f16, bf16 and f64 (SPARSETC_BENCH_TYPES) against cuSPARSE's CSR algorithms on the same input
// type (A and B in that type, C in f32 and fp32 compute, f64 for f64): median of SPARSETC_BENCH_RUNS (20) runs,
// each event-timed after L2 is evicted (a 256 MB memset), as the benchmark harness does. Beside
// the default schedule it times the schedules of SPARSETC_BENCH_SCHEDULES (comma separated, default
// "c4,c8"): each a '+'-joined list of c4/c8 (columns per lane), s<k> (short rows as streams of k rows,
// s0: chosen), e<k> (streams of about k entries), g<k> (short rows as groups of 2^k lanes per row's
// entries, g: chosen), l<k> (groups whose lanes take about k entries of a mean row) and t<k>
// (column tiles of at most k lanes: narrower tiles, more of them). It also
// times a 16-byte memset after the same eviction: about the floor of any one-launch multiply.
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/spmm_plan.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "formats/convert.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "io/matrix_market.hpp"
#include "test_cuda_core_spmm_support.hpp"

namespace {

using namespace cuda_core_test;

constexpr int kRuns = 60;
constexpr int kWarmup = 5;

double median_ms(cudaStream_t stream, const std::function<void()>& f) {
  return sparsetc_test::median_event_ms(stream, kWarmup, kRuns, f);
}

#define CUSPARSE_OK(call) ASSERT_EQ((call), CUSPARSE_STATUS_SUCCESS) << #call

TEST(CudaCoreSpmmBench, VersusCusparse) {
  SKIP_WITHOUT_DEVICE();
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the kernels";
  const auto specs = sparsetc_test::env_list("SPARSETC_BENCH_SPECS",
                                   {"rmat:16:16", "uniform:200000:16", "poisson2d5:1024", "band:16384:64"});
  std::vector<int64_t> ns;
  for (const std::string& s : sparsetc_test::env_list("SPARSETC_BENCH_NS", {"8", "32", "128", "512"})) ns.push_back(std::stoll(s));
  cudaDeviceProp prop{};
  int device = 0;
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&prop, device);
  std::printf("device: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
  std::printf("%-18s %4s %8s | %7s %7s %7s | %7s %7s %7s | %8s %8s %8s | %6s %6s | %7s %8s\n", "matrix", "N", "nnz",
              "csr", "dcsr", "tiled", "groups", "rps1", "rps16", "cus-def", "cus-alg2", "cus-alg3", "best", "csr",
              "GFLOP/s", "rel.diff");

  GpuHandle g;
  cusparseHandle_t cus;
  CUSPARSE_OK(cusparseCreate(&cus));
  CUSPARSE_OK(cusparseSetStream(cus, g.stream));
  std::vector<double> ratio_best, ratio_csr;
  for (const std::string& spec : specs) {
    const sd::CsrMatrix<double> a = sd::generate(spec, 12345);
    const int64_t nnz = a.nnz();
    DeviceMatrix da = upload(g, a);
    const sd::DeviceCsr<float> csr = sd::gpu_normalize<float>(da.matrix->layout, SPARSETC_DUPLICATES_ERROR, g.gpu());
    const sd::CoreRows rows{csr.rows, csr.cols, csr.rows, csr.nnz, nullptr, csr.row_ptr.as<const int64_t>(),
                            csr.col_idx.as<const int32_t>(), csr.values.data()};
    // cuSPARSE's copy: int32 offsets and indices, f32 values.
    std::vector<int32_t> rp(a.row_ptr.begin(), a.row_ptr.end()), ci(a.col_idx.begin(), a.col_idx.end());
    std::vector<float> vals(a.values.begin(), a.values.end());
    sd::DeviceBuffer d_rp(rp.size() * 4, g.gpu()), d_ci(std::max<size_t>(ci.size(), 1) * 4, g.gpu()),
        d_val(std::max<size_t>(vals.size(), 1) * 4, g.gpu());
    sd::copy_host_to_device(d_rp.data(), rp.data(), rp.size() * 4, g.stream);
    sd::copy_host_to_device(d_ci.data(), ci.data(), ci.size() * 4, g.stream);
    sd::copy_host_to_device(d_val.data(), vals.data(), vals.size() * 4, g.stream);
    cusparseSpMatDescr_t mat;
    CUSPARSE_OK(cusparseCreateCsr(&mat, a.rows, a.cols, nnz, d_rp.data(), d_ci.data(), d_val.data(), CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    for (int64_t n : ns) {
      Dense B(a.cols, n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
      Dense C(a.rows, n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
      {
        // Values in [-1, 1) from a multiplicative hash (gigabytes of B: a fast generator).
        auto* b = reinterpret_cast<float*>(B.host.data());
        for (int64_t i = 0; i < a.cols * n; ++i)
          b[i] = float((uint32_t(uint64_t(i + 1) * 2654435761ull) >> 8) & 0xffff) / 32768.0f - 1.0f;
      }
      B.to_device(g);
      C.to_device(g);
      Dense Cref(a.rows, n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
      std::fill(Cref.host.begin(), Cref.host.end(), 0);  // cuSPARSE may scale C by beta = 0
      Cref.to_device(g);

      // Ours.
      sd::SpmmProblem problem;
      problem.A = da.matrix.get();
      problem.B = B.shape();
      problem.C = C.shape();
      problem.compute = SPARSETC_COMPUTE_32F;
      double ours[3] = {0, 0, 0}, build_ms[3] = {0, 0, 0};
      const sparsetc_spmm_alg_t algs[3] = {SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR, SPARSETC_SPMM_ALG_TILED_DCSR};
      std::vector<float> c_csr;
      for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        auto e = sd::make_cuda_core_spmm(g.handle, problem, algs[i]);
        cudaStreamSynchronize(g.stream);
        build_ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        sd::DeviceBuffer ws(std::max<size_t>(e->workspace_size(), 16), g.gpu());
        ours[i] = median_ms(g.stream, [&] { e->execute(1.0, B.desc(), 0.0, C.desc(), ws.data(), ws.size()); });
        if (i == 0) {
          C.to_host(g);
          c_csr.assign(reinterpret_cast<const float*>(C.host.data()),
                       reinterpret_cast<const float*>(C.host.data()) + a.rows * n);
        }
      }

      // Variants of the CSR schedule: groups of lanes per row; streams of 1 and of 16 rows.
      double variants[3] = {0, 0, 0};
      {
        sd::RowScheduleOptions options[3];
        options[0].short_rows = 0;
        options[1].short_rows = options[2].short_rows = 1;
        options[1].rows_per_stream = 1;
        options[2].rows_per_stream = 16;
        sd::CoreDenseArgs args;
        args.n = n;
        args.B = B.device.data();
        args.ldb = n;
        args.C = C.device.data();
        args.ldc = n;
        for (int i = 0; i < 3; ++i) {
          sd::RowSchedule schedule = sd::make_row_schedule(rows, sd::CorePrecision::f32, n, nullptr, g.gpu(), options[i]);
          sd::DeviceBuffer ws(std::max<size_t>(schedule.workspace_bytes, 16), g.gpu());
          variants[i] = median_ms(g.stream, [&] {
            sd::row_spmm(rows, sd::CorePrecision::f32, schedule, args, ws.data(), g.stream);
          });
        }
      }

      // cuSPARSE.
      cusparseDnMatDescr_t db, dc;
      CUSPARSE_OK(cusparseCreateDnMat(&db, a.cols, n, n, B.device.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      CUSPARSE_OK(cusparseCreateDnMat(&dc, a.rows, n, n, Cref.device.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      const float one = 1.0f, zero = 0.0f;
      const cusparseSpMMAlg_t cus_algs[3] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};
      double theirs[3] = {0, 0, 0};
      for (int i = 0; i < 3; ++i) {
        size_t bytes = 0;
        cusparseStatus_t st = cusparseSpMM_bufferSize(cus, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                      CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, db, &zero, dc,
                                                      CUDA_R_32F, cus_algs[i], &bytes);
        if (st != CUSPARSE_STATUS_SUCCESS) {
          theirs[i] = NAN;
          continue;
        }
        sd::DeviceBuffer buf(std::max<size_t>(bytes, 16), g.gpu());
        if (cus_algs[i] == CUSPARSE_SPMM_CSR_ALG3) {
          CUSPARSE_OK(cusparseSpMM_preprocess(cus, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                              &one, mat, db, &zero, dc, CUDA_R_32F, cus_algs[i], buf.data()));
        }
        bool ok = true;
        theirs[i] = median_ms(g.stream, [&] {
          ok = ok && cusparseSpMM(cus, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat,
                                  db, &zero, dc, CUDA_R_32F, cus_algs[i], buf.data()) == CUSPARSE_STATUS_SUCCESS;
        });
        if (!ok) theirs[i] = NAN;
      }
      cusparseDestroyDnMat(db);
      cusparseDestroyDnMat(dc);
      Cref.to_host(g);
      double num = 0, den = 0;
      const auto* ref = reinterpret_cast<const float*>(Cref.host.data());
      for (int64_t i = 0; i < a.rows * n; ++i) {
        num += (double(c_csr[size_t(i)]) - ref[i]) * (double(c_csr[size_t(i)]) - ref[i]);
        den += double(ref[i]) * ref[i];
      }
      const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
      EXPECT_LT(rel, 1e-5) << spec << " N " << n << ": our CSR result differs from cuSPARSE's";

      double best_theirs = INFINITY, best_ours = INFINITY;
      for (double t : theirs)
        if (std::isfinite(t)) best_theirs = std::min(best_theirs, t);
      for (double t : ours) best_ours = std::min(best_ours, t);
      ratio_best.push_back(best_theirs / best_ours);
      ratio_csr.push_back(best_theirs / ours[0]);
      std::printf(
          "%-18s %4lld %8lld | %7.4f %7.4f %7.4f | %7.4f %7.4f %7.4f | %8.4f %8.4f %8.4f | %5.2fx %5.2fx | %7.0f %8.1e\n",
          spec.c_str(), (long long)n, (long long)nnz, ours[0], ours[1], ours[2], variants[0], variants[1], variants[2],
          theirs[0], theirs[1], theirs[2], best_theirs / best_ours, best_theirs / ours[0],
          2.0 * nnz * n / (best_ours * 1e6), rel);
      std::printf("%-18s %4s plan creation ms: csr %.1f dcsr %.1f tiled %.1f\n", "", "", build_ms[0], build_ms[1],
                  build_ms[2]);
      std::fflush(stdout);
    }
    cusparseDestroySpMat(mat);
  }
  cusparseDestroy(cus);
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0.0 : std::exp(s / double(v.size()));
  };
  std::printf("geomean speedup over the best cuSPARSE fp32 variant: best of ours %.3fx, CSR kernel %.3fx (%zu cases)\n",
              geomean(ratio_best), geomean(ratio_csr), ratio_best.size());
}

// Median of `runs` event-timed calls of f, each after L2 is evicted by a memset of `flush`.
double median_cold_ms(cudaStream_t stream, sd::DeviceBuffer& flush, int runs, const std::function<void()>& f) {
  f();  // warm-up: module load, first-touch
  cudaEvent_t start, stop;
  EXPECT_EQ(cudaEventCreate(&start), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&stop), cudaSuccess);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    EXPECT_EQ(cudaMemsetAsync(flush.data(), r & 0xFF, flush.size(), stream), cudaSuccess);
    cudaEventRecord(start, stream);
    f();
    cudaEventRecord(stop, stream);
    EXPECT_EQ(cudaEventSynchronize(stop), cudaSuccess);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct BenchType {
  const char* name;
  sd::CorePrecision precision;
  sparsetc_value_type_t value_type;  // of A and B
  cudaDataType cuda_type;
  sparsetc_value_type_t c_type;  // of C, and the compute type
  cudaDataType c_cuda_type;
};

// C's elements as doubles.
std::vector<double> c_values(const std::vector<unsigned char>& raw, sparsetc_value_type_t type) {
  std::vector<double> out(raw.size() / element_bytes(type));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = type == SPARSETC_VALUE_F64 ? reinterpret_cast<const double*>(raw.data())[i]
                                        : double(reinterpret_cast<const float*>(raw.data())[i]);
  return out;
}

// A schedule of SPARSETC_BENCH_SCHEDULES, e.g. "c8+s2" (see the header).
sd::RowScheduleOptions parse_schedule(const std::string& spec) {
  sd::RowScheduleOptions options;
  std::stringstream in(spec);
  std::string part;
  while (std::getline(in, part, '+')) {
    if (part.empty()) continue;
    const std::string arg = part.substr(1);
    if (part[0] == 'c') {
      options.lane_columns = std::stoi(arg);
    } else if (part[0] == 's') {
      options.short_rows = 1;
      options.rows_per_stream = arg.empty() ? 0 : std::stoll(arg);
    } else if (part[0] == 'g') {
      options.short_rows = 0;
      options.lanes_k_log = arg.empty() ? -1 : std::stoi(arg);
    } else if (part[0] == 'e') {
      options.short_rows = 1;
      options.stream_entries = std::stoll(arg);
    } else if (part[0] == 't') {
      options.tile_lanes = std::stoi(arg);
    } else if (part[0] == 'l') {
      options.short_rows = 0;
      options.lane_entries = std::stoll(arg);
    } else {
      ADD_FAILURE() << "unknown schedule part '" << part << "' in " << spec;
    }
  }
  return options;
}

TEST(CudaCoreSpmmBench, RealMatricesByPrecision) {
  SKIP_WITHOUT_DEVICE();
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the kernels";
  const auto files = sparsetc_test::env_list("SPARSETC_BENCH_MTX", {});
  if (files.empty()) GTEST_SKIP() << "set SPARSETC_BENCH_MTX to Matrix Market files";
  std::vector<int64_t> ns;
  for (const std::string& s : sparsetc_test::env_list("SPARSETC_BENCH_NS", {"8", "32", "128", "512"}))
    ns.push_back(std::stoll(s));
  const auto type_names = sparsetc_test::env_list("SPARSETC_BENCH_TYPES", {"f32", "f16", "bf16"});
  const int runs = std::getenv("SPARSETC_BENCH_RUNS") ? std::atoi(std::getenv("SPARSETC_BENCH_RUNS")) : 20;
  const BenchType all_types[4] = {
      {"f32", sd::CorePrecision::f32, SPARSETC_VALUE_F32, CUDA_R_32F, SPARSETC_VALUE_F32, CUDA_R_32F},
      {"f16", sd::CorePrecision::f16, SPARSETC_VALUE_F16, CUDA_R_16F, SPARSETC_VALUE_F32, CUDA_R_32F},
      {"bf16", sd::CorePrecision::bf16, SPARSETC_VALUE_BF16, CUDA_R_16BF, SPARSETC_VALUE_F32, CUDA_R_32F},
      {"f64", sd::CorePrecision::f64, SPARSETC_VALUE_F64, CUDA_R_64F, SPARSETC_VALUE_F64, CUDA_R_64F}};
  // Our variants: the default schedule, then those asked for.
  std::vector<std::string> schedule_names{"auto"};
  for (const std::string& spec : sparsetc_test::env_list("SPARSETC_BENCH_SCHEDULES", {"c4", "c8"}))
    schedule_names.push_back(spec);
  const cusparseSpMMAlg_t cus_algs[4] = {CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2,
                                         CUSPARSE_SPMM_CSR_ALG3};
  cudaDeviceProp prop{};
  int device = 0;
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&prop, device);
  std::printf("device: %s (%d SMs); median of %d cold runs (L2 evicted), ms\n", prop.name, prop.multiProcessorCount,
              runs);

  GpuHandle g;
  cusparseHandle_t cus;
  CUSPARSE_OK(cusparseCreate(&cus));
  CUSPARSE_OK(cusparseSetStream(cus, g.stream));
  sd::DeviceBuffer flush(size_t(256) << 20, g.gpu());
  sd::DeviceBuffer tiny(16, g.gpu());
  const double empty_ms = median_cold_ms(g.stream, flush, runs, [&] {
    EXPECT_EQ(cudaMemsetAsync(tiny.data(), 0, tiny.size(), g.stream), cudaSuccess);
  });
  std::printf("a 16-byte memset after the eviction: %.4f ms\n", empty_ms);
  std::printf("%-14s %4s %4s |", "matrix", "type", "N");
  for (const std::string& v : schedule_names) std::printf(" %8s", v.c_str());
  std::printf(" | %8s %8s %8s %8s | %6s %6s %-8s | %8s\n", "cus-def", "cus-alg1", "cus-alg2", "cus-alg3", "auto",
              "best", "(which)", "rel.diff");
  std::map<std::string, std::vector<double>> ratios;  // "type N" -> best cuSPARSE / our auto
  for (const std::string& file : files) {
    // A Matrix Market file, or a generator spec (no ".mtx" in it).
    const bool mtx = file.find(".mtx") != std::string::npos;
    sd::CsrMatrix<double> a =
        mtx ? sd::coo_to_csr(sd::read_matrix_market(file), SPARSETC_DUPLICATES_SUM) : sd::generate(file, 42);
    {
      std::mt19937_64 rng(7);
      for (double& v : a.values) v = random_entry(rng);
    }
    std::string name = mtx ? file.substr(file.find_last_of('/') + 1) : file;
    if (mtx) name = name.substr(0, name.find('.'));
    const int64_t nnz = a.nnz();
    std::vector<int32_t> rp32(a.row_ptr.begin(), a.row_ptr.end()), ci(a.col_idx.begin(), a.col_idx.end());
    sd::DeviceBuffer d_rp64(a.row_ptr.size() * 8, g.gpu()), d_rp32(rp32.size() * 4, g.gpu()),
        d_ci(std::max<size_t>(ci.size(), 1) * 4, g.gpu());
    sd::copy_host_to_device(d_rp64.data(), a.row_ptr.data(), a.row_ptr.size() * 8, g.stream);
    sd::copy_host_to_device(d_rp32.data(), rp32.data(), rp32.size() * 4, g.stream);
    sd::copy_host_to_device(d_ci.data(), ci.data(), ci.size() * 4, g.stream);
    for (const BenchType& type : all_types) {
      if (std::find(type_names.begin(), type_names.end(), std::string(type.name)) == type_names.end()) continue;
      const size_t bytes = element_bytes(type.value_type);
      std::vector<unsigned char> vals(std::max<int64_t>(nnz, 1) * bytes);
      for (int64_t e = 0; e < nnz; ++e) store_value(type.value_type, a.values[size_t(e)], vals.data() + e * bytes);
      sd::DeviceBuffer d_val(vals.size(), g.gpu());
      sd::copy_host_to_device(d_val.data(), vals.data(), vals.size(), g.stream);
      const sd::CoreRows rows{a.rows, a.cols, a.rows, nnz, nullptr, d_rp64.as<const int64_t>(),
                              d_ci.as<const int32_t>(), d_val.data()};
      cusparseSpMatDescr_t mat;
      CUSPARSE_OK(cusparseCreateCsr(&mat, a.rows, a.cols, nnz, d_rp32.data(), d_ci.data(), d_val.data(),
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type.cuda_type));
      for (int64_t n : ns) {
        Dense B(a.cols, n, SPARSETC_ORDER_ROW, type.value_type, 0, 0);
        Dense C(a.rows, n, SPARSETC_ORDER_ROW, type.c_type, 0, 0);
        for (int64_t r = 0; r < a.cols; ++r)
          for (int64_t c = 0; c < n; ++c)
            B.set(r, c, double((uint32_t(uint64_t(r * n + c + 1) * 2654435761ull) >> 8) & 0xffff) / 32768.0 - 1.0);
        B.to_device(g);
        C.to_device(g);
        sd::CoreDenseArgs args;
        args.n = n;
        args.B = B.desc().values;
        args.ldb = n;
        args.C = C.desc().values;
        args.c_type = type.c_type;
        args.ldc = n;
        const size_t c_bytes = size_t(a.rows * n) * element_bytes(type.c_type);
        std::vector<unsigned char> got_raw(c_bytes), want_raw(c_bytes);

        // cuSPARSE first: its ALG2 result is the reference of ours.
        cusparseDnMatDescr_t db, dc;
        CUSPARSE_OK(
            cusparseCreateDnMat(&db, a.cols, n, n, const_cast<void*>(args.B), type.cuda_type, CUSPARSE_ORDER_ROW));
        CUSPARSE_OK(cusparseCreateDnMat(&dc, a.rows, n, n, args.C, type.c_cuda_type, CUSPARSE_ORDER_ROW));
        const float one_f = 1.0f, zero_f = 0.0f;
        const double one_d = 1.0, zero_d = 0.0;
        const bool f64 = type.c_type == SPARSETC_VALUE_F64;
        const void* one = f64 ? static_cast<const void*>(&one_d) : &one_f;
        const void* zero = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
        double theirs[4];
        for (int i = 0; i < 4; ++i) {
          theirs[i] = NAN;
          size_t buffer_bytes = 0;
          const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
          if (cusparseSpMM_bufferSize(cus, op, op, one, mat, db, zero, dc, type.c_cuda_type, cus_algs[i], &buffer_bytes) !=
              CUSPARSE_STATUS_SUCCESS)
            continue;
          sd::DeviceBuffer buf(std::max<size_t>(buffer_bytes, 16), g.gpu());
          if (cus_algs[i] == CUSPARSE_SPMM_CSR_ALG3 &&
              cusparseSpMM_preprocess(cus, op, op, one, mat, db, zero, dc, type.c_cuda_type, cus_algs[i], buf.data()) !=
                  CUSPARSE_STATUS_SUCCESS)
            continue;
          bool ok = true;
          const double t = median_cold_ms(g.stream, flush, runs, [&] {
            ok = ok && cusparseSpMM(cus, op, op, one, mat, db, zero, dc, type.c_cuda_type, cus_algs[i], buf.data()) ==
                           CUSPARSE_STATUS_SUCCESS;
          });
          if (ok) theirs[i] = t;
          if (cus_algs[i] == CUSPARSE_SPMM_CSR_ALG2 && ok)
            sd::copy_device_to_host(want_raw.data(), args.C, c_bytes, g.stream);
        }
        cusparseDestroyDnMat(db);
        cusparseDestroyDnMat(dc);

        std::vector<double> ours(schedule_names.size(), NAN);
        double worst_rel = 0;
        for (size_t v = 0; v < schedule_names.size(); ++v) {
          const sd::RowScheduleOptions options = v == 0 ? sd::RowScheduleOptions{} : parse_schedule(schedule_names[v]);
          sd::RowSchedule schedule = sd::make_row_schedule(rows, type.precision, n, nullptr, g.gpu(), options);
          sd::DeviceBuffer ws(std::max<size_t>(schedule.workspace_bytes, 16), g.gpu());
          EXPECT_EQ(cudaMemsetAsync(args.C, 0xFF, c_bytes, g.stream), cudaSuccess);  // NaN
          ours[v] = median_cold_ms(g.stream, flush, runs, [&] {
            sd::row_spmm(rows, type.precision, schedule, args, ws.data(), g.stream);
          });
          sd::copy_device_to_host(got_raw.data(), args.C, c_bytes, g.stream);
          const std::vector<double> got = c_values(got_raw, type.c_type), want = c_values(want_raw, type.c_type);
          double num = 0, den = 0;
          for (size_t i = 0; i < got.size(); ++i) {
            const double d = double(got[i]) - double(want[i]);
            num += std::isfinite(d) ? d * d : INFINITY;
            den += double(want[i]) * want[i];
          }
          const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
          worst_rel = std::max(worst_rel, rel);
          EXPECT_LT(rel, 1e-5) << name << " " << type.name << " N " << n << " schedule " << schedule_names[v]
                               << ": our result differs from cuSPARSE CSR_ALG2's";
        }
        double best_theirs = INFINITY, best_ours = INFINITY;
        size_t best_v = 0;
        for (double t : theirs)
          if (std::isfinite(t)) best_theirs = std::min(best_theirs, t);
        for (size_t v = 0; v < ours.size(); ++v)
          if (std::isfinite(ours[v]) && ours[v] < best_ours) best_ours = ours[v], best_v = v;
        ratios[std::string(type.name) + " N=" + std::to_string(n)].push_back(best_theirs / ours[0]);
        ratios[std::string(type.name) + " N=" + std::to_string(n) + " best schedule"].push_back(best_theirs / best_ours);
        std::printf("%-14s %4s %4lld |", name.c_str(), type.name, (long long)n);
        for (double t : ours) std::printf(" %8.4f", t);
        std::printf(" | %8.4f %8.4f %8.4f %8.4f | %5.2fx %5.2fx %-8s | %8.1e\n", theirs[0], theirs[1], theirs[2],
                    theirs[3], best_theirs / ours[0], best_theirs / best_ours, schedule_names[best_v].c_str(),
                    worst_rel);
        std::fflush(stdout);
      }
      cusparseDestroySpMat(mat);
    }
  }
  cusparseDestroy(cus);
  for (const auto& [key, v] : ratios) {
    double s = 0, lo = INFINITY;
    for (double x : v) {
      s += std::log(x);
      lo = std::min(lo, x);
    }
    std::printf("%-22s best cuSPARSE / ours: geomean %.3fx, min %.3fx over %zu matrices\n", key.c_str(),
                std::exp(s / double(v.size())), lo, v.size());
  }
}

}  // namespace

// Timings of the BCSR tensor-core SpMM against cuSPARSE in the same process on the same inputs (not
// a correctness test): runs only with SPARSETC_BENCH=1 on a device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='BcsrTcBench.*'
// SPARSETC_BENCH_SPECS overrides the generator specs (comma separated; "+1sa" after a spec reorders
// its rows with 1-SA first; a path with ".mtx" in it is read as a Matrix Market file), SPARSETC_BENCH_NS
// the column counts. The f16 path is timed.
// SPARSETC_BENCH_TC_VARIANTS (e.g. "1,2") also times the other wide kernels (TcSpmmArgs::kernel_variant)
// on the same inputs, one line each after the case (checked against cuSPARSE like the default);
// "panels" there times the default kernel on the panels' own work items (TcSpmmArgs::spread = false),
// printed as variant -1; "memset" the default with the arrival counters in the workspace, zeroed on
// every call (variant -2; the default keeps them beside the operand, as a plan does); "sparse" and
// "dense" the kernels for sparse and for dense entries whichever the operand picks
// (TcSpmmArgs::dense_stages; variants -3 and -4); "once" the default with one CTA per work item and
// N tile, "loop" with CTAs looping over them wherever the list has no split items
// (TcSpmmArgs::loop_ctas 0 and SMs x resident CTAs; variants -5 and -6).
//
// Per case: medians of 50 CUDA-event-timed runs after 5 warm-ups of tc_spmm (C fp32, B row-major) and of
// cuSPARSE SpMM: CSR with fp16 A/B and fp32 compute (ALG_DEFAULT, CSR_ALG2), CSR fp32 (CSR_ALG3, often
// its fastest), Blocked-ELL 32 fp16; the ratio to the best cuSPARSE variant, useful GFLOP/s (2 nnz N),
// and the fraction of the roofline: max(bytes / copy bandwidth, tensor flops / SPARSETC_BENCH_TFLOPS
// (default 780)), bytes = A blocks + schedule + B + C once, flops = 2 * stored block entries * N.
// The tensor-core result is compared with cuSPARSE's (relative max difference). Geometric means of
// the ratios per N close the table (the suite of issue 5: scrambled block matrices count after 1-SA).
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
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "formats/convert.hpp"
#include "formats/sparse.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"
#include "gpu/spmm/bcsr_tc/bcsr_tc_spmm.hpp"
#include "io/matrix_market.hpp"
#include "reorder/reorder.hpp"

namespace {

namespace sd = sparsetc::detail;

#define CUSPARSE_OK(call) ASSERT_EQ((call), CUSPARSE_STATUS_SUCCESS) << #call

// Median milliseconds of `runs` event-timed calls after `warmup` untimed ones.
double time_ms(cudaStream_t stream, const std::function<void()>& f, int runs = 50, int warmup = 5) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<cudaEvent_t> a(static_cast<size_t>(runs)), b(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    cudaEventCreate(&a[size_t(i)]);
    cudaEventCreate(&b[size_t(i)]);
  }
  for (int i = 0; i < runs; ++i) {
    cudaEventRecord(a[size_t(i)], stream);
    f();
    cudaEventRecord(b[size_t(i)], stream);
  }
  cudaStreamSynchronize(stream);
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    cudaEventElapsedTime(&ms, a[size_t(i)], b[size_t(i)]);
    t.push_back(ms);
    cudaEventDestroy(a[size_t(i)]);
    cudaEventDestroy(b[size_t(i)]);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<std::string> split_list(const char* env, std::vector<std::string> fallback) {
  if (!env) return fallback;
  std::vector<std::string> out;
  std::stringstream in(env);
  for (std::string s; std::getline(in, s, ',');)
    if (!s.empty()) out.push_back(s);
  return out;
}

// Rows regrouped by 1-SA (16-row blocks, 16-wide column blocks).
sd::CsrMatrix<double> reorder_1sa(const sd::CsrMatrix<double>& a, double* seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  sd::reorder::Pattern p{a.rows, a.cols, a.row_ptr.data(), a.col_idx.data()};
  sd::reorder::Options o;
  o.block_width = 16;
  o.block_height = 16;
  const sd::reorder::Blocking blocking = sd::reorder::one_sa(p, o);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sd::CsrMatrix<double> r;
  r.rows = a.rows;
  r.cols = a.cols;
  for (int64_t i = 0; i < a.rows; ++i) {
    const int64_t src = blocking.permutation[size_t(i)];
    for (int64_t e = a.row_ptr[size_t(src)]; e < a.row_ptr[size_t(src + 1)]; ++e) {
      r.col_idx.push_back(a.col_idx[size_t(e)]);
      r.values.push_back(a.values[size_t(e)]);
    }
    r.row_ptr.push_back(int64_t(r.col_idx.size()));
  }
  return r;
}

// Blocked-ELL with b x b blocks (cuSPARSE layout: a rows x ell_cols row-major value array).
struct BlockedEll {
  int64_t ell_cols = 0;
  std::vector<int32_t> col_ind;
  std::vector<uint16_t> values;
};
BlockedEll blocked_ell(const sd::CsrMatrix<double>& a, int64_t b) {
  const int64_t block_rows = a.rows / b;
  std::vector<std::vector<int32_t>> cols(static_cast<size_t>(block_rows));
  int64_t width = 0;
  for (int64_t br = 0; br < block_rows; ++br) {
    auto& c = cols[size_t(br)];
    for (int64_t i = br * b; i < (br + 1) * b; ++i)
      for (int64_t e = a.row_ptr[size_t(i)]; e < a.row_ptr[size_t(i + 1)]; ++e) c.push_back(int32_t(a.col_idx[size_t(e)] / b));
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    width = std::max<int64_t>(width, int64_t(c.size()));
  }
  BlockedEll e;
  e.ell_cols = width * b;
  e.col_ind.assign(size_t(block_rows * width), -1);
  e.values.assign(size_t(a.rows * e.ell_cols), 0);
  for (int64_t br = 0; br < block_rows; ++br) {
    const auto& c = cols[size_t(br)];
    for (size_t j = 0; j < c.size(); ++j) e.col_ind[size_t(br * width) + j] = c[j];
    for (int64_t i = br * b; i < (br + 1) * b; ++i)
      for (int64_t x = a.row_ptr[size_t(i)]; x < a.row_ptr[size_t(i + 1)]; ++x) {
        const int32_t cb = int32_t(a.col_idx[size_t(x)] / b);
        const int64_t slot = std::lower_bound(c.begin(), c.end(), cb) - c.begin();
        e.values[size_t(i * e.ell_cols + slot * b + a.col_idx[size_t(x)] % b)] = sd::double_to_half(a.values[size_t(x)]);
      }
  }
  return e;
}

struct Row {
  std::string spec;
  int64_t n;
  double tc, best;
};

TEST(BcsrTcBench, VersusCusparse) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    GTEST_SKIP() << "no CUDA device";
  }
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the tensor-core SpMM";
  const std::vector<std::string> specs =
      split_list(std::getenv("SPARSETC_BENCH_SPECS"),
                 {"band:16384:64", "band:16384:512", "band:16384:2048", "poisson3d27:64", "blocks:8192:64:0.1:0.2",
                  "blocks:8192:64:0.1:0.2+1sa"});
  std::vector<int64_t> ns;
  for (const std::string& s : split_list(std::getenv("SPARSETC_BENCH_NS"), {"8", "32", "128", "512"}))
    ns.push_back(std::stoll(s));
  const double tflops = std::getenv("SPARSETC_BENCH_TFLOPS") ? std::atof(std::getenv("SPARSETC_BENCH_TFLOPS")) : 780.0;
  std::vector<int> variants;
  for (const std::string& s : split_list(std::getenv("SPARSETC_BENCH_TC_VARIANTS"), {}))
    variants.push_back(s == "panels"   ? -1
                       : s == "memset" ? -2
                       : s == "sparse" ? -3
                       : s == "dense"  ? -4
                       : s == "once"   ? -5
                       : s == "loop"   ? -6
                                       : std::stoi(s));

  cudaMemPool_t pool;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  uint64_t threshold = ~0ull;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const sd::GpuContext ctx{stream, nullptr};
  cusparseHandle_t handle;
  CUSPARSE_OK(cusparseCreate(&handle));
  CUSPARSE_OK(cusparseSetStream(handle, stream));
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);

  // copy bandwidth (bytes read + written per second)
  double copy_gbs = 0;
  {
    const size_t bytes = size_t(512) << 20;
    sd::DeviceBuffer x(bytes, ctx), y(bytes, ctx);
    const double ms = time_ms(stream, [&] { cudaMemcpyAsync(y.data(), x.data(), bytes, cudaMemcpyDeviceToDevice, stream); }, 10, 2);
    copy_gbs = 2.0 * double(bytes) / (ms * 1e6);
  }
  std::printf("\n%s, %d SMs; copy %.0f GB/s; tensor peak assumed %.0f TFLOP/s\n", prop.name, prop.multiProcessorCount,
              copy_gbs, tflops);
  std::printf("%-30s %5s %9s %9s %9s %9s %9s  %7s %8s %6s %9s\n", "matrix", "N", "tc ms", "f16 dflt", "f16 alg2",
              "f32 alg3", "bell32", "x best", "GFLOP/s", "%roof", "max diff");

  std::vector<Row> rows;
  for (std::string spec : specs) {
    bool one_sa = false;
    if (spec.size() > 4 && spec.substr(spec.size() - 4) == "+1sa") {
      one_sa = true;
      spec = spec.substr(0, spec.size() - 4);
    }
    const bool file = spec.find(".mtx") != std::string::npos;  // a Matrix Market file instead of a spec
    sd::CsrMatrix<double> A =
        file ? sd::coo_to_csr(sd::read_matrix_market(spec), SPARSETC_DUPLICATES_SUM) : sd::generate(spec, 42);
    if (file)  // the pattern is what is timed; values in [0.5, 1] fit f16 (stiffness matrices do not)
      for (size_t i = 0; i < A.values.size(); ++i) A.values[i] = 0.5 + double(i % 9) / 16.0;
    double reorder_s = 0;
    if (one_sa) A = reorder_1sa(A, &reorder_s);
    const std::string label = spec + (one_sa ? " (1-SA)" : "");
    const int64_t m = A.rows, k = A.cols, nnz = A.nnz();
    sd::CsrMatrix<float> Af;
    Af.rows = m;
    Af.cols = k;
    Af.row_ptr = A.row_ptr;
    Af.col_idx = A.col_idx;
    Af.values.assign(A.values.begin(), A.values.end());
    const sd::DeviceCsr<float> dA = sd::csr_to_device(Af, ctx);

    // preprocessing: conversion + schedule (reported apart)
    sd::TcBcsrOperand op;
    const double prep_ms = time_ms(stream, [&] { op = sd::make_tc_bcsr(dA.view(), sd::TcPrecision::f16, ctx); }, 3, 1);
    const std::string narrow =
        (op.narrow_items.work_items > 0 ? ", " + std::to_string(op.narrow_items.work_items) + " for N <= 32" : "") +
        (op.wide_items.work_items > 0 ? ", " + std::to_string(op.wide_items.work_items) + " for wide N" : "");
    std::printf("%s: %lld x %lld, %lld nnz, %lld blocks (fill %.2f), %lld entries (fill %.2f: %s-entry kernels), "
                "%lld work items (%lld split, looping CTAs 0x%x)%s, preprocessing %.3f ms%s\n",
                label.c_str(), (long long)m, (long long)k, (long long)nnz, (long long)op.blocks, op.fill(),
                (long long)op.entries, op.entry_fill(), op.dense_stages() ? "dense" : "sparse",
                (long long)op.panel_items.work_items, (long long)op.panel_items.split_items, op.loop_tiles,
                narrow.c_str(), prep_ms,
                one_sa ? (" + 1-SA " + std::to_string(reorder_s * 1e3) + " ms (host)").c_str() : "");

    // cuSPARSE operands: int32 CSR, fp16 and fp32 values
    std::vector<int32_t> rp(A.row_ptr.begin(), A.row_ptr.end()), ci(A.col_idx.begin(), A.col_idx.end());
    std::vector<uint16_t> v16(static_cast<size_t>(nnz));
    for (int64_t i = 0; i < nnz; ++i) v16[size_t(i)] = sd::double_to_half(A.values[size_t(i)]);
    sd::DeviceBuffer d_rp(rp.size() * 4, ctx), d_ci(std::max<size_t>(ci.size(), 1) * 4, ctx),
        d_v16(std::max<size_t>(v16.size(), 1) * 2, ctx);
    sd::copy_host_to_device(d_rp.data(), rp.data(), rp.size() * 4, stream);
    sd::copy_host_to_device(d_ci.data(), ci.data(), ci.size() * 4, stream);
    sd::copy_host_to_device(d_v16.data(), v16.data(), v16.size() * 2, stream);
    cusparseSpMatDescr_t csr16, csr32;
    CUSPARSE_OK(cusparseCreateCsr(&csr16, m, k, nnz, d_rp.data(), d_ci.data(), d_v16.data(), CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_16F));
    CUSPARSE_OK(cusparseCreateCsr(&csr32, m, k, nnz, d_rp.data(), d_ci.data(), const_cast<float*>(dA.view().values),
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    const bool bell_ok = m % 32 == 0 && k % 32 == 0;
    BlockedEll ell;
    sd::DeviceBuffer d_ell_ci, d_ell_v;
    cusparseSpMatDescr_t bell = nullptr;
    if (bell_ok) {
      ell = blocked_ell(A, 32);
      d_ell_ci = sd::DeviceBuffer(ell.col_ind.size() * 4, ctx);
      d_ell_v = sd::DeviceBuffer(ell.values.size() * 2, ctx);
      sd::copy_host_to_device(d_ell_ci.data(), ell.col_ind.data(), ell.col_ind.size() * 4, stream);
      sd::copy_host_to_device(d_ell_v.data(), ell.values.data(), ell.values.size() * 2, stream);
      CUSPARSE_OK(cusparseCreateBlockedEll(&bell, m, k, 32, ell.ell_cols, d_ell_ci.data(), d_ell_v.data(),
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_16F));
    }

    for (int64_t n : ns) {
      std::mt19937_64 rng(static_cast<uint64_t>(n));
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<uint16_t> b16(static_cast<size_t>(k * n));
      std::vector<float> b32(static_cast<size_t>(k * n));
      for (size_t i = 0; i < b16.size(); ++i) {
        b16[i] = sd::double_to_half(u(rng));
        b32[i] = sd::half_to_float(b16[i]);
      }
      sd::DeviceBuffer dB16(b16.size() * 2, ctx), dB32(b32.size() * 4, ctx), dC(size_t(m * n) * 4, ctx),
          dCref(size_t(m * n) * 4, ctx);
      sd::copy_host_to_device(dB16.data(), b16.data(), b16.size() * 2, stream);
      sd::copy_host_to_device(dB32.data(), b32.data(), b32.size() * 4, stream);

      // ---- tensor cores
      sd::TcSpmmArgs args;
      args.n = n;
      args.B = dB16.data();
      args.b_type = SPARSETC_VALUE_F16;
      args.ldb = n;
      args.C = dC.data();
      args.c_type = SPARSETC_VALUE_F32;
      args.ldc = n;
      // As a plan runs it: the arrival counters kept beside the operand, no memset per call.
      const int64_t counter_count = sd::tc_spmm_counter_count(op, n);
      sd::DeviceBuffer counters(size_t(std::max<int64_t>(counter_count, 1)) * sizeof(unsigned), ctx);
      ASSERT_EQ(cudaMemsetAsync(counters.data(), 0, counters.size(), stream), cudaSuccess);
      args.counters = counters.as<unsigned>();
      args.counter_count = counter_count;
      const size_t ws_bytes = sd::tc_spmm_workspace_bytes(op, n);  // enough with or without own counters
      sd::DeviceBuffer ws(std::max<size_t>(ws_bytes, 16), ctx);
      const double tc = time_ms(stream, [&] { sd::tc_spmm(op, args, ws.data(), ws_bytes, stream); });
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << cudaGetErrorString(cudaGetLastError());

      // ---- cuSPARSE variants
      const float alpha = 1.0f, beta = 0.0f;
      cusparseDnMatDescr_t mb16, mb32, mc;
      CUSPARSE_OK(cusparseCreateDnMat(&mb16, k, n, n, dB16.data(), CUDA_R_16F, CUSPARSE_ORDER_ROW));
      CUSPARSE_OK(cusparseCreateDnMat(&mb32, k, n, n, dB32.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      CUSPARSE_OK(cusparseCreateDnMat(&mc, m, n, n, dCref.data(), CUDA_R_32F, CUSPARSE_ORDER_ROW));
      auto run_cusparse = [&](cusparseSpMatDescr_t a, cusparseDnMatDescr_t b, cusparseSpMMAlg_t alg) -> double {
        if (!a) return -1;
        size_t bytes = 0;
        if (cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                    a, b, &beta, mc, CUDA_R_32F, alg, &bytes) != CUSPARSE_STATUS_SUCCESS)
          return -1;
        sd::DeviceBuffer work(std::max<size_t>(bytes, 16), ctx);
        if (cusparseSpMM_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                    a, b, &beta, mc, CUDA_R_32F, alg, work.data()) != CUSPARSE_STATUS_SUCCESS)
          return -1;
        cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
        const double ms = time_ms(stream, [&] {
          const cusparseStatus_t s = cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, b, &beta, mc,
                                                  CUDA_R_32F, alg, work.data());
          if (s != CUSPARSE_STATUS_SUCCESS) st = s;
        });
        return st == CUSPARSE_STATUS_SUCCESS ? ms : -1;
      };
      const double c_bell = run_cusparse(bell, mb16, CUSPARSE_SPMM_BLOCKED_ELL_ALG1);
      const double c_alg3 = run_cusparse(csr32, mb32, CUSPARSE_SPMM_CSR_ALG3);
      const double c_alg2 = run_cusparse(csr16, mb16, CUSPARSE_SPMM_CSR_ALG2);
      const double c_def = run_cusparse(csr16, mb16, CUSPARSE_SPMM_ALG_DEFAULT);  // last: its C is compared
      cusparseDestroyDnMat(mb16);
      cusparseDestroyDnMat(mb32);
      cusparseDestroyDnMat(mc);
      double best = 1e30;
      for (double t : {c_def, c_alg2, c_alg3, c_bell})
        if (t > 0) best = std::min(best, t);

      // agreement with cuSPARSE
      std::vector<float> got(static_cast<size_t>(m * n)), want(static_cast<size_t>(m * n));
      sd::copy_device_to_host(got.data(), dC.data(), got.size() * 4, stream);
      sd::copy_device_to_host(want.data(), dCref.data(), want.size() * 4, stream);
      double diff = 0, mag = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        diff = std::max(diff, double(std::fabs(got[i] - want[i])));
        mag = std::max(mag, double(std::fabs(want[i])));
      }

      const double flops = 2.0 * double(nnz) * double(n);
      const double bytes = double(op.values.size() + op.entry_list.size() + sd::tc_work_list(op, n).items.size()) +
                           double(k * n) * 2 + double(m * n) * 4;
      const double tensor = 2.0 * double(op.blocks) * 256.0 * double(n);
      const double floor_ms = std::max(bytes / (copy_gbs * 1e6), tensor / (tflops * 1e9));
      std::printf("%-30s %5lld %9.4f %9.4f %9.4f %9.4f %9.4f  %6.2fx %8.0f %5.1f%% %9.2e\n", label.c_str(),
                  (long long)n, tc, c_def, c_alg2, c_alg3, c_bell, best / tc, flops / (tc * 1e6),
                  100.0 * floor_ms / tc, mag > 0 ? diff / mag : diff);
      std::fflush(stdout);
      rows.push_back({label, n, tc, best});
      EXPECT_LE(diff, 1e-2 * mag + 1e-6) << label << " n=" << n << ": tensor-core result differs from cuSPARSE";

      for (int v : variants) {  // the other wide kernels (or the panels' own work items) on the same inputs
        sd::TcSpmmArgs other = args;
        other.kernel_variant = std::max(v, 0);
        other.spread = v != -1;
        if (v == -2) other.counters = nullptr;  // counters in the workspace, zeroed on every call
        if (v == -3 || v == -4) other.dense_stages = v == -4;
        if (v == -5) other.loop_ctas = 0;
        if (v == -6) other.loop_ctas = op.sm_count * (n <= 32 ? 2 : 1);
        ASSERT_EQ(cudaMemsetAsync(dC.data(), 0xff, dC.size(), stream), cudaSuccess);  // NaN: every element written
        const double ms = time_ms(stream, [&] { sd::tc_spmm(op, other, ws.data(), ws_bytes, stream); });
        sd::copy_device_to_host(got.data(), dC.data(), got.size() * 4, stream);
        double vdiff = 0;
        for (size_t i = 0; i < got.size(); ++i) vdiff = std::max(vdiff, double(std::fabs(got[i] - want[i])));
        if (std::isnan(vdiff) || std::any_of(got.begin(), got.end(), [](float x) { return std::isnan(x); }))
          vdiff = std::numeric_limits<double>::quiet_NaN();
        std::printf("%-30s %5lld   variant %d: %9.4f ms  %6.2fx  %5.1f%% %9.2e\n", label.c_str(), (long long)n, v, ms,
                    best / ms, 100.0 * floor_ms / ms, mag > 0 ? vdiff / mag : vdiff);
        std::fflush(stdout);
        EXPECT_LE(vdiff, 1e-2 * mag + 1e-6) << label << " n=" << n << " variant " << v;
      }
    }
    cusparseDestroySpMat(csr16);
    cusparseDestroySpMat(csr32);
    if (bell) cusparseDestroySpMat(bell);
  }
  std::map<int64_t, std::pair<double, int>> geo;
  for (const Row& r : rows) {
    if (r.spec.rfind("blocks:", 0) == 0 && r.spec.find("1-SA") == std::string::npos) continue;  // unreordered
    geo[r.n].first += std::log(r.best / r.tc);
    geo[r.n].second += 1;
  }
  for (const auto& [n, g] : geo)
    std::printf("geomean speedup over the best cuSPARSE variant, N=%lld: %.2fx (%d matrices; scrambled blocks "
                "without reordering left out)\n", (long long)n,
                std::exp(g.first / g.second), g.second);
  cusparseDestroy(handle);
  cudaStreamDestroy(stream);
}

}  // namespace

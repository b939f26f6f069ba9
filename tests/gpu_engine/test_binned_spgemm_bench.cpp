// Timings of the binned SpGEMM against cuSPARSE (not a correctness test): runs only with
// SPARSETC_BENCH=1 on a device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='BinnedSpgemmBench.*'
// C = A * A in fp32 on generated matrices and real ones (SPARSETC_BENCH_SPECS overrides the list,
// comma separated: gen/generators.hpp syntax, or a name in SPARSETC_MATRIX_DIR). Each time is the median of SPARSETC_BENCH_RUNS (default
// 10) runs after one warm-up, every run the whole product from the caller's int32 CSR arrays to C
// in int32 CSR:
//  - cuSPARSE ALG1/ALG2/ALG3 (CUDALibrarySamples flow: workEstimation, [estimateMemory with chunk
//    fraction 0.2], compute, C allocated, copy), buffers and C from the device's stream-ordered
//    pool kept warm (release threshold raised): its best case;
//  - binned: operand normalisation, stage 1, stages 2-4, C's offsets/indices in int32, every
//    allocation from a warm stream-ordered pool (the handle's default) included;
//  - numeric: the numeric-only kernel on the kept pattern (AMG reuse);
//  - with SPARSETC_BENCH_ESC=1 also binned with the merge rows in turn on the caller's stream (not
//    beside the other bins), with the ESC sort only, without hash tables (the
//    accumulator rule of bins.hpp, measured), with the accumulators' rules relaxed (rows over short
//    rows of B, bin 33 too, hashing from 2:1 or always), with the short rows in registers, with bin 33 a block
//    per row (esc.cu instead of middle_rows.cu), with bin 34's rows of u <= 256 a block per row,
//    with the short rows a warp per row and with the short rows all in the heap (the rule of BinnedSpgemmOptions::short_group_warps off), and with
//    the merge rows all in the merge path (no global dense windows, no block dense accumulator), without
//    the block dense accumulator, with it from bin 34, with 200 KB of shared memory per block, and
//    with heaps of up to 8 and of up to 32 nodes (BinnedSpgemmOptions::heap_largest_capacity), and
//    with the heap's rows in the heap rather than sorted in registers, with bin 33's short rows
//    sorted however few, and with the groups' rule at 8192 warps. SPARSETC_BENCH_ESC=a|b runs
//    only the variants whose names contain a or b.
// Peak memory: ours from the allocator's accounting (above what existed before the run), cuSPARSE's
// its buffers (buffer3 counted while it lives) plus C.
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "gpu/allocators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "io/matrix_market.hpp"
#include "spgemm_bench_support.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using namespace spgemm_bench;

std::vector<std::string> specs() {
  const char* env = std::getenv("SPARSETC_BENCH_SPECS");
  std::string list = env ? env
                         : "bcsstk17,bcsstk33,poisson2d5:1024,poisson3d27:64,band:16384:64,uniform:200000:16,rmat:16:16,"
                           "band:16384:512";
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string s; std::getline(ss, s, ',');)
    if (!s.empty()) out.push_back(s);
  return out;
}

TEST(BinnedSpgemmBench, AgainstCusparse) {
  if (const char* why = spgemm_bench::skip_reason()) GTEST_SKIP() << why;
  spgemm_bench::CusparseBench bench;
  ASSERT_TRUE(bench.ready) << "no stream or cuSPARSE handle";
  const int runs = bench.runs;
  const cudaDeviceProp& prop = bench.prop;
  cudaStream_t stream = bench.stream;
  cusparseHandle_t handle = bench.handle;
  sd::PoolAllocator our_pool(0);
  sd::TrackingAllocator tracking;
  tracking.set_source(&our_pool);
  const sd::GpuContext ctx{stream, &tracking};

  std::printf("\nBinned SpGEMM vs cuSPARSE, C = A*A, fp32, %s, median of %d\n", prop.name, runs);
  std::printf("%-22s %12s %11s %9s %9s %9s %9s %9s %7s %9s %9s %9s\n", "matrix", "products", "nnz(C)", "alg1 ms",
              "alg2 ms", "alg3 ms", "binned", "numeric", "speedup", "peak MB", "alg3 MB", "GFLOP/s");
  double log_sum = 0;
  int counted = 0;
  double worst = 1e30;
  const std::string esc_variants = std::getenv("SPARSETC_BENCH_ESC") ? std::getenv("SPARSETC_BENCH_ESC") : "";
  auto variant_chosen = [&esc_variants](const std::string& name) {
    if (esc_variants == "1") return true;
    for (size_t from = 0; from < esc_variants.size();) {
      const size_t bar = std::min(esc_variants.find('|', from), esc_variants.size());
      if (bar > from && name.find(esc_variants.substr(from, bar - from)) != std::string::npos) return true;
      from = bar + 1;
    }
    return false;
  };
  for (const std::string& spec : specs()) {
    sd::CsrMatrix<double> host;
    if (spec.find(':') == std::string::npos) {
      const std::string path = sparsetc_test::matrix_path(spec);
      if (path.empty()) {
        std::printf("%-22s (not in SPARSETC_MATRIX_DIR)\n", spec.c_str());
        continue;
      }
      host = sd::coo_to_csr(sd::read_matrix_market(path), SPARSETC_DUPLICATES_SUM);
      if (host.rows != host.cols) {  // C = A * A
        std::printf("%-22s (not square: %lld x %lld)\n", spec.c_str(), (long long)host.rows, (long long)host.cols);
        continue;
      }
    } else {
      host = sd::generate(spec, 42);
    }
    DeviceInput in;
    in.n = host.rows;
    in.nnz = host.nnz();
    std::vector<int> rp(host.row_ptr.begin(), host.row_ptr.end()), ci(host.col_idx.begin(), host.col_idx.end());
    std::vector<float> v(host.values.begin(), host.values.end());
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.row_ptr), rp.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.col), ci.size() * 4 + 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.val32), v.size() * 4 + 4), cudaSuccess);
    cudaMemcpy(in.row_ptr, rp.data(), rp.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(in.col, ci.data(), ci.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(in.val32, v.data(), v.size() * 4, cudaMemcpyHostToDevice);

    double cs_ms[3], cs_peak[3];
    int64_t cs_nnz = -1;
    const cusparseSpGEMMAlg_t algs[3] = {CUSPARSE_SPGEMM_ALG1, CUSPARSE_SPGEMM_ALG2, CUSPARSE_SPGEMM_ALG3};
    for (int q = 0; q < 3; ++q) {
      CusparseRun run{handle, stream, algs[q], in};
      cs_ms[q] = median_ms(stream, runs, std::ref(run));
      cs_peak[q] = run.peak_bytes;
      cudaStreamSynchronize(stream);
      cudaGetLastError();
      if (cs_ms[q] > 0) cs_nnz = run.nnz_c;
    }

    const sd::RawSparse raw{SPARSETC_FORMAT_CSR, in.n,   in.n,   in.nnz, in.row_ptr, in.col, in.val32,
                            SPARSETC_INDEX_32,   SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32};
    int64_t products = 0, nnz_c = 0;
    double peak = 0;
    sd::BinnedSpgemmOptions variant;
    auto ours = [&]() -> bool {
      const int64_t before = tracking.current_bytes();
      tracking.reset_peak();
      {
        sd::DeviceCsr<float> a = sd::binned::prepare_operand<float>(raw, SPARSETC_DUPLICATES_ERROR, false, ctx);
        sd::BinnedSpgemm<float> spgemm(a.view(), a.view(), variant, ctx);
        sd::DeviceCsr<float> c = spgemm.multiply();
        sd::DeviceBuffer offsets = sd::binned::export_offsets(c.row_ptr.as<const int64_t>(), c.rows, SPARSETC_INDEX_32,
                                                              0, ctx);
        sd::DeviceBuffer indices = sd::binned::export_indices(c.col_idx.as<const int32_t>(), c.nnz, 0, ctx);
        products = spgemm.products();
        nnz_c = c.nnz;
      }
      peak = std::max(peak, double(tracking.peak_bytes() - before));
      return true;
    };
    // The variants (SPARSETC_BENCH_ESC=1): a name and what it changes from the default options.
    using Variant = std::pair<const char*, std::function<void(sd::BinnedSpgemmOptions&)>>;
    const std::vector<Variant> variants = {
        {"merge rows in turn", [](auto& o) { o.overlap_merge_rows = false; }},
        {"binned without accumulators", [](auto& o) { o.esc_dense_windows = o.esc_hash_tables = false; }},
        {"without hash tables", [](auto& o) { o.esc_hash_tables = false; }},
        {"accumulators on short rows of B", [](auto& o) { o.accumulator_min_row_of_b = 0; }},
        {"accumulators from bin 33", [](auto& o) { o.accumulator_first_bin = sd::binned::kFirstEscBin; }},
        {"hash from 2:1", [](auto& o) { o.accumulator_min_compression = 2; }},
        {"hash every row, bins 34-36",
         [](auto& o) { o.accumulator_min_row_of_b = 0, o.accumulator_min_compression = 1; }},
        {"hash every row, bins 33-36",
         [](auto& o) {
           o.accumulator_min_row_of_b = 0, o.accumulator_min_compression = 1;
           o.accumulator_first_bin = sd::binned::kFirstEscBin;
         }},
        {"bin 34 a block per row", [](auto& o) { o.wide_rows_in_warps = false; }},
        {"short rows in registers", [](auto& o) { o.short_rows_in_registers = true; }},
        {"bin 33 a block per row", [](auto& o) { o.middle_rows_in_warps = false; }},
        {"short rows a warp per row", [](auto& o) { o.short_rows_in_warps = true; }},
        {"short rows all in the heap", [](auto& o) { o.short_group_warps = 0, o.heap_rows_sorted = false; }},
        {"merge rows without global windows", [](auto& o) { o.global_windows = o.block_dense = false; }},
        {"without the block dense accumulator", [](auto& o) { o.block_dense = false; }},
        {"block dense from bin 34", [](auto& o) { o.block_dense_first_bin = sd::binned::kFirstAccumulatorBin; }},
        {"block dense in 200 KB", [](auto& o) { o.block_dense_bytes = size_t(200) << 10; }},
        {"heaps of up to 8 nodes", [](auto& o) { o.heap_largest_capacity = 8; }},
        {"heaps of up to 32 nodes", [](auto& o) { o.heap_largest_capacity = 32; }},
        {"heaps in shared memory", [](auto& o) { o.heap_queue_in_registers = false; }},
        {"heap rows in the heap", [](auto& o) { o.heap_rows_sorted = false; }},
        {"bin 33 all in the warps", [](auto& o) { o.middle_rows_sorted = false; }},
        {"short rows and bin 33 all sorted", [](auto& o) { o.short_group_warps = o.middle_rows_sorted_from = 0; }},
        {"bin 33 sorted from 1 row", [](auto& o) { o.middle_rows_sorted_from = 0; }},
        {"groups up to 8192 warps", [](auto& o) { o.short_group_warps = 8192; }},
        {"short rows all sorted", [](auto& o) { o.short_group_warps = 0; }},
        {"short rows all sorted, heaps of up to 32 nodes",
         [](auto& o) { o.short_group_warps = 0, o.heap_largest_capacity = 32; }},
        {"one-warp chunks from 256 entries", [](auto& o) { o.block_dense_stream_min_entries = 256; }},
        {"one-warp chunks from 256, rows of B < 256",
         [](auto& o) { o.block_dense_stream_min_entries = o.block_dense_stream_long_row_of_b = 256; }},
        {"one-warp chunks from 64 entries", [](auto& o) { o.block_dense_stream_min_entries = 64; }},
    };
    std::string variant_times;
    for (const Variant& v : variants)
      if (variant_chosen(v.first)) {
        variant = {};
        v.second(variant);
        char text[96];
        std::snprintf(text, sizeof text, "%s %.3f ms, ", v.first, median_ms(stream, runs, ours));
        variant_times += text;
      }
    variant = {};
    peak = 0;
    const double our_ms = median_ms(stream, runs, ours);

    // One run timed stage by stage, then numeric-only on its pattern.
    cudaEvent_t ev[4];
    for (cudaEvent_t& e : ev) cudaEventCreate(&e);
    cudaEventRecord(ev[0], stream);
    sd::DeviceCsr<float> a = sd::binned::prepare_operand<float>(raw, SPARSETC_DUPLICATES_ERROR, false, ctx);
    cudaEventRecord(ev[1], stream);
    sd::BinnedSpgemmOptions timed;
    timed.time_stages = true;
    sd::BinnedSpgemm<float> spgemm(a.view(), a.view(), timed, ctx);
    cudaEventRecord(ev[2], stream);
    sd::DeviceCsr<float> c = spgemm.multiply();
    cudaEventRecord(ev[3], stream);
    cudaEventSynchronize(ev[3]);
    float prepare_ms = 0, bound_ms = 0, multiply_ms = 0;
    cudaEventElapsedTime(&prepare_ms, ev[0], ev[1]);
    cudaEventElapsedTime(&bound_ms, ev[1], ev[2]);
    cudaEventElapsedTime(&multiply_ms, ev[2], ev[3]);
    for (cudaEvent_t e : ev) cudaEventDestroy(e);
    const auto& st = spgemm.stats();
    std::printf("    %s: prepare %.3f, bound+plan %.3f, multiply %.3f [binning %.3f heap %.3f esc %.3f merge %.3f "
                "arrange %.3f] ms; rows heap/esc/merge %lld/%lld/%lld (esc dense/hash/left %lld/%lld/%lld), grow "
                "rounds %lld, panels %lld, block dense passes %lld\n",
                spec.c_str(), prepare_ms, bound_ms, multiply_ms, st.stage_ms[sd::kStageBinning],
                st.stage_ms[sd::kStageHeap], st.stage_ms[sd::kStageEsc], st.stage_ms[sd::kStageMerge],
                st.stage_ms[sd::kStageArrange], [&] {
                  long long h = 0;
                  for (int k = 2; k <= 32; ++k) h += st.bin_rows[size_t(k)];
                  return h;
                }(),
                (long long)(st.bin_rows[33] + st.bin_rows[34] + st.bin_rows[35] + st.bin_rows[36]),
                (long long)st.bin_rows[37], (long long)st.esc_paths[0], (long long)st.esc_paths[1],
                (long long)st.esc_paths[2], (long long)st.grow_rounds, (long long)st.panels,
                (long long)st.block_dense_passes);
    if (!variant_times.empty()) std::printf("    %s: %sdefault %.3f ms\n", spec.c_str(), variant_times.c_str(), our_ms);
    const double numeric_ms = median_ms(stream, runs, [&] {
      sd::binned_numeric(a.view(), a.view(), c.view(), c.values.as<float>(), ctx);
      return true;
    });
    cudaStreamSynchronize(stream);

    double best = -1;
    for (double t : cs_ms)
      if (t > 0 && (best < 0 || t < best)) best = t;
    const double speedup = best > 0 ? best / our_ms : 0;
    if (best > 0) {
      log_sum += std::log(speedup);
      ++counted;
      worst = std::min(worst, speedup);
      EXPECT_EQ(nnz_c, cs_nnz) << spec << ": nnz(C) differs from cuSPARSE's";
    }
    auto ms = [](double t) {
      char b[32];
      if (t > 0) std::snprintf(b, sizeof b, "%9.3f", t);
      else std::snprintf(b, sizeof b, "%9s", "fail");
      return std::string(b);
    };
    std::printf("%-22s %12lld %11lld %s %s %s %9.3f %9.3f %7.2f %9.1f %9.1f %9.1f\n", spec.c_str(),
                (long long)products, (long long)nnz_c, ms(cs_ms[0]).c_str(), ms(cs_ms[1]).c_str(),
                ms(cs_ms[2]).c_str(), our_ms, numeric_ms, speedup, peak / 1e6, cs_peak[2] / 1e6,
                2.0 * double(products) / (our_ms * 1e6));
    std::fflush(stdout);
    cudaFree(in.row_ptr);
    cudaFree(in.col);
    cudaFree(in.val32);
  }
  if (counted > 0)
    std::printf("geometric mean speedup over the best cuSPARSE: %.2fx (lowest %.2fx) over %d matrices\n",
                std::exp(log_sum / counted), worst, counted);
}

// The AMG Galerkin product P^T (A P) for the 3D 27-point Poisson matrix (64^3) with the
// piecewise-constant prolongator of 3x3x3 aggregates: the full product (both SpGEMMs with all their
// allocations, from canonical device CSR) against numeric-only reuse of both patterns.
TEST(BinnedSpgemmBench, GalerkinReuse) {
  if (const char* why = spgemm_bench::skip_reason()) GTEST_SKIP() << why;
  const int runs = spgemm_bench::runs_from_environment();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  sd::PoolAllocator pool(0);
  const sd::GpuContext ctx{stream, &pool};
  const int64_t g = 64, ga = (g + 2) / 3;
  const sd::CsrMatrix<double> A = sd::generate_poisson3d27(g, 42);
  sd::CsrMatrix<double> P;
  P.rows = g * g * g;
  P.cols = ga * ga * ga;
  P.row_ptr.resize(size_t(P.rows + 1));
  for (int64_t z = 0, i = 0; z < g; ++z)
    for (int64_t y = 0; y < g; ++y)
      for (int64_t x = 0; x < g; ++x, ++i) {
        P.col_idx.push_back((z / 3 * ga + y / 3) * ga + x / 3);
        P.values.push_back(1.0);
        P.row_ptr[size_t(i + 1)] = i + 1;
      }
  const sd::CsrMatrix<double> Pt = sd::transpose(P);
  for (int precision = 0; precision < 2; ++precision) {
    auto run = [&](auto zero) {
      using V = decltype(zero);
      auto up = [&](const sd::CsrMatrix<double>& m) {
        sd::CsrMatrix<V> c;
        c.rows = m.rows;
        c.cols = m.cols;
        c.row_ptr = m.row_ptr;
        c.col_idx = m.col_idx;
        c.values.assign(m.values.begin(), m.values.end());
        return sd::csr_to_device(c, ctx);
      };
      const sd::DeviceCsr<V> da = up(A), dp = up(P), dpt = up(Pt);
      sd::BinnedSpgemmOptions options;
      auto full = [&] {
        sd::BinnedSpgemm<V> first(da.view(), dp.view(), options, ctx);
        const sd::DeviceCsr<V> ap = first.multiply();
        sd::BinnedSpgemm<V> second(dpt.view(), ap.view(), options, ctx);
        const sd::DeviceCsr<V> rap = second.multiply();
        return true;
      };
      options.heap_largest_capacity = 32;  // the heap for all short rows, as before the warp rule
      options.heap_rows_sorted = false;
      const double all_heap_ms = median_ms(stream, runs, full);
      options = {};
      const double full_ms = median_ms(stream, runs, full);
      sd::BinnedSpgemm<V> first(da.view(), dp.view(), {}, ctx);
      sd::DeviceCsr<V> ap = first.multiply();
      sd::BinnedSpgemm<V> second(dpt.view(), ap.view(), {}, ctx);
      sd::DeviceCsr<V> rap = second.multiply();
      const double numeric_ms = median_ms(stream, runs, [&] {
        sd::binned_numeric(da.view(), dp.view(), ap.view(), static_cast<V*>(ap.values.data()), ctx);
        sd::binned_numeric(dpt.view(), ap.view(), rap.view(), static_cast<V*>(rap.values.data()), ctx);
        return true;
      });
      std::printf("Galerkin P^T(AP), poisson3d27:64, 3x3x3 aggregates, %s: nnz(AP) %lld, nnz(RAP) %lld, full %.3f ms, "
                  "numeric-only %.3f ms (%.2fx); full with every short row in the heap %.3f ms\n",
                  sizeof(V) == 8 ? "fp64" : "fp32", (long long)ap.nnz, (long long)rap.nnz, full_ms, numeric_ms,
                  full_ms / numeric_ms, all_heap_ms);
      std::fflush(stdout);
    };
    if (precision == 0) run(0.0f);
    else run(0.0);
  }
  cudaStreamDestroy(stream);
}

}  // namespace

// Timings and accuracy of the tSparse SpGEMM against cuSPARSE and the binned path (not a
// correctness test): runs only with SPARSETC_BENCH=1 on a device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='TsparseSpgemmBench.*'
// C = A * A on real matrices (SPARSETC_MATRIX_DIR; SPARSETC_BENCH_MATRICES overrides the list) and
// generated ones (SPARSETC_BENCH_SPECS), values random in +-[0.5, 1.5]. Each time is the median of
// SPARSETC_BENCH_RUNS (default 10) runs after one warm-up, CUDA events on one stream:
//  - cuSPARSE: best of ALG1/ALG2/ALG3 in fp32 (for the fp16/bf16/CUDA-core modes) and in fp64 (for
//    the fp64 mode), the whole flow with buffers and C from a warm stream-ordered pool;
//  - binned (fp32): operand normalisation, all stages, C's int32 offsets and indices;
//  - tSparse per mode: the whole product from the caller's int32 CSR to C's int32 CSR - operand
//    normalisation, tile conversion, pair count, task list, counting, C's allocation, multiply,
//    compaction, export - every allocation included; "conv" is the tile conversion alone (from the
//    caller's CSR to tiles), reported separately and as a share of the whole.
// SMAPE (paper Eq. 3) of each mode against the float64 host product, over the union of entries,
// and on the 0/1 pattern (must be 0). The feature columns (nnz(A), average row, nnz per tile,
// products per C entry) are what the AUTO rule of docs/spgemm.md is fitted on.
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/cpu_kernels.hpp"
#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "gpu/allocators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"
#include "engine/spgemm_plan.hpp"
#include "io/matrix_market.hpp"
#include "spgemm_bench_support.hpp"
#include "test_support.hpp"

namespace {

namespace sd = sparsetc::detail;
using namespace spgemm_bench;

double best_cusparse(cusparseHandle_t handle, cudaStream_t stream, const DeviceInput& in, bool fp64, int runs) {
  double best = -1;
  for (cusparseSpGEMMAlg_t alg : {CUSPARSE_SPGEMM_ALG1, CUSPARSE_SPGEMM_ALG2, CUSPARSE_SPGEMM_ALG3}) {
    CusparseRun run{handle, stream, alg, in, fp64};
    const double t = median_ms(stream, runs, std::ref(run));
    cudaStreamSynchronize(stream);
    cudaGetLastError();
    if (t > 0 && (best < 0 || t < best)) best = t;
  }
  return best;
}

std::vector<std::string> list_from(const char* variable, const char* fallback) {
  const char* env = std::getenv(variable);
  std::stringstream ss(env ? env : fallback);
  std::vector<std::string> out;
  for (std::string s; std::getline(ss, s, ',');)
    if (!s.empty()) out.push_back(s);
  return out;
}

struct Case {
  std::string name;
  sd::CsrMatrix<double> m;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string& name :
       list_from("SPARSETC_BENCH_MATRICES", "cage11,bcsstk33,bcsstk17,ca-AstroPh,delaunay_n16,rgg_n_2_15_s0,"
                                            "usroads-48,Dubcova1,wiki-Vote,EX5,memplus")) {
    const std::string path = sparsetc_test::matrix_path(name);
    if (path.empty()) continue;
    out.push_back({name, sd::coo_to_csr(sd::read_matrix_market(path), SPARSETC_DUPLICATES_SUM)});
  }
  for (const std::string& spec :
       list_from("SPARSETC_BENCH_SPECS", "poisson2d5:1024,poisson3d27:48,band:16384:64,blocks:8192:64:0.1:0.2,"
                                         "uniform:200000:16,rmat:14:16"))
    out.push_back({spec, sd::generate(spec, 42)});
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (Case& c : out)
    for (double& v : c.m.values) v = double(float((rng() & 1 ? 1 : -1) * u(rng)));
  return out;
}

// SMAPE (paper Eq. 3) in percent over the union of the entries of the two matrices (an entry
// missing from one counts as 0 there); entries zero in both are skipped.
template <typename V>
double smape(const sd::CsrMatrix<V>& got, const sd::CsrMatrix<double>& want) {
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < want.rows; ++i) {
    int64_t p = got.row_ptr[size_t(i)], q = want.row_ptr[size_t(i)];
    const int64_t pe = got.row_ptr[size_t(i + 1)], qe = want.row_ptr[size_t(i + 1)];
    while (p < pe || q < qe) {
      double x = 0, y = 0;
      if (q >= qe || (p < pe && got.col_idx[size_t(p)] < want.col_idx[size_t(q)])) {
        x = double(got.values[size_t(p++)]);
      } else if (p >= pe || want.col_idx[size_t(q)] < got.col_idx[size_t(p)]) {
        y = want.values[size_t(q++)];
      } else {
        x = double(got.values[size_t(p++)]);
        y = want.values[size_t(q++)];
      }
      if (x == 0 && y == 0) continue;
      sum += std::fabs(x - y) / (std::fabs(x) + std::fabs(y));
      ++n;
    }
  }
  return n ? 100.0 * sum / double(n) : 0.0;
}

struct Mode {
  const char* name;
  sd::TileArithmetic arithmetic;
  sd::TileCountMethod count;
};

const Mode kModes[] = {{"fp16", sd::TileArithmetic::kF16, sd::TileCountMethod::kBitwise},
                       {"fp16/tccount", sd::TileArithmetic::kF16, sd::TileCountMethod::kTensorCore},
                       {"bf16", sd::TileArithmetic::kBf16, sd::TileCountMethod::kBitwise},
                       {"fp16split", sd::TileArithmetic::kF16Split, sd::TileCountMethod::kBitwise},
                       {"bf16split", sd::TileArithmetic::kBf16Split, sd::TileCountMethod::kBitwise},
                       {"cudacore", sd::TileArithmetic::kCudaCores, sd::TileCountMethod::kBitwise},
                       {"fp64", sd::TileArithmetic::kF64, sd::TileCountMethod::kBitwise}};

struct ModeResult {
  double ms = -1, conversion_ms = -1, smape = -1, smape01 = -1;
  int64_t nnz = -1;
};

template <typename V>
ModeResult run_mode(const Mode& mode, const sd::RawSparse& raw, const sd::CsrMatrix<double>& host,
                    const sd::CsrMatrix<double>& want, const sd::CsrMatrix<double>& want01, const DeviceInput& in,
                    int runs, const sd::GpuContext& ctx, sd::TsparseSpgemmStats* stats) {
  ModeResult r;
  auto tiles = [&](const sd::RawSparse& from) {
    const sd::DeviceCsr<V> a = sd::binned::prepare_operand<V>(from, SPARSETC_DUPLICATES_ERROR, false, ctx);
    return sd::make_tile_operand(a.view(), mode.arithmetic, "A", ctx);
  };
  sd::TsparseSpgemmOptions options;
  options.count = mode.count;
  auto whole = [&](const sd::RawSparse& from) {
    const sd::TileOperand a = tiles(from);
    sd::TsparseSpgemm<V> spgemm(a, a, options, ctx);
    spgemm.symbolic();
    sd::DeviceCsr<V> c = spgemm.multiply();
    sd::DeviceBuffer offsets =
        sd::binned::export_offsets(c.row_ptr.template as<const int64_t>(), c.rows, SPARSETC_INDEX_32, 0, ctx);
    sd::DeviceBuffer indices = sd::binned::export_indices(c.col_idx.template as<const int32_t>(), c.nnz, 0, ctx);
    return c;
  };
  try {
    r.conversion_ms = median_ms(ctx.stream, runs, [&] {
      tiles(raw);
      return true;
    });
    r.ms = median_ms(ctx.stream, runs, [&] {
      whole(raw);
      return true;
    });
    const sd::DeviceCsr<V> c = whole(raw);
    r.nnz = c.nnz;
    r.smape = smape(sd::csr_to_host(c.view(), ctx.stream), want);
    // The same product on the 0/1 pattern (values 1).
    std::vector<float> ones32(size_t(host.nnz()), 1.0f);
    std::vector<double> ones64(size_t(host.nnz()), 1.0);
    sd::DeviceBuffer ones(size_t(host.nnz()) * sizeof(double) + 8, ctx);
    sd::copy_host_to_device(ones.data(), raw.value_type == SPARSETC_VALUE_F64 ? static_cast<const void*>(ones64.data())
                                                                              : static_cast<const void*>(ones32.data()),
                            size_t(host.nnz()) * (raw.value_type == SPARSETC_VALUE_F64 ? 8 : 4), ctx.stream);
    sd::RawSparse pattern = raw;
    pattern.values = ones.data();
    const sd::DeviceCsr<V> c01 = whole(pattern);
    r.smape01 = smape(sd::csr_to_host(c01.view(), ctx.stream), want01);
    if (stats) {
      const sd::TileOperand a = tiles(raw);
      sd::TsparseSpgemmOptions timed = options;
      timed.time_stages = true;
      sd::TsparseSpgemm<V> spgemm(a, a, timed, ctx);
      spgemm.symbolic();
      spgemm.multiply();
      *stats = spgemm.stats();
    }
  } catch (const std::exception& e) {
    std::printf("    %s: %s\n", mode.name, e.what());
    cudaStreamSynchronize(ctx.stream);
    cudaGetLastError();
    r.ms = -1;
  }
  (void)in;
  return r;
}

TEST(TsparseSpgemmBench, AgainstCusparseAndBinned) {
  if (const char* why = spgemm_bench::skip_reason()) GTEST_SKIP() << why;
  spgemm_bench::CusparseBench bench;
  ASSERT_TRUE(bench.ready) << "no stream or cuSPARSE handle";
  const int runs = bench.runs;
  const cudaDeviceProp& prop = bench.prop;
  cudaStream_t stream = bench.stream;
  cusparseHandle_t handle = bench.handle;
  sd::PoolAllocator our_pool(0);
  const sd::GpuContext ctx{stream, &our_pool};

  std::printf("\ntSparse SpGEMM, C = A*A, %s, median of %d; times in ms; ratio = reference time / tSparse time "
              "(fp16/bf16/cudacore vs cuSPARSE fp32, fp64 vs cuSPARSE fp64)\n",
              prop.name, runs);
  std::printf("%-24s %9s %7s %6s %11s %8s %8s %8s %8s\n", "matrix", "nnz(A)", "avg row", "nz/tile", "products",
              "prod/nzC", "cs f32", "cs f64", "binned");
  constexpr int kModeCount = int(sizeof kModes / sizeof kModes[0]);
  std::vector<double> log_cs(kModeCount, 0), log_binned(kModeCount, 0);
  std::vector<int> counted(kModeCount, 0), counted_binned(kModeCount, 0), counted_rule(kModeCount, 0);
  std::vector<double> log_rule_cs(kModeCount, 0), log_rule_binned(kModeCount, 0);
  int rule_right = 0, rule_total = 0;
  double auto_worst = 1e30;
  for (const Case& test : cases()) {
    const sd::CsrMatrix<double>& host = test.m;
    if (host.rows != host.cols) continue;
    DeviceInput in;
    in.n = host.rows;
    in.nnz = host.nnz();
    std::vector<int> rp(host.row_ptr.begin(), host.row_ptr.end()), ci(host.col_idx.begin(), host.col_idx.end());
    std::vector<float> v32(host.values.begin(), host.values.end());
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.row_ptr), rp.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.col), ci.size() * 4 + 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.val32), v32.size() * 4 + 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in.val64), host.values.size() * 8 + 8), cudaSuccess);
    cudaMemcpy(in.row_ptr, rp.data(), rp.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(in.col, ci.data(), ci.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(in.val32, v32.data(), v32.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(in.val64, host.values.data(), host.values.size() * 8, cudaMemcpyHostToDevice);

    const double cs32 = best_cusparse(handle, stream, in, false, runs);
    const double cs64 = best_cusparse(handle, stream, in, true, runs);
    const sd::RawSparse raw32{SPARSETC_FORMAT_CSR, in.n,   in.n,   in.nnz, in.row_ptr, in.col, in.val32,
                              SPARSETC_INDEX_32,   SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32};
    sd::RawSparse raw64 = raw32;
    raw64.values = in.val64;
    raw64.value_type = SPARSETC_VALUE_F64;
    const double binned = median_ms(stream, runs, [&] {
      sd::DeviceCsr<float> a = sd::binned::prepare_operand<float>(raw32, SPARSETC_DUPLICATES_ERROR, false, ctx);
      sd::BinnedSpgemm<float> spgemm(a.view(), a.view(), {}, ctx);
      sd::DeviceCsr<float> c = spgemm.multiply();
      sd::DeviceBuffer offsets =
          sd::binned::export_offsets(c.row_ptr.as<const int64_t>(), c.rows, SPARSETC_INDEX_32, 0, ctx);
      sd::DeviceBuffer indices = sd::binned::export_indices(c.col_idx.as<const int32_t>(), c.nnz, 0, ctx);
      return true;
    });

    const sd::CsrMatrix<double> want = sd::cpu_spgemm(host, host, 0);
    sd::CsrMatrix<double> ones = host;
    std::fill(ones.values.begin(), ones.values.end(), 1.0);
    const sd::CsrMatrix<double> want01 = sd::cpu_spgemm(ones, ones, 0);
    int64_t products = 0;
    for (int64_t p = 0; p < host.nnz(); ++p) {
      const int64_t k = host.col_idx[size_t(p)];
      products += host.row_ptr[size_t(k + 1)] - host.row_ptr[size_t(k)];
    }
    const auto tiles = sd::csr_to_bitmap_tiles(host);
    std::printf("%-24s %9lld %7.1f %6.2f %11lld %8.2f %8.3f %8.3f %8.3f\n", test.name.c_str(), (long long)host.nnz(),
                double(host.nnz()) / double(std::max<int64_t>(host.rows, 1)),
                double(host.nnz()) / double(std::max<int64_t>(tiles.tiles(), 1)), (long long)products,
                double(products) / double(std::max<int64_t>(want.nnz(), 1)), cs32, cs64, binned);
    const double per_tile = double(host.nnz()) / double(std::max<int64_t>(tiles.tiles(), 1));
    const double avg_row = double(host.nnz()) / double(std::max<int64_t>(host.rows, 1));
    const bool rule = double(host.nnz()) >= sd::kTsparseAutoMinNnz && avg_row >= sd::kTsparseAutoMinRow &&
                      per_tile >= sd::kTsparseAutoMinPerTile;
    double fp16_ms = -1;
    for (int q = 0; q < kModeCount; ++q) {
      const Mode& mode = kModes[q];
      sd::TsparseSpgemmStats stats;
      const bool fp64 = mode.arithmetic == sd::TileArithmetic::kF64;
      const ModeResult r = fp64 ? run_mode<double>(mode, raw64, host, want, want01, in, runs, ctx, &stats)
                                : run_mode<float>(mode, raw32, host, want, want01, in, runs, ctx, &stats);
      if (r.ms <= 0) continue;
      if (q == 0) fp16_ms = r.ms;
      const double reference = fp64 ? cs64 : cs32;
      const double vs_cs = reference > 0 ? reference / r.ms : 0, vs_binned = binned > 0 ? binned / r.ms : 0;
      if (vs_cs > 0) {
        log_cs[size_t(q)] += std::log(vs_cs);
        ++counted[size_t(q)];
        if (rule) {
          log_rule_cs[size_t(q)] += std::log(vs_cs);
          ++counted_rule[size_t(q)];
        }
      }
      if (vs_binned > 0 && !fp64) {
        log_binned[size_t(q)] += std::log(vs_binned);
        ++counted_binned[size_t(q)];
        if (rule) log_rule_binned[size_t(q)] += std::log(vs_binned);
      }
      const auto& s = stats.stage_ms;
      std::printf("    %-13s %8.3f ms  vs cuSPARSE %5.2fx  vs binned %5.2fx  conv %.3f ms (%4.1f%%)  SMAPE %.4f%% "
                  "(0/1: %.4f%%)  pairs %lld tilesC %lld nnzC %lld/%lld  [tasks %.3f count %.3f struct %.3f mult %.3f "
                  "compact %.3f]\n",
                  mode.name, r.ms, vs_cs, vs_binned, r.conversion_ms, 100.0 * r.conversion_ms / r.ms, r.smape,
                  r.smape01, (long long)stats.pairs, (long long)stats.c_tiles, (long long)r.nnz,
                  (long long)stats.structural_nnz, s[sd::kTsparseTasks], s[sd::kTsparseCount],
                  s[sd::kTsparseStructure], s[sd::kTsparseMultiply], s[sd::kTsparseCompact]);
      std::fflush(stdout);
    }
    // The AUTO rule against the oracle (the faster of fp16 tSparse and binned), and AUTO's time
    // (the chosen path's) against the best cuSPARSE.
    const bool oracle = fp16_ms > 0 && binned > 0 && fp16_ms < binned;
    const double auto_ms = rule && fp16_ms > 0 ? fp16_ms : binned;
    if (fp16_ms > 0 && binned > 0) {
      ++rule_total;
      rule_right += rule == oracle;
    }
    if (cs32 > 0 && auto_ms > 0) auto_worst = std::min(auto_worst, cs32 / auto_ms);
    std::printf("    AUTO rule: %s, oracle: %s; AUTO vs cuSPARSE %.2fx\n", rule ? "tSparse" : "binned",
                oracle ? "tSparse" : "binned", cs32 > 0 && auto_ms > 0 ? cs32 / auto_ms : 0.0);
    cudaFree(in.row_ptr);
    cudaFree(in.col);
    cudaFree(in.val32);
    cudaFree(in.val64);
  }
  std::printf("AUTO rule (nnz(A) >= %.0f, avg row >= %.0f, nnz per tile >= %.0f) agrees with the oracle on %d of %d "
              "matrices; AUTO's lowest ratio to the best cuSPARSE %.2fx\n",
              sd::kTsparseAutoMinNnz, sd::kTsparseAutoMinRow, sd::kTsparseAutoMinPerTile, rule_right, rule_total,
              auto_worst);
  for (int q = 0; q < kModeCount; ++q)
    if (counted_rule[size_t(q)] > 0)
      std::printf("%-13s on the matrices the rule selects: geometric mean vs best cuSPARSE %.2fx, vs binned %.2fx "
                  "(%d matrices)\n",
                  kModes[q].name, std::exp(log_rule_cs[size_t(q)] / counted_rule[size_t(q)]),
                  std::exp(log_rule_binned[size_t(q)] / counted_rule[size_t(q)]), counted_rule[size_t(q)]);
  for (int q = 0; q < kModeCount; ++q)
    if (counted[size_t(q)] > 0)
      std::printf("%-13s geometric mean vs best cuSPARSE %.2fx (%d matrices), vs binned %.2fx\n", kModes[q].name,
                  std::exp(log_cs[size_t(q)] / counted[size_t(q)]), counted[size_t(q)],
                  counted_binned[size_t(q)] ? std::exp(log_binned[size_t(q)] / counted_binned[size_t(q)]) : 0.0);
}

}  // namespace

// Timings of the GPU conversions (not a correctness test): runs only with SPARSETC_BENCH=1 on a
// device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='GpuConvertBench.*'
// SPARSETC_BENCH_SPECS overrides the generator specs (comma separated, gen/generators.hpp syntax;
// "sym:" before a spec symmetrises its structure).
// Each line: the conversion, its median time over 7 runs (allocations from a warm stream-ordered
// pool and read-back syncs included), the bandwidth floor (every input byte read once, every output
// byte written once), the achieved fraction of SPARSETC_BENCH_PEAK GB/s (default 4300, a measured
// H200 copy), and cuSPARSE's time for the same job where it has one (int32 indices, outputs
// allocated beforehand; the block counts' read-back included).
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "formats/convert.hpp"
#include "gen/generators.hpp"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/device_memory.hpp"

namespace {

namespace sd = sparsetc::detail;

// Median milliseconds of `runs` calls after one warm-up; each call is followed by a sync.
// SPARSETC_BENCH_RUNS overrides the number of timed runs (1 under a profiler).
int bench_runs() {
  const char* r = std::getenv("SPARSETC_BENCH_RUNS");
  return r ? std::max(1, std::atoi(r)) : 7;
}

double time_ms(cudaStream_t stream, const std::function<void()>& f, int runs = bench_runs()) {
  f();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, stream);
    f();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A spec, or "sym:" and a spec for the structure of A + A^T (an undirected graph from R-MAT, say),
// A's values where it has the entry, A^T's elsewhere.
sd::CsrMatrix<double> generate_spec(const std::string& spec) {
  if (spec.rfind("sym:", 0) != 0) return sd::generate(spec, 42);
  const sd::CsrMatrix<double> A = sd::generate(spec.substr(4), 42), T = sd::transpose(A);
  sd::CsrMatrix<double> S;
  S.rows = A.rows;
  S.cols = A.cols;
  S.row_ptr.assign(1, 0);
  for (int64_t i = 0; i < A.rows; ++i) {
    int64_t a = A.row_ptr[size_t(i)], t = T.row_ptr[size_t(i)];
    const int64_t a_end = A.row_ptr[size_t(i + 1)], t_end = T.row_ptr[size_t(i + 1)];
    while (a < a_end || t < t_end) {
      const bool from_a = t == t_end || (a < a_end && A.col_idx[size_t(a)] <= T.col_idx[size_t(t)]);
      const int64_t col = from_a ? A.col_idx[size_t(a)] : T.col_idx[size_t(t)];
      S.col_idx.push_back(col);
      S.values.push_back(from_a ? A.values[size_t(a)] : T.values[size_t(t)]);
      if (from_a) {
        ++a;
        if (t < t_end && T.col_idx[size_t(t)] == col) ++t;
      } else {
        ++t;
      }
    }
    S.row_ptr.push_back(int64_t(S.col_idx.size()));
  }
  return S;
}

// SPARSETC_BENCH_ONLY: comma-separated section names (csc, capi, bcsr, bitmap, dcsr, tiled, vbr,
// permute, normalize, values) to time only those, e.g. under a profiler; all when unset.
bool wanted(const char* section) {
  const char* only = std::getenv("SPARSETC_BENCH_ONLY");
  if (!only) return true;
  std::stringstream in(only);
  for (std::string s; std::getline(in, s, ',');)
    if (s == section) return true;
  return false;
}

double peak_gbs() {
  const char* p = std::getenv("SPARSETC_BENCH_PEAK");
  return p ? std::atof(p) : 4300.0;
}

void report(const std::string& what, double ms, double bytes, double cusparse_ms = -1) {
  const double gbs = bytes / (ms * 1e6);
  std::printf("%-34s %9.3f ms  floor %8.1f MB  %7.0f GB/s  %5.1f%% of peak", what.c_str(), ms, bytes / 1e6, gbs,
              100.0 * gbs / peak_gbs());
  if (cusparse_ms >= 0) std::printf("  cuSPARSE %9.3f ms (x%.2f)", cusparse_ms, cusparse_ms / ms);
  std::printf("\n");
  std::fflush(stdout);
}

#define CUSPARSE_OK(call) ASSERT_EQ((call), CUSPARSE_STATUS_SUCCESS) << #call

TEST(GpuConvertBench, Timings) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    GTEST_SKIP() << "no CUDA device";
  }
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the conversions";
  std::vector<std::string> specs = {"poisson3d27:80", "band:1000000:6", "uniform:1000000:12", "rmat:20:14"};
  if (const char* env = std::getenv("SPARSETC_BENCH_SPECS")) {
    specs.clear();
    std::stringstream in(env);
    for (std::string s; std::getline(in, s, ',');) specs.push_back(s);
  }
  // Keep freed memory in the pool between runs (what a long-lived handle does).
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

  for (const std::string& spec : specs) {
    const auto t0 = std::chrono::steady_clock::now();
    const sd::CsrMatrix<double> A = generate_spec(spec);
    const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const sd::DeviceCsr<double> d = sd::csr_to_device(A, ctx);
    const auto v = d.view();
    const double rows = double(A.rows), cols = double(A.cols), nnz = double(A.nnz());
    const double csr_bytes = 8 * (rows + 1) + 12 * nnz;
    std::printf("\n%s: %lld x %lld, %lld entries (generated in %.1f s)\n", spec.c_str(), (long long)A.rows,
                (long long)A.cols, (long long)A.nnz(), gen_s);

    // cuSPARSE inputs: int32 offsets
    std::vector<int32_t> rp32(A.row_ptr.begin(), A.row_ptr.end());
    sd::DeviceBuffer d_rp32(rp32.size() * 4, ctx);
    sd::copy_host_to_device(d_rp32.data(), rp32.data(), rp32.size() * 4, stream);
    const int* csr_rp = d_rp32.as<const int>();
    const int* csr_ci = v.col_idx;
    const double* csr_val = v.values;
    const int m = int(A.rows), n = int(A.cols), nz = int(A.nnz());

    // ---- CSR -> CSC
    if (wanted("csc")) {
      sd::DeviceBuffer cp((A.cols + 1) * 4, ctx), ri(size_t(nz) * 4, ctx), cv(size_t(nz) * 8, ctx);
      size_t bytes = 0;
      CUSPARSE_OK(cusparseCsr2cscEx2_bufferSize(handle, m, n, nz, csr_val, csr_rp, csr_ci, cv.data(), cp.as<int>(),
                                                ri.as<int>(), CUDA_R_64F, CUSPARSE_ACTION_NUMERIC,
                                                CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
      sd::DeviceBuffer work(std::max<size_t>(bytes, 16), ctx);
      const double cus = time_ms(stream, [&] {
        cusparseCsr2cscEx2(handle, m, n, nz, csr_val, csr_rp, csr_ci, cv.data(), cp.as<int>(), ri.as<int>(),
                           CUDA_R_64F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                           work.data());
      });
      const double ms = time_ms(stream, [&] { sd::gpu_csr_to_csc(v, ctx); });
      bool took_mirror = false, took_local = false;
      {
        sd::gpuconv::TransposeOptions options;
        options.took_mirror = &took_mirror;
        options.took_local = &took_local;
        sd::DeviceBuffer p, i, x;
        sd::gpuconv::transpose_compressed(v.rows, v.cols, v.nnz, v.row_ptr, v.col_idx, v.values, p, i, x, ctx, options);
      }
      report(std::string("csr_to_csc (") + (took_mirror ? "mirror" : took_local ? "local" : "sort") + ")", ms,
             csr_bytes + 8 * (cols + 1) + 12 * nnz, cus);
      // The other engines on the same input, for comparison: the local transpose (mirror off), the
      // radix sort (both off) and the digit_sort.cuh passes.
      {
        sd::gpuconv::TransposeOptions options;
        options.mirror = false;
        const double t = time_ms(stream, [&] {
          sd::DeviceBuffer p, i, x;
          sd::gpuconv::transpose_compressed(v.rows, v.cols, v.nnz, v.row_ptr, v.col_idx, v.values, p, i, x, ctx,
                                            options);
        });
        report("  mirror off", t, csr_bytes + 8 * (cols + 1) + 12 * nnz, cus);
      }
      for (int bits : {0, 11, 7}) {
        sd::gpuconv::TransposeOptions options;
        options.mirror = false;
        options.local = false;
        options.digit_bits = bits;
        const double t = time_ms(stream, [&] {
          sd::DeviceBuffer p, i, x;
          sd::gpuconv::transpose_compressed(v.rows, v.cols, v.nnz, v.row_ptr, v.col_idx, v.values, p, i, x, ctx,
                                            options);
        });
        report(bits == 0 ? std::string("  radix sort") : "  digit passes of <= " + std::to_string(bits) + " bits", t,
               csr_bytes + 8 * (cols + 1) + 12 * nnz, cus);
      }
    }
    // ---- The C API's CSR -> CSC of int32/f32 arrays: the direct transpose, the general path
    // (normalise to int64/double, transpose, export) and cusparseCsr2cscEx2 in f32; the direct
    // path's arrays must equal cuSPARSE's.
    if (wanted("capi")) {
      std::vector<float> f32(A.values.begin(), A.values.end());
      sd::DeviceBuffer vals32(f32.size() * 4, ctx);
      sd::copy_host_to_device(vals32.data(), f32.data(), f32.size() * 4, stream);
      sd::DeviceBuffer cp((A.cols + 1) * 4, ctx), ri(size_t(nz) * 4, ctx), cv(size_t(nz) * 4, ctx);
      size_t bytes = 0;
      CUSPARSE_OK(cusparseCsr2cscEx2_bufferSize(handle, m, n, nz, vals32.data(), csr_rp, csr_ci, cv.data(),
                                                cp.as<int>(), ri.as<int>(), CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                                CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
      sd::DeviceBuffer work(std::max<size_t>(bytes, 16), ctx);
      const double cus = time_ms(stream, [&] {
        cusparseCsr2cscEx2(handle, m, n, nz, vals32.data(), csr_rp, csr_ci, cv.data(), cp.as<int>(), ri.as<int>(),
                           CUDA_R_32F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                           work.data());
      });
      sd::DeviceBuffer op, oi, ov;
      auto direct = [&] {
        sd::gpuconv::transpose_user_arrays(A.rows, A.cols, A.nnz(), csr_rp, SPARSETC_INDEX_32, csr_ci, 0,
                                           vals32.data(), 4, SPARSETC_INDEX_32, 0, op, oi, ov, ctx);
      };
      const double ms = time_ms(stream, direct);
      const double api_bytes = 4 * (rows + 1) + 8 * nnz + 4 * (cols + 1) + 8 * nnz;
      report("C API csr -> csc int32/f32", ms, api_bytes, cus);
      sd::RawSparse raw;
      raw.format = SPARSETC_FORMAT_CSR;
      raw.rows = A.rows;
      raw.cols = A.cols;
      raw.nnz = A.nnz();
      raw.offsets = csr_rp;
      raw.indices = csr_ci;
      raw.values = vals32.data();
      raw.offset_type = SPARSETC_INDEX_32;
      raw.index_type = SPARSETC_INDEX_32;
      raw.base = SPARSETC_BASE_ZERO;
      raw.value_type = SPARSETC_VALUE_F32;
      const double general = time_ms(stream, [&] {
        const sd::DeviceCsr<double> c = sd::gpu_normalize<double>(raw, SPARSETC_DUPLICATES_ERROR, ctx);
        const sd::DeviceCsc<double> t = sd::gpu_csr_to_csc(c.view(), ctx);
        sd::gpu_export_compressed<double>(t.cols, t.nnz, t.col_ptr.as<int64_t>(), t.row_idx.as<int32_t>(),
                                          t.values.as<double>(), SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                          SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32, ctx);
      });
      report("  general path (normalise, export)", general, api_bytes, cus);
      auto download = [&](const sd::DeviceBuffer& b, size_t count) {
        std::vector<int32_t> h(count);
        sd::copy_device_to_host(h.data(), b.data(), count * 4, stream);
        return h;
      };
      direct();
      EXPECT_TRUE(download(op, size_t(A.cols + 1)) == download(cp, size_t(A.cols + 1))) << spec << " col_ptr";
      EXPECT_TRUE(download(oi, size_t(nz)) == download(ri, size_t(nz))) << spec << " row_idx";
      EXPECT_TRUE(download(ov, size_t(nz)) == download(cv, size_t(nz))) << spec << " values";
    }
    // ---- BCSR and cuSPARSE csr2gebsr
    for (auto [h, w] : {std::pair{16, 8}, std::pair{16, 16}, std::pair{8, 8}}) {
      if (!wanted("bcsr")) break;
      const sd::DeviceBcsr<double> b = sd::gpu_csr_to_bcsr(v, h, w, ctx);
      const double blocks = double(b.blocks);
      const int mb = (m + h - 1) / h;
      cusparseMatDescr_t da, dc;
      cusparseCreateMatDescr(&da);
      cusparseCreateMatDescr(&dc);
      int buffer = 0;
      CUSPARSE_OK(cusparseDcsr2gebsr_bufferSize(handle, CUSPARSE_DIRECTION_ROW, m, n, da, csr_val, csr_rp, csr_ci, h,
                                                w, &buffer));
      sd::DeviceBuffer work(std::max<size_t>(size_t(buffer), 16), ctx), brp(size_t(mb + 1) * 4, ctx);
      sd::DeviceBuffer bci(size_t(b.blocks) * 4, ctx), bval(size_t(b.blocks) * h * w * 8, ctx);
      const double cus = time_ms(stream, [&] {
        int nnzb = 0;
        cusparseXcsr2gebsrNnz(handle, CUSPARSE_DIRECTION_ROW, m, n, da, csr_rp, csr_ci, dc, brp.as<int>(), h, w,
                              &nnzb, work.data());
        cusparseDcsr2gebsr(handle, CUSPARSE_DIRECTION_ROW, m, n, da, csr_val, csr_rp, csr_ci, dc, bval.as<double>(),
                           brp.as<int>(), bci.as<int>(), h, w, work.data());
      });
      cusparseDestroyMatDescr(da);
      cusparseDestroyMatDescr(dc);
      const double ms = time_ms(stream, [&] { sd::gpu_csr_to_bcsr(v, h, w, ctx); });
      const double out = 8 * (double(mb) + 1) + blocks * (4 + 8.0 * h * w);
      report("csr_to_bcsr " + std::to_string(h) + "x" + std::to_string(w) + " (" + std::to_string(b.blocks) + ")", ms,
             csr_bytes + out, cus);
      if (h == 16 && w == 8) {
        const double sort_ms = time_ms(stream, [&] {
          sd::gpuconv::find_block_columns(v.row_ptr, v.col_idx, v.rows, v.cols, v.nnz, h, nullptr, mb, h, w,
                                          sd::gpuconv::BlockListing::kInPlace, ctx);
        });
        report("  of which find_block_columns", sort_ms, 8 * (rows + 1) + 4 * nnz + 4 * blocks);
      }
    }
    // ---- the other formats
    if (wanted("bitmap")) {
      const sd::DeviceBitmapTiles<double> t = sd::gpu_csr_to_bitmap_tiles(v, ctx);
      const double ms = time_ms(stream, [&] { sd::gpu_csr_to_bitmap_tiles(v, ctx); });
      const double bitmap_bytes = csr_bytes + 8 * (rows / 8 + 2) + double(t.tiles) * 24 + 8 + 8 * nnz;
      report("csr_to_bitmap_tiles (" + std::to_string(t.tiles) + ")", ms, bitmap_bytes);
      // Every way in the same run (the quads' falls back to the tile rows' where a tile row is not
      // compact; the tasks' is the tile rows' without the sort of scattered tile rows).
      for (auto [way, name] : {std::pair{sd::BitmapWay::kQuads, "  by quads"},
                               std::pair{sd::BitmapWay::kTileRows, "  by tile rows"},
                               std::pair{sd::BitmapWay::kTasks, "  by tasks"}})
        report(name, time_ms(stream, [&, way = way] { sd::gpu_csr_to_bitmap_tiles(v, ctx, way); }), bitmap_bytes);
      const double find_ms = time_ms(stream, [&] {
        sd::gpuconv::find_block_columns(v.row_ptr, v.col_idx, v.rows, v.cols, v.nnz, 8, nullptr, (v.rows + 7) / 8, 8,
                                        8, sd::gpuconv::BlockListing::kInPlace, ctx);
      });
      report("  of which find_block_columns", find_ms, 8 * (rows + 1) + 4 * nnz + 4 * double(t.tiles));
    }
    if (wanted("dcsr")) {
      const sd::DeviceDcsr<double> t = sd::gpu_csr_to_dcsr(v, ctx);
      const double ms = time_ms(stream, [&] { sd::gpu_csr_to_dcsr(v, ctx); });
      report("csr_to_dcsr", ms, csr_bytes + 16 * double(t.nonempty_rows) + 8 + 12 * nnz);
    }
    for (int64_t sw : {int64_t(4096), int64_t(65536)}) {
      if (!wanted("tiled")) break;
      sd::gpuconv::TiledWay way{};
      sd::gpuconv::TiledOptions options;
      options.way = &way;
      const sd::DeviceTiledDcsr<double> t = sd::gpuconv::csr_to_tiled_dcsr(v, sw, ctx, options);
      const double ms = time_ms(stream, [&] { sd::gpu_csr_to_tiled_dcsr(v, sw, ctx); });
      const double tiled_bytes = csr_bytes + 8 * double(t.strips() + 1) + 12 * double(t.row_segments) + 8 + 12 * nnz;
      const char* names[] = {"windows", "segment sort", "entry sort"};
      report("csr_to_tiled_dcsr " + std::to_string(sw) + " (" + names[int(way)] + ")", ms, tiled_bytes);
      options.strip_windows = false;  // the way it takes without the windows (way set by each run)
      const double other = time_ms(stream, [&] { sd::gpuconv::csr_to_tiled_dcsr(v, sw, ctx, options); });
      report(std::string("  without the windows (") + names[int(way)] + ")", other, tiled_bytes);
    }
    if (wanted("vbr")) {
      std::vector<int64_t> groups{0};
      std::mt19937_64 rng(7);
      std::uniform_int_distribution<int64_t> size(8, 24);
      while (groups.back() < A.rows) groups.push_back(std::min<int64_t>(A.rows, groups.back() + size(rng)));
      const sd::DeviceVbr<double> t = sd::gpu_csr_to_vbr(v, groups, 16, ctx);
      const double ms = time_ms(stream, [&] { sd::gpu_csr_to_vbr(v, groups, 16, ctx); });
      report("csr_to_vbr 8..24 x 16", ms,
             csr_bytes + 16 * double(groups.size()) + 12 * double(t.blocks) + 8.0 * double(t.value_count));
    }
    if (wanted("permute")) {
      std::vector<int64_t> perm(size_t(A.rows));
      std::iota(perm.begin(), perm.end(), int64_t(0));
      std::shuffle(perm.begin(), perm.end(), std::mt19937_64(3));
      sd::DeviceBuffer dp(perm.size() * 8, ctx);
      sd::copy_host_to_device(dp.data(), perm.data(), perm.size() * 8, stream);
      const double ms = time_ms(stream, [&] { sd::gpu_permute_rows(v, dp.as<const int64_t>(), ctx); });
      report("permute_rows", ms, 2 * csr_bytes + 8 * rows);
    }
    // ---- normalisation: int32 one-based CSR; shuffled int32 COO
    if (wanted("normalize")) {
      sd::DeviceBuffer rp1((A.rows + 1) * 4, ctx), ci1(size_t(nz) * 4, ctx);
      std::vector<int32_t> r1(rp32), c1(A.col_idx.begin(), A.col_idx.end());
      for (auto& x : r1) ++x;
      for (auto& x : c1) ++x;
      sd::copy_host_to_device(rp1.data(), r1.data(), r1.size() * 4, stream);
      sd::copy_host_to_device(ci1.data(), c1.data(), c1.size() * 4, stream);
      sd::RawSparse raw;
      raw.format = SPARSETC_FORMAT_CSR;
      raw.rows = A.rows;
      raw.cols = A.cols;
      raw.nnz = A.nnz();
      raw.offsets = rp1.data();
      raw.indices = ci1.data();
      raw.values = v.values;
      raw.offset_type = SPARSETC_INDEX_32;
      raw.index_type = SPARSETC_INDEX_32;
      raw.base = SPARSETC_BASE_ONE;
      raw.value_type = SPARSETC_VALUE_F64;
      double ms = time_ms(stream, [&] { sd::gpu_normalize<double>(raw, SPARSETC_DUPLICATES_ERROR, ctx); });
      report("normalize CSR int32 base 1", ms, 4 * (rows + 1) + 12 * nnz + csr_bytes);

      std::vector<int32_t> rows32(static_cast<size_t>(nz));
      for (int64_t r = 0; r < A.rows; ++r)
        for (int64_t k = A.row_ptr[size_t(r)]; k < A.row_ptr[size_t(r + 1)]; ++k) rows32[size_t(k)] = int32_t(r);
      std::vector<int64_t> order(static_cast<size_t>(nz));
      std::iota(order.begin(), order.end(), int64_t(0));
      std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
      std::vector<int32_t> sr(static_cast<size_t>(nz)), sc(static_cast<size_t>(nz));
      std::vector<double> sv(static_cast<size_t>(nz));
      for (size_t k = 0; k < order.size(); ++k) {
        sr[k] = rows32[size_t(order[k])];
        sc[k] = int32_t(A.col_idx[size_t(order[k])]);
        sv[k] = A.values[size_t(order[k])];
      }
      sd::DeviceBuffer dr(sr.size() * 4, ctx), dc(sc.size() * 4, ctx), dv(sv.size() * 8, ctx);
      sd::copy_host_to_device(dr.data(), sr.data(), sr.size() * 4, stream);
      sd::copy_host_to_device(dc.data(), sc.data(), sc.size() * 4, stream);
      sd::copy_host_to_device(dv.data(), sv.data(), sv.size() * 8, stream);
      raw.format = SPARSETC_FORMAT_COO;
      raw.offsets = dr.data();
      raw.indices = dc.data();
      raw.values = dv.data();
      raw.base = SPARSETC_BASE_ZERO;
      sd::gpuconv::CooWay way = sd::gpuconv::CooWay::kRadixSort;
      sd::gpuconv::NormalizeOptions options;
      options.way = &way;
      ms = time_ms(stream, [&] { sd::gpuconv::normalize<double>(raw, SPARSETC_DUPLICATES_SUM, ctx, options); });
      // cuSPARSE's way to CSR: coosortByRow (in place, so on copies of the indices), a gather of
      // the values by its permutation, coo2csr (it has no repeats to sum).
      sd::DeviceBuffer wr(sr.size() * 4, ctx), wc(sc.size() * 4, ctx), perm(sr.size() * 4, ctx),
          sorted(sv.size() * 8, ctx), crp((A.rows + 1) * 4, ctx);
      size_t sort_bytes = 0;
      CUSPARSE_OK(
          cusparseXcoosort_bufferSizeExt(handle, m, n, nz, dr.as<const int>(), dc.as<const int>(), &sort_bytes));
      sd::DeviceBuffer sort_work(std::max<size_t>(sort_bytes, 16), ctx);
      cusparseSpVecDescr_t gathered;
      cusparseDnVecDescr_t input;
      CUSPARSE_OK(cusparseCreateSpVec(&gathered, nz, nz, perm.data(), sorted.data(), CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      CUSPARSE_OK(cusparseCreateDnVec(&input, nz, dv.data(), CUDA_R_64F));
      std::vector<int32_t> iota_host(sr.size());
      std::iota(iota_host.begin(), iota_host.end(), 0);
      sd::DeviceBuffer identity(sr.size() * 4, ctx);
      sd::copy_host_to_device(identity.data(), iota_host.data(), iota_host.size() * 4, stream);
      bool calls_ok = true;
      const double cus = time_ms(stream, [&] {
        calls_ok &= cudaMemcpyAsync(wr.data(), dr.data(), sr.size() * 4, cudaMemcpyDeviceToDevice, stream) ==
                    cudaSuccess;
        calls_ok &= cudaMemcpyAsync(wc.data(), dc.data(), sc.size() * 4, cudaMemcpyDeviceToDevice, stream) ==
                    cudaSuccess;
        calls_ok &= cudaMemcpyAsync(perm.data(), identity.data(), sr.size() * 4, cudaMemcpyDeviceToDevice, stream) ==
                    cudaSuccess;  // cusparseCreateIdentityPermutation, deprecated
        calls_ok &= cusparseXcoosortByRow(handle, m, n, nz, wr.as<int>(), wc.as<int>(), perm.as<int>(),
                                          sort_work.data()) == CUSPARSE_STATUS_SUCCESS;
        calls_ok &= cusparseGather(handle, input, gathered) == CUSPARSE_STATUS_SUCCESS;
        calls_ok &= cusparseXcoo2csr(handle, wr.as<const int>(), nz, m, crp.as<int>(), CUSPARSE_INDEX_BASE_ZERO) ==
                    CUSPARSE_STATUS_SUCCESS;
      });
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      ASSERT_TRUE(calls_ok) << "cuSPARSE's COO sort, gather or coo2csr failed";
      cusparseDestroySpVec(gathered);
      cusparseDestroyDnVec(input);
      {  // does cuSPARSE's sort leave each row's columns in order, as ours does?
        std::vector<int32_t> got(sc.size());
        sd::copy_device_to_host(got.data(), wc.data(), got.size() * 4, stream);
        bool columns_sorted = true;
        for (size_t k = 0; k < got.size() && columns_sorted; ++k) columns_sorted = got[k] == int32_t(A.col_idx[k]);
        std::printf("  (cuSPARSE's coosortByRow %s the columns of each row)\n",
                    columns_sorted ? "sorts" : "does not sort");
      }
      report(std::string("normalize COO int32 shuffled (") +
                 (way == sd::gpuconv::CooWay::kRowBuckets ? "buckets" : "radix") + ")",
             ms, 16 * nnz + csr_bytes, cus);
      options.row_buckets = false;
      ms = time_ms(stream, [&] { sd::gpuconv::normalize<double>(raw, SPARSETC_DUPLICATES_SUM, ctx, options); });
      report("  the same by the radix sort", ms, 16 * nnz + csr_bytes, cus);
    }
    // ---- values
    if (wanted("values")) {
      sd::DeviceBuffer out(size_t(nz) * 2, ctx);
      const double ms = time_ms(stream, [&] { sd::gpu_convert_values(v.values, v.nnz, SPARSETC_VALUE_F16, out.data(), ctx); });
      report("convert_values f64 -> f16", ms, 10 * nnz);
    }
  }
  cusparseDestroy(handle);
  cudaStreamDestroy(stream);
}

}  // namespace

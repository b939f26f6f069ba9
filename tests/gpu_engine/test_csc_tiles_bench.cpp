// The near-memory trade-off of the DCSR paper (§4): tiled DCSR stored offline against tiles built
// on the fly from CSC in each CTA (csc_tiled_spmm). Not a correctness test (test_cuda_core_spmm.cpp
// checks both kernels); runs only with SPARSETC_BENCH=1 on a device, e.g.
//   SPARSETC_BENCH=1 ./sparsetc_gpu_engine_tests --gtest_filter='CscTilesBench.*'
// SPARSETC_BENCH_SPECS overrides the generated matrices, SPARSETC_BENCH_NS the widths N. fp32 A, B
// and C, row-major, alpha 1, beta 0. Per matrix and N: the kernels' median times (60 event-timed
// runs after 5 warm-ups, same inputs, same process), the bytes each keeps of A (tiled DCSR:
// strip offsets, row segments, columns, values; CSC: column offsets, rows, values, windows), the
// preparation from the canonical CSR (conversion and schedule, wall clock) and the largest
// difference between the two results relative to the largest |C|.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gen/generators.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "test_cuda_core_spmm_support.hpp"

namespace {

using namespace cuda_core_test;
namespace st = sparsetc_test;

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::vector<float> download_floats(const sd::DeviceBuffer& buffer, size_t count, cudaStream_t stream) {
  std::vector<float> out(count);
  sd::copy_device_to_host(out.data(), buffer.data(), count * sizeof(float), stream);
  return out;
}

TEST(CscTilesBench, StoredTilesVersusTilesFromCsc) {
  SKIP_WITHOUT_DEVICE();
  if (!std::getenv("SPARSETC_BENCH")) GTEST_SKIP() << "set SPARSETC_BENCH=1 to time the kernels";
  const auto specs = st::env_list("SPARSETC_BENCH_SPECS", {"band:16384:64", "band:16384:512", "poisson2d5:1024",
                                                          "poisson3d27:64", "rmat:16:16", "uniform:200000:16"});
  std::vector<int64_t> ns;
  for (const std::string& s : st::env_list("SPARSETC_BENCH_NS", {"8", "32", "128"})) ns.push_back(std::stoll(s));
  cudaDeviceProp prop{};
  int device = 0;
  cudaGetDevice(&device);
  cudaGetDeviceProperties(&prop, device);
  std::printf("device: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
  std::printf("%-18s %4s %9s | %8s %8s %6s | %9s %9s %6s | %8s %8s | %8s\n", "matrix", "N", "nnz", "tiled ms", "csc ms",
              "csc/t", "tiled MB", "csc MB", "csc/t", "prep t", "prep c", "rel.diff");
  GpuHandle g;
  const sd::GpuContext context = g.gpu();
  std::vector<double> time_ratio, byte_ratio;
  for (const std::string& spec : specs) {
    const sd::CsrMatrix<double> a = sd::generate(spec, 12345);
    DeviceMatrix da = upload(g, a);
    const sd::DeviceCsr<float> csr = sd::gpu_normalize<float>(da.matrix->layout, SPARSETC_DUPLICATES_ERROR, context);
    for (int64_t n : ns) {
      const int64_t width = sd::tiled_strip_width(sd::CorePrecision::f32, n);
      auto start = std::chrono::steady_clock::now();
      const sd::DeviceTiledDcsr<float> t = sd::gpu_csr_to_tiled_dcsr(csr.view(), width, context);
      const sd::CoreTiled tiled{t.rows, t.cols, t.strip_width, t.strips(), t.row_segments, t.nnz,
                                t.strip_ptr.as<const int64_t>(), t.row_idx.as<const int32_t>(),
                                t.row_ptr.as<const int64_t>(), t.col_idx.as<const int32_t>(), t.values.data()};
      const sd::TiledSchedule tiled_schedule = sd::make_tiled_schedule(tiled, sd::CorePrecision::f32, n, context);
      cudaStreamSynchronize(g.stream);
      const double tiled_prep = elapsed_ms(start);
      start = std::chrono::steady_clock::now();
      const sd::DeviceCsc<float> c = sd::gpu_csr_to_csc(csr.view(), context);
      const sd::CoreCsc csc{c.rows, c.cols, c.nnz, c.col_ptr.as<const int64_t>(), c.row_idx.as<const int32_t>(),
                            c.values.data()};
      const sd::CscTiledSchedule csc_schedule = sd::make_csc_tiled_schedule(csc, sd::CorePrecision::f32, n, context);
      cudaStreamSynchronize(g.stream);
      const double csc_prep = elapsed_ms(start);

      Dense B(a.cols, n, SPARSETC_ORDER_ROW, SPARSETC_VALUE_F32, 0, 0);
      auto* b = reinterpret_cast<float*>(B.host.data());
      for (int64_t i = 0; i < a.cols * n; ++i)
        b[i] = float((uint32_t(uint64_t(i + 1) * 2654435761ull) >> 8) & 0xffff) / 32768.0f - 1.0f;
      B.to_device(g);
      sd::DeviceBuffer c_tiled(size_t(a.rows * n) * sizeof(float), context), c_csc(c_tiled.size(), context);
      sd::CoreDenseArgs args;
      args.n = n;
      args.B = B.device.data();
      args.ldb = n;
      args.ldc = n;
      args.C = c_tiled.data();
      const double tiled_ms = st::median_event_ms(g.stream, 5, 60, [&] {
        sd::tiled_spmm(tiled, sd::CorePrecision::f32, tiled_schedule, args, g.stream);
      });
      args.C = c_csc.data();
      const double csc_ms = st::median_event_ms(g.stream, 5, 60, [&] {
        sd::csc_tiled_spmm(csc, sd::CorePrecision::f32, csc_schedule, args, g.stream);
      });
      const std::vector<float> x = download_floats(c_tiled, size_t(a.rows * n), g.stream);
      const std::vector<float> y = download_floats(c_csc, x.size(), g.stream);
      double diff = 0, scale = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        diff = std::max(diff, std::fabs(double(x[i]) - double(y[i])));
        scale = std::max(scale, std::fabs(double(x[i])));
      }
      const double rel = scale > 0 ? diff / scale : diff;
      EXPECT_LT(rel, 1e-5) << spec << " N " << n << ": the two kernels disagree";
      const double tiled_bytes = double(t.strip_ptr.size() + t.row_idx.size() + t.row_ptr.size() + t.col_idx.size() +
                                        t.values.size() + tiled_schedule.device_bytes());
      const double csc_bytes =
          double(c.col_ptr.size() + c.row_idx.size() + c.values.size() + csc_schedule.device_bytes());
      time_ratio.push_back(csc_ms / tiled_ms);
      byte_ratio.push_back(csc_bytes / tiled_bytes);
      std::printf("%-18s %4lld %9lld | %8.4f %8.4f %5.2fx | %9.2f %9.2f %5.2fx | %8.1f %8.1f | %8.1e\n", spec.c_str(),
                  (long long)n, (long long)a.nnz(), tiled_ms, csc_ms, csc_ms / tiled_ms, tiled_bytes / 1e6,
                  csc_bytes / 1e6, csc_bytes / tiled_bytes, tiled_prep, csc_prep, rel);
      std::fflush(stdout);
    }
  }
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0.0 : std::exp(s / double(v.size()));
  };
  std::printf("geomean tiles-from-CSC / stored tiles: time %.3fx, bytes of A %.3fx (%zu cases)\n", geomean(time_ratio),
              geomean(byte_ratio), time_ratio.size());
}

}  // namespace

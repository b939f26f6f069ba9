// sparsetc_bench: cuSPARSE, cuBLAS and sparsetc on the same inputs, in one process, every result
// checked. See docs/benchmarking.md for the method and the meaning of every column.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <sparsetc/sparsetc.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/environment.hpp"
#include "harness/checked_calls.hpp"
#include "harness/inputs.hpp"
#include "harness/options.hpp"
#include "harness/output.hpp"
#include "harness/suites.hpp"
#include "harness/timing.hpp"

using namespace bench;

namespace {

constexpr size_t kCopyBytes = size_t(1) << 30;

// Handles of the run, destroyed in reverse order whatever happens.
struct Handles {
  cudaStream_t stream = nullptr;
  cusparseHandle_t cusparse = nullptr;
  cublasHandle_t cublas = nullptr;
  sparsetc_handle_t stc = nullptr, cpu = nullptr;
  ~Handles() {
    if (cpu) sparsetc_destroy(cpu);
    if (stc) sparsetc_destroy(stc);
    if (cublas) cublasDestroy(cublas);
    if (cusparse) cusparseDestroy(cusparse);
    if (stream) cudaStreamDestroy(stream);
  }
};

void create_handles(Handles& h, const Options& o) {
  BENCH_CUDA(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking));
  BENCH_CUSPARSE(cusparseCreate(&h.cusparse));
  BENCH_CUSPARSE(cusparseSetStream(h.cusparse, h.stream));
  BENCH_CUBLAS(cublasCreate(&h.cublas));
  BENCH_CUBLAS(cublasSetStream(h.cublas, h.stream));
  BENCH_STC(nullptr, sparsetc_create_with_backend(&h.stc, SPARSETC_BACKEND_GPU, o.device));
  BENCH_STC(h.stc, sparsetc_set_stream(h.stc, h.stream));
  // Inputs were validated when they were read; re-validating device matrices per variant would
  // only add setup time.
  BENCH_STC(h.stc, sparsetc_set_validation(h.stc, SPARSETC_VALIDATE_ARGUMENTS));
  BENCH_STC(nullptr, sparsetc_create_with_backend(&h.cpu, SPARSETC_BACKEND_CPU, -1));
}

void print_timing_method(std::FILE* out, const Options& o, size_t flush_bytes) {
  std::fprintf(out, "timing: median of %d runs after %d warm-up (at least %d runs when a variant's runs would exceed "
                    "%.1f s), CUDA events around each run; ",
               o.iters, o.warmup, o.min_iters, o.variant_budget_s);
  if (o.flush_l2) std::fprintf(out, "L2 evicted before every run (read of %.0f MB)\n", double(flush_bytes) / 1e6);
  else std::fprintf(out, "L2 NOT flushed (--no-flush: warm-cache numbers)\n");
  if (o.b_offset || o.c_offset)
    std::fprintf(out, "SpMM: B starts %lld and C %lld elements into their buffers (--dense-offset)\n",
                 (long long)o.b_offset, (long long)o.c_offset);
  std::fprintf(out, "checks: SpMM %d sampled rows vs float64 host reference (f32 1e-4, f16/bf16/tf32 1e-2 of "
                    "sum|a||b|), outputs NaN-poisoned; SpGEMM nnz, structure, sampled rows\n",
               o.sample_rows);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "sparsetc_bench: %s\n\n%s", e.what(), usage());
    return 2;
  }
  if (o.help) {
    std::printf("%s", usage());
    return 0;
  }

  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr,
                 "sparsetc_bench: no CUDA device (%s): nothing to measure. Run it on the GPU machine "
                 "(docs/benchmarking.md).\n",
                 e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
    return 2;
  }
  if (o.device < 0 || o.device >= devices) {
    std::fprintf(stderr, "sparsetc_bench: --device %d, but %d device(s)\n", o.device, devices);
    return 2;
  }

  std::vector<InputSpec> inputs;
  try {
    inputs = list_inputs(o);
  } catch (const std::runtime_error& err) {
    std::fprintf(stderr, "sparsetc_bench: %s\n", err.what());
    return 2;
  }

  std::vector<Result> results;
  DeviceInfo device;
  TimingConfig timing;
  timing.warmup = o.warmup;
  timing.iters = o.iters;
  timing.min_iters = o.min_iters;
  timing.budget_s = o.variant_budget_s;
  timing.flush_l2 = o.flush_l2;
  size_t flush_bytes = 0;
  std::string fatal;
  const auto start = std::chrono::steady_clock::now();
  try {
    BENCH_CUDA(cudaSetDevice(o.device));
    std::string error;
    if (!query_device(o.device, device, error)) {
      std::fprintf(stderr, "sparsetc_bench: %s\n", error.c_str());
      return 2;
    }
    Handles h;
    create_handles(h, o);
    device.copy_gbps = measure_copy_bandwidth(h.stream, kCopyBytes);
    Timer timer(h.stream, device.l2_bytes, timing);
    flush_bytes = timer.flush_bytes();

    std::printf("sparsetc_bench\n");
    print_device_info(stdout, device);
    print_timing_method(stdout, o, flush_bytes);
    std::fflush(stdout);

    Context ctx{o, device, h.stream, h.cusparse, h.cublas, h.stc, timer, device.copy_gbps, results};
    int64_t used = 0;
    for (const InputSpec& spec : inputs) {
      if (o.max_matrices > 0 && used >= o.max_matrices) break;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (o.max_seconds > 0 && elapsed > o.max_seconds) {
        std::fprintf(stderr, "--max-seconds %.0f reached: %s and later inputs not run\n", o.max_seconds,
                     spec.name.c_str());
        std::printf("\nnote: --max-seconds reached after %.0f s; inputs from %s on were not run\n", elapsed,
                    spec.name.c_str());
        break;
      }
      MatrixInput input;
      input.name = spec.name;
      try {
        input.A = load_input(h.cpu, spec, o);
      } catch (const std::runtime_error& err) {
        std::fprintf(stderr, "skipping %s: %s\n", spec.name.c_str(), err.what());
        continue;
      }
      if (input.A.nnz() < o.min_nnz) continue;
      ++used;
      std::fprintf(stderr, "[%lld] %s: %lld x %lld, %lld nonzeros\n", (long long)used, spec.name.c_str(),
                   (long long)input.A.rows, (long long)input.A.cols, (long long)input.A.nnz());
      if (o.spmm) run_spmm_suite(ctx, input);
      if (o.spgemm) run_spgemm_suite(ctx, input);
      if (o.convert) run_convert_suite(ctx, input);
    }
  } catch (const FatalError& err) {
    fatal = err.what();
  } catch (const VariantError& err) {  // setting up the run itself failed
    std::fprintf(stderr, "sparsetc_bench: %s\n", err.what());
    return 2;
  } catch (const std::exception& err) {  // outside any variant: stop, but report what ran
    fatal = std::string("unexpected exception: ") + err.what();
  }

  compute_speedups(results);
  print_summary(stdout, results);
  print_problems(stdout, results);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n%zu results in %.0f s\n", results.size(), seconds);
  int status = 0;
  for (const Result& r : results)
    if (r.provider == "sparsetc" && r.status == Status::wrong) status = 1;
  std::string error;
  if (!o.csv.empty() && !write_csv(o.csv, results, device.copy_gbps, error))
    std::fprintf(stderr, "sparsetc_bench: %s\n", error.c_str());
  if (!o.json.empty() && !write_json(o.json, device, o, timing, flush_bytes, results, error))
    std::fprintf(stderr, "sparsetc_bench: %s\n", error.c_str());
  if (!fatal.empty()) {
    std::fprintf(stderr, "sparsetc_bench: stopped: %s (results so far were written)\n", fatal.c_str());
    return 3;
  }
  return status;
}
